#!/usr/bin/env bash
# The toolkit as a CMake package: installs BUILD_DIR into a temporary prefix,
# configures and builds examples/cpp (a C++ program using fp8::quantize and
# fp8::gemm through find_package(fp8)) against it, and runs it: on a machine
# without a GPU it must exit 1 with the driver's message, with one 0. With
# --subdirectory, examples/cpp also builds with the toolkit's sources as a
# subdirectory (add_subdirectory: the runtime compiled again, a few minutes).
#   scripts/check-install.sh BUILD_DIR [--subdirectory]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:?usage: check-install.sh BUILD_DIR [--subdirectory]}" && pwd)"
subdirectory="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
test -f "$tmp/prefix/lib/cmake/fp8/fp8Config.cmake"
test -f "$tmp/prefix/include/runtime/Gemm.h"
cmake -S "$root/examples/cpp" -B "$tmp/example" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log"
cmake --build "$tmp/example" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }

if [ "$subdirectory" = --subdirectory ]; then
  cmake -S "$root/examples/cpp" -B "$tmp/sub" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DFP8_SOURCE_DIR="$root" >"$tmp/sub-configure.log"
  cmake --build "$tmp/sub" --target quantize-gemm >"$tmp/sub-build.log" 2>&1 ||
    { cat "$tmp/sub-build.log"; exit 1; }
  echo "check-install.sh: examples/cpp builds with the toolkit as a subdirectory"
fi

set +e
"$tmp/example/quantize-gemm" 64 256 512 >"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
set -e
cat "$tmp/run.out" "$tmp/run.err"
if [ $rc = 0 ]; then
  echo "check-install.sh: the installed package builds examples/cpp, which ran on the GPU"
elif [ $rc = 1 ] && grep -q "no CUDA driver found" "$tmp/run.err"; then
  echo "check-install.sh: the installed package builds examples/cpp, which says there is no GPU here"
else
  echo "check-install.sh: examples/cpp/quantize-gemm exited $rc" >&2
  exit 1
fi
