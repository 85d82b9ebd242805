#!/usr/bin/env bash
# Configures (once) and builds the project into build/ (tools in build/bin).
#   scripts/build.sh [--no-mlir] [extra cmake -D options...]
# BUILD_DIR overrides the build directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

mlir=ON
extra=()
for arg in "$@"; do
  case "$arg" in
    --no-mlir) mlir=OFF ;;
    *) extra+=("$arg") ;;
  esac
done

gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
linker=()
[ -x /usr/lib/llvm-22/bin/ld.lld ] && linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld)
if [ -x /usr/lib/llvm-22/bin/ld.lld ] && ! command -v ld.lld >/dev/null 2>&1; then
  export PATH="/usr/lib/llvm-22/bin:$PATH"
fi

# Configured once; again when the MLIR choice changes or options are given.
if [ ! -f "$build/CMakeCache.txt" ] || ! grep -q "FP8_ENABLE_MLIR:BOOL=$mlir" "$build/CMakeCache.txt" || [ "${#extra[@]}" -gt 0 ]; then
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DFP8_ENABLE_MLIR="$mlir" "${linker[@]}" "${extra[@]}"
fi
jobs="${FP8_BUILD_JOBS:-$(nproc)}"
cmake --build "$build" -j "$jobs"
