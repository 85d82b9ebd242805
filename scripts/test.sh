#!/usr/bin/env bash
# Runs every test: installs what is missing (scripts/setup.sh, and the Python
# environment: scripts/setup-python.sh), builds, then ctest runs the unit
# tests, the lit suite, the Python package's tests (build tree and pip-built
# wheel) and the format check; then the sanitizer pass
# (scripts/test-sanitizers.sh: our C++ built with ASan + UBSan into
# build-sanitize/, the lit suite and the unit tests but the NVRTC compile
# matrices). Any failure fails the command.
#   scripts/test.sh [--no-mlir] [--no-sanitize]
# --no-sanitize skips the sanitizer pass (for quick local runs; CI runs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sanitize=1
args=()
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) sanitize=0 ;;
    *) args+=("$arg") ;;
  esac
done
"$root/scripts/setup.sh" "${args[@]}"
# The Python package's build and test environment (build/pyenv).
python="$("$root/scripts/setup-python.sh" | tail -n 1)"
"$root/scripts/build.sh" "${args[@]}" -DFP8_ENABLE_PYTHON=ON \
  "-DPython_EXECUTABLE=$python"
build="${BUILD_DIR:-$root/build}"
cd "$build"
echo "test.sh: the GPU tests (ctest label 'gpu') need an H100 and run through"
echo "         scripts/gpu-check.sh on the GPU machine; they are excluded here."
ctest --output-on-failure -j "$(nproc)" --timeout 1800 -LE gpu
if [ "$sanitize" = 1 ]; then
  "$root/scripts/test-sanitizers.sh" "${args[@]}"
else
  echo "test.sh: --no-sanitize: the sanitizer pass (scripts/test-sanitizers.sh) is skipped."
fi
