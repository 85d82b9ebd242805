#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then ctest runs the unit
# tests, the lit suite and the format check. Any failure fails the command.
#   scripts/test.sh [--no-mlir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh" "$@"
"$root/scripts/build.sh" "$@"
build="${BUILD_DIR:-$root/build}"
cd "$build"
echo "test.sh: the GPU tests (ctest label 'gpu') need an H100 and run through"
echo "         scripts/gpu-check.sh on the GPU machine; they are excluded here."
ctest --output-on-failure -j "$(nproc)" --timeout 1800 -LE gpu
