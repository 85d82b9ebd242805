#!/usr/bin/env bash
# The main job on an example: compiles examples/mlp.mlir (a Llama-2 7B FFN
# whose three projections carry the DeepSeek-V3 FP8 recipe) for sm_90a,
# shows the compiled IR, the plan and the kernels' CUDA, NVRTC-compiles the
# kernels to cubins, all without a GPU, and where a GPU is present runs the
# plan and verifies it against the CPU oracle and the unquantized graph.
# Installs what is missing and builds first (idempotent; fast once built).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
build="${BUILD_DIR:-$root/build}"
bin="$build/bin"
work="$build/example"
mkdir -p "$work"
example="$root/examples/mlp.mlir"

echo "== 1. fp8-opt --fp8-compile=arch=sm_90a examples/mlp.mlir"
echo "   (quantize the annotated matmuls, check them for sm_90a, choose tiles,"
echo "    give every step its kernel; kernel specs elided here, full IR in"
echo "    $work/mlp.sm_90a.mlir)"
"$bin/fp8-opt" "$example" --fp8-compile=arch=sm_90a --mlir-print-debuginfo \
  -o "$work/mlp.sm_90a.mlir"
"$bin/fp8-opt" "$example" --fp8-compile=arch=sm_90a | python3 -c '
import re, sys
text = sys.stdin.read()
def elide(t, key):
    out, i = [], 0
    while True:
        j = t.find(key + "{", i)
        if j < 0:
            return "".join(out) + t[i:]
        out.append(t[i:j + len(key)] + "{...}")
        depth, k = 0, j + len(key)
        while True:
            depth += {"{": 1, "}": -1}.get(t[k], 0)
            k += 1
            if depth == 0:
                break
        i = k
for key in ("spec = ", "#fp8.gemm<"):
    text = elide(text, key)
print(text.rstrip())'

echo
echo "== 2. fp8-translate --fp8-to-plan: the plan fp8-run executes"
"$bin/fp8-translate" --fp8-to-plan "$work/mlp.sm_90a.mlir" -o "$work/mlp.sm_90a.plan.json"
python3 - "$work/mlp.sm_90a.plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print(f"function @{p['function']} for {p['arch']}, dynamic dims {p['dims']} "
      f"(full plan: {sys.argv[1]})")
print("buffers:")
for b in p["buffers"]:
    print(f"  {b['name']:<10} {b['role']:<8} {b['dtype']:<7} {b['shape']}")
print("steps:")
for s in p["steps"]:
    print(f"  {s['name']:<14} {s['phase']:<8} {','.join(s['inputs']):<22} -> "
          f"{','.join(s['outputs']):<10} {s['kernel']}")
print("reference (the unquantized graph --verify compares with):")
for r in p["reference"]:
    print(f"  {r['out']} = {r['op']}({', '.join(r['inputs'])})")
PY

echo
echo "== 3. fp8-translate --fp8-to-cuda: the kernels (first lines of each;"
echo "   all of them in $work/mlp.sm_90a.cu)"
"$bin/fp8-translate" --fp8-to-cuda "$work/mlp.sm_90a.mlir" -o "$work/mlp.sm_90a.cu"
awk '/^\/\/ ===== kernel/ { n = 0; print ""; }
     { if (n++ < 14) print }' "$work/mlp.sm_90a.cu"

echo
echo "== 4. fp8-run --compile-only: NVRTC, through the kernel cache (no GPU)"
"$bin/fp8-run" "$work/mlp.sm_90a.plan.json" --dim M=4096 --compile-only

echo
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== 5. fp8-run --verify on the GPU (M=512): every step and the output"
  echo "   against the CPU oracle, the recipe's error against the unquantized graph"
  "$bin/fp8-run" "$work/mlp.sm_90a.plan.json" --dim M=512 --random --verify \
    --outputs "$work/outputs"
else
  echo "== 5. no GPU here: the plan compiled, nothing ran. On the GPU machine:"
  echo "   fp8-run examples/plans/mlp.sm_90a.plan.json --dim M=512 --verify"
  echo "   Here, the CPU oracle runs it (slow: 135M weight elements):"
  echo "   fp8-run $work/mlp.sm_90a.plan.json --dim M=16 --cpu --verify"
fi
