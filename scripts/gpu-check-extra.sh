#!/usr/bin/env bash
# The pipeline's GPU check, called by scripts/gpu-check.sh on the GPU machine
# (CUDA 13, CMake, no MLIR): every example's committed plan
# (examples/plans/*.sm_90a.plan.json, compiled by fp8-opt + fp8-translate on
# a machine with MLIR) runs under fp8-run:
#   --verify at M=512: every step against the CPU oracle on the step's own
#     GPU inputs, every output against the whole plan on the CPU oracle
#     (within the bound derived from the plan's recipe) and against the
#     unquantized graph (the recipe's quantization error, within the bounds
#     stated here: 1e-3, 3e-3 for the E5M2 example, the derived one for the
#     MoE block, see examples/README.md);
#   --bench at M=4096 (the weight gradients at M=32768 rows: the forward's
#     4096 tokens, each routed to 8 experts): every step (CUDA events,
#     median of 20) and the same GEMMs through cuBLASLt, then the run phase
#     as one CUDA graph launch;
#   --bench at M=16 for mlp, attention-proj, moe and llama-layer (decode:
#     launch-bound),
#     the steps launched back to back against one graph launch;
# mlp and llama-layer also as compiled with fuse-epilogue=true
# (examples/plans/*.fused.sm_90a.plan.json: gate and up one GEMM whose
# epilogue computes the SwiGLU and quantizes it);
# and the generated models' plans (test/models/Inputs) under --verify at
# M=512 with the bounds derived from each plan.
#
#   scripts/gpu-check-extra.sh BUILD_DIR OUTDIR SUMMARY_FILE
#
# Writes OUTDIR/pipeline-<example>-{verify,bench}.{json,log} and
# OUTDIR/pipeline.json, appends a table to SUMMARY_FILE. One failing
# example does not stop the others; a hung kernel is reported by fp8-run
# (its stream waits time out) and, as a last resort, by `timeout`. Exit
# status: non-zero when any verification or run failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: gpu-check-extra.sh BUILD_DIR OUTDIR SUMMARY_FILE}"
out="${2:?usage: gpu-check-extra.sh BUILD_DIR OUTDIR SUMMARY_FILE}"
summary="${3:?usage: gpu-check-extra.sh BUILD_DIR OUTDIR SUMMARY_FILE}"
run="$build/bin/fp8-run"
mkdir -p "$out"
status=0

log() { echo "$*" | tee -a "$summary"; }

log ""
log "## Pipeline examples (fp8-run on examples/plans, verify at M=512, bench at M=4096, the weight gradients at M=32768; decode at M=16)"
log ""
if [ ! -x "$run" ]; then
  log "- fp8-run: not built ($run missing)"
  exit 1
fi

# verify NAME PLAN [BOUND]: fp8-run --verify at M=512, the quantization-error
# bound stated when given, else the one derived from the plan.
verify() {
  local ex="$1" plan="$2" t0 rc
  local stated=()
  [ -n "${3:-}" ] && stated=(--similarity-bound "$3")
  t0=$(date +%s)
  timeout 900 "$run" "$plan" --dim M=512 --random --verify --no-outputs \
      "${stated[@]}" --json "$out/pipeline-$ex-verify.json" \
      >"$out/pipeline-$ex-verify.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    status=1
    log "- $ex verify: FAILED (exit $rc, $(( $(date +%s) - t0 )) s; pipeline-$ex-verify.log):"
    grep -E 'FAILED|fp8-run:' "$out/pipeline-$ex-verify.log" | head -8 | tee -a "$summary"
  fi
}

# example:similarity bound[:bench M] (no bound: the one derived from the
# plan; the MoE block's two quantizations on its worst path give 3.5e-3;
# bench M 4096 unless stated)
examples=("mlp:1e-3" "attention-proj:1e-3" "grad-projection:3e-3" "moe:"
          "moe-wgrad::32768" "llama-layer:" "mlp.fused:1e-3" "llama-layer.fused:")
