#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then ctest runs the unit
# tests, the lit suite and the format check; then the sanitizer pass
# (scripts/test-sanitizers.sh: our code built with ASan + UBSan into
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
"$root/scripts/build.sh" "${args[@]}"
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
