#!/usr/bin/env bash
# The main job on an example: installs what is missing, builds, and runs the
# toolkit on examples/. (Grows with the pipeline: see README.)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
bin="${BUILD_DIR:-$root/build}/bin"
echo "== fp8-opt: parse, verify and print examples/recipes.mlir"
"$bin/fp8-opt" "$root/examples/recipes.mlir"