for entry in "${examples[@]}"; do
  IFS=: read -r ex bound bench_m <<<"$entry"
  plan="$root/examples/plans/$ex.sm_90a.plan.json"
  verify "$ex" "$plan" "$bound"
  t0=$(date +%s)
  timeout 900 "$run" "$plan" --dim "M=${bench_m:-4096}" --random --bench --iters 20 \
      --no-outputs --json "$out/pipeline-$ex-bench.json" \
      >"$out/pipeline-$ex-bench.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    status=1
    log "- $ex bench: FAILED (exit $rc, $(( $(date +%s) - t0 )) s; pipeline-$ex-bench.log):"
    grep -E 'fp8-run:' "$out/pipeline-$ex-bench.log" | head -5 | tee -a "$summary"
  fi
done

# Decode (M = 16): launch-bound, so the run phase as one CUDA graph against
# the steps launched back to back; then again with every step in the
# stream's order (--serial-steps: no step overlaps the one before).
decode=("mlp" "attention-proj" "moe" "llama-layer" "mlp.fused"
        "llama-layer.fused")
for ex in "${decode[@]}"; do
  for serial in "" "-serial"; do
    timeout 300 "$run" "$root/examples/plans/$ex.sm_90a.plan.json" --dim M=16 \
        --random --bench --iters 50 --no-outputs ${serial:+--serial-steps} \
        --json "$out/pipeline-$ex-decode$serial.json" \
        >"$out/pipeline-$ex-decode$serial.log" 2>&1
    rc=$?
    if [ $rc != 0 ]; then
      status=1
      log "- $ex decode bench${serial:+ (--serial-steps)}: FAILED (exit $rc; pipeline-$ex-decode$serial.log)"
    fi
  done
done

# Generated models (test/models/Inputs, see test/models/plans.test): deeper
# plans, verified at M=512 rows (per expert for the batched FFN) with the
# bounds derived from each plan.
models=("llama-layer" "moe-ffn" "dense-8")
for ex in "${models[@]}"; do
  verify "model-$ex" "$root/test/models/Inputs/$ex.sm_90a.plan.json"
done

# The tables, from the JSON fp8-run wrote.
if ! python3 - "$out" "${examples[@]}" "${models[@]/#/model-}" >>"$summary" <<'EOF'
import json, os, sys

out, examples = sys.argv[1], [e.split(":")[0] for e in sys.argv[2:]]

