"""pytest setup: the markers `gpu` (tests that need the H100:
scripts/gpu-check.sh runs them with -m gpu) and `nogpu` (tests of a machine
without a GPU: CI runs every test but the gpu ones), and the repository
root."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs an sm_90a GPU (scripts/gpu-check.sh runs these)")
    config.addinivalue_line(
        "markers", "nogpu: checks a machine without a GPU driver (CI's)")


@pytest.fixture
def root():
    return ROOT
