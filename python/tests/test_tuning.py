"""The tuning database and tuning on first use from Python: argument checks,
and that nothing is tuned (or written) for GEMMs on the CPU oracle. The GPU
side (a GEMM tuned at its first launch) is in test_gpu.py."""

import numpy as np
import pytest

import fp8kit
from fp8kit import Recipe


@pytest.fixture(autouse=True)
def tuning_off():
    yield
    fp8kit.stop_tuning_on_first_use()
    fp8kit.set_tuning_database(None)


def test_iters_out_of_range_is_refused():
    for bad in (0, 1001):
        with pytest.raises(ValueError, match=r"fp8kit.tune_on_first_use: "
                           r"expected iters in \[1, 1000\], found " + str(bad)):
            fp8kit.tune_on_first_use(iters=bad)


def test_a_missing_database_is_refused(tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(ValueError, match="fp8kit.set_tuning_database: .*missing.json"):
        fp8kit.set_tuning_database(str(missing))


def test_a_broken_database_to_merge_into_is_refused(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": 2, "entries": [')
    with pytest.raises(ValueError, match="fp8kit.tune_on_first_use: .*broken.json"):
        fp8kit.tune_on_first_use(str(broken))


def test_cpu_gemms_are_not_tuned(tmp_path):
    db = tmp_path / "tuned.json"
    fp8kit.tune_on_first_use(str(db), iters=3)
    r = Recipe.preset("deepseek")
    rng = np.random.default_rng(3)
    a = fp8kit.quantize(rng.standard_normal((7, 256)).astype(np.float32), r.a)
    b = fp8kit.quantize(rng.standard_normal((128, 256)).astype(np.float32), r.b)
    d = fp8kit.gemm(a.codes, a.scales, b.codes, b.scales, r)
    assert d.shape == (7, 128)
    assert not db.exists()
