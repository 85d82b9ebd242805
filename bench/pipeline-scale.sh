#!/usr/bin/env bash
# The compiler's time at model scale: a graph of 1000 matmuls (200 dense
# layers of scripts/gen-model.py, hidden 256) through fp8-opt --fp8-compile
# and fp8-translate --fp8-to-plan, the median of five runs of each (wall
# clock, this machine). The bar: the whole pipeline in <= 1 s on the 2-core
# CPU machine.
#   bench/pipeline-scale.sh [BUILD_DIR] [LAYERS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${BUILD_DIR:-$root/build}}"
layers="${2:-200}"
for t in fp8-opt fp8-translate; do
  [ -x "$build/bin/$t" ] || { echo "pipeline-scale: no $build/bin/$t (run scripts/build.sh)" >&2; exit 2; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 "$root/scripts/gen-model.py" --layers "$layers" > "$tmp/model.mlir"
matmuls=$(grep -c 'linalg.matmul' "$tmp/model.mlir")

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_cmd() { # prints seconds
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null
  t1=$(date +%s%N)
  awk -v ns=$((t1 - t0)) 'BEGIN {printf "%.4f\n", ns / 1e9}'
}
opt=() trans=()
for i in 1 2 3 4 5; do
  opt+=("$(time_cmd "$build/bin/fp8-opt" "$tmp/model.mlir" --fp8-compile=arch=sm_90a -o "$tmp/compiled.mlir")")
  trans+=("$(time_cmd "$build/bin/fp8-translate" --fp8-to-plan "$tmp/compiled.mlir" -o "$tmp/plan.json")")
done
o=$(printf '%s\n' "${opt[@]}" | median)
t=$(printf '%s\n' "${trans[@]}" | median)
total=$(awk -v a="$o" -v b="$t" 'BEGIN {printf "%.4f", a + b}')
steps=$(grep -c '"kind": "gemm"' "$tmp/plan.json")
printf 'pipeline-scale: %d matmuls (%d layers), %d GEMM steps in the plan, %d cores\n' \
  "$matmuls" "$layers" "$steps" "$(nproc)"
printf '  fp8-opt --fp8-compile=arch=sm_90a   %.3f s (median of 5)\n' "$o"
printf '  fp8-translate --fp8-to-plan         %.3f s (median of 5)\n' "$t"
printf '  total                               %.3f s (bar: 1 s) %s\n' "$total" \
  "$(awk -v x="$total" 'BEGIN {print (x <= 1) ? "met" : "NOT MET"}')"