def load(ex, kind):
    try:
        with open(os.path.join(out, f"pipeline-{ex}-{kind}.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def fmt(x, spec=".3g"):
    return "n/a" if x is None or x < 0 else format(x, spec)

rows, merged = [], {}
print()
print("| example | verify | steps bit-exact / GEMMs within bound | outputs: similarity to the oracle (bound); to the unquantized graph (bound), max abs, max rel | total ms | as one CUDA graph ms | our GEMMs ms | total / GEMMs | same GEMMs, cuBLASLt ms | cuBLASLt / ours |")
print("|---|---|---|---|---|---|---|---|---|---|")
for ex in examples:
    v, b = load(ex, "verify"), load(ex, "bench")
    merged[ex] = {"verify": v, "bench": b}
    vs = (v or {}).get("verify", {})
    steps = vs.get("steps", [])
    exact = sum(1 for s in steps if s["exact"] and s["passed"])
    gemm_ok = sum(1 for s in steps if not s["exact"] and s["passed"])
    n_exact = sum(1 for s in steps if s["exact"])
    n_gemm = len(steps) - n_exact
    outs = "; ".join(
        f"{o['name']} {fmt(o.get('vs_oracle', {}).get('similarity'))} "
        f"({fmt(o.get('vs_oracle', {}).get('bound'))}); "
        f"{fmt(o['vs_reference']['similarity'])} ({fmt(o['vs_reference'].get('bound'))}), "
        f"{fmt(o['vs_reference']['max_abs'])}, {fmt(o['vs_reference']['max_rel'])}"
        for o in vs.get("outputs", []))
    verdict = "PASSED" if vs.get("passed") else ("FAILED" if v else "did not run")
    bb = (b or {}).get("bench", {})
    ours, peer = bb.get("gemm_ms"), bb.get("cublaslt_gemm_ms")
    ratio = f"{peer / ours:.2f}x" if ours and peer else "n/a"
    total = bb.get("total_ms")
    over = f"{total / ours:.2f}x" if ours and total else "n/a"
    print(f"| {ex} | {verdict} | {exact}/{n_exact}, {gemm_ok}/{n_gemm} | {outs or 'n/a'} | "
          f"{fmt(total, '.4f')} | {fmt(bb.get('graph_ms'), '.4f')} | "
          f"{fmt(ours, '.4f')} | {over} | {fmt(peer, '.4f')} | {ratio} |")
for ex in examples:
    bb = ((merged[ex]["bench"] or {}).get("bench") or {})
    if not bb:
        continue
    dims = ", ".join(f"{k}={v}" for k, v in
                     ((merged[ex]["bench"] or {}).get("dims") or {}).items())
    print(f"\n{ex} at {dims or 'M=4096'}, per step (median of {bb.get('iters')}):\n")
    print("| step | kind | ours ms | TFLOP/s, or GB/s (% of DRAM bandwidth) | cuBLASLt | cuBLASLt ms | cuBLASLt BF16 ms |")
    print("|---|---|---|---|---|---|---|")
    for s in bb.get("steps", []):
        if s["kind"] == "gemm":
            print(f"| {s['step']} | gemm {s['m']}x{s['n']}x{s['k']} | {s['ms']:.4f} | {s['tflops']:.0f} | "
                  f"{s['cublaslt_kind']} | {fmt(s['cublaslt_ms'], '.4f')} | {fmt(s['cublaslt_bf16_ms'], '.4f')} |")
        elif "gb_per_s" in s:
            print(f"| {s['step']} | {s['kind']} | {s['ms']:.4f} | "
                  f"{s['gb_per_s']:.0f} GB/s ({s['dram_percent']:.0f}%) | | | |")
        else:
            print(f"| {s['step']} | {s['kind']} | {s['ms']:.4f} | | | | |")
with open(os.path.join(out, "pipeline.json"), "w") as f:
    json.dump(merged, f, indent=2)
EOF
then
  log "- the pipeline tables could not be written (python3 needed); see $out/pipeline-*.log"
  status=1
fi
if ! python3 - "$out" "${decode[@]}" >>"$summary" <<'EOF'
import json, os, sys
out, examples = sys.argv[1], sys.argv[2:]
def fmt(x, spec=".4f"):
    return "n/a" if x is None or x < 0 else format(x, spec)
print()
print("Decode, M=16 (median of 50): the run phase launched step by step and as one CUDA graph;")
print("the graph again with every step in the stream's order (--serial-steps)")
print()
print("| example | steps back to back ms | sum of the steps ms | as one CUDA graph ms | as a graph, --serial-steps ms |")
print("|---|---|---|---|---|")
def bench(ex, suffix):
    try:
        with open(os.path.join(out, f"pipeline-{ex}-decode{suffix}.json")) as f:
            return json.load(f).get("bench", {})
    except (OSError, ValueError):
        return {}
def graph(b):
    g = b.get("graph_ms")
    return fmt(g) if g is not None else "n/a (" + (b.get("graph_note") or "did not run") + ")"
for ex in examples:
    b, s = bench(ex, ""), bench(ex, "-serial")
    print(f"| {ex} | {fmt(b.get('total_ms'))} | {fmt(b.get('step_sum_ms'))} | {graph(b)} | {graph(s)} |")
EOF
then
  log "- the decode table could not be written (python3 needed); see $out/pipeline-*-decode.log"
  status=1
fi
exit $status
