#!/usr/bin/env bash
# Everything that needs the GPU, in one run, on a machine with CUDA 13, CMake,
# Ninja and g++ only (no MLIR, no network): builds with FP8_ENABLE_MLIR=OFF,
# runs the CPU unit tests of that build, every GPU test (against the CPU
# oracle), compute-sanitizer memcheck on small shapes, and the benchmarks
# against cuBLASLt (dense, and grouped against a per-group loop), the
# memory-bound steps against the DRAM bandwidth; writes JSON
# results, the chart and summary.md into the folder given as the argument
# (default gpu-results/).
#
#   scripts/gpu-check.sh [OUTDIR]
#
# GPU_CHECK_STEPS selects steps (default: all of build,cpu,gpu,memcheck,
# bench,bench-per-tensor,grouped,memory,heldout,tune,python,extra); a later run with other steps reuses the build
# and appends to summary.md. The step training (not in the default) records
# every candidate's time on the bench's and the training shapes, the data a
# refit of the tile heuristic fits. Exit status: non-zero when any test fails or a
# benchmark cannot run.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/gpu-results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="${BUILD_DIR:-$root/build-gpu}"
summary="$out/summary.md"
export FP8_CACHE_DIR="${FP8_CACHE_DIR:-$build/jit-cache}"
steps="${GPU_CHECK_STEPS:-build,cpu,gpu,memcheck,bench,bench-per-tensor,grouped,memory,heldout,tune,python,extra}"
status=0
want() { case ",$steps," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

log() { echo "$*" | tee -a "$summary"; }
want build && : > "$summary"
log "# GPU check ($(date -u +%Y-%m-%dT%H:%MZ); steps: $steps)"
log ""
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  log "no NVIDIA GPU here (nvidia-smi finds none): this script runs on the GPU machine"
  exit 1
fi
log "- device: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
log "- CUDA: $(nvcc --version 2>/dev/null | tail -1)"

# 1. Build (runtime only: no MLIR on this machine).
if want build; then
t0=$(date +%s)
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
if ! { cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
         -DFP8_ENABLE_MLIR=OFF >"$out/build.log" 2>&1 &&
       cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1; }; then
  log "- build: FAILED (see build.log)"
  tail -30 "$out/build.log"
  exit 1
fi
log "- build (FP8_ENABLE_MLIR=OFF): $(( $(date +%s) - t0 )) s"
fi
[ -x "$build/bin/fp8-gpu-tests" ] || { log "- no build in $build: run the build step first"; exit 1; }

# 2. CPU unit tests of this build.
if ! want cpu; then :
elif (cd "$build" && ctest -LE gpu -j "$(nproc)" --timeout 900 --output-on-failure >"$out/cpu-tests.log" 2>&1); then
  log "- CPU unit tests: $(grep -E 'tests passed' "$out/cpu-tests.log" | tail -1)"
else
  log "- CPU unit tests: FAILED ($(grep -E 'tests passed|tests failed' "$out/cpu-tests.log" | tail -1))"
  status=1
fi

# 3. GPU tests against the oracle.
if want gpu; then
t0=$(date +%s)
if "$build/bin/fp8-gpu-tests" --gtest_output="json:$out/gpu-tests.json" >"$out/gpu-tests.log" 2>&1; then
  gres="passed"
else
  gres="FAILED"
  status=1
fi
ncase=$(grep -c '^\[case\]' "$out/gpu-tests.log")
nfail=$(grep -c '^\[case\] FAIL' "$out/gpu-tests.log")
log "- GPU tests: $gres ($(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/gpu-tests.log" | head -1 | sed 's/\[ *//;s/ *\]//'); $ncase GEMM cases checked, $nfail failed; $(( $(date +%s) - t0 )) s)"
if [ "$nfail" != 0 ] || [ "$gres" != passed ]; then
  grep -E '^\[case\] FAIL|Failure' "$out/gpu-tests.log" | head -20 | tee -a "$summary"
fi
worst_sim=$(grep '^\[case\]' "$out/gpu-tests.log" | sed -n 's/.*similarity to the unquantized product \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
worst_err=$(grep '^\[case\]' "$out/gpu-tests.log" | sed -n 's/.*max |d - emulated| \/ max |emulated| = \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
log "  - worst similarity to the unquantized product: $worst_sim (bound 1e-3; 4e-3 with an E5M2 operand)"
log "  - worst max |d - emulated| / max |emulated|: $worst_err (bound 8e-3 bf16, 2e-3 f32)"
fi

# 4. compute-sanitizer memcheck on small shapes.
if ! want memcheck; then :
elif command -v compute-sanitizer >/dev/null 2>&1; then
  # --report-api-errors no: the bad-argument test probes host pointers with
  # cuPointerGetAttribute on purpose; only device memory errors count here.
  if compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 \
       "$build/bin/fp8-gpu-tests" \
       --gtest_filter='GemmGpu.DeepSeekRecipeSquare:GemmGpu.AccumulateIntoC:GemmGpu.RefusesBadArgumentsBeforeLaunch:GemmGpu.IrregularPromotionIntervals:GemmGpu.PromotionGroupingMatchesItsInterval:GemmGpu.EveryAcceptedRecipeClass:GroupedGemmGpu.ContiguousEdgeCases:GroupedGemmGpu.MaskedEdgeCases:GroupedGemmGpu.ContiguousRaggedN:PlanVerifyGpu.*' \
       >"$out/memcheck.log" 2>&1; then
    log "- compute-sanitizer memcheck (small shapes, incl. ragged and bad arguments, every recipe class, the irregular promotion intervals, grouped GEMMs' edge cases, the plan verdict): clean ($(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1))"
  else
    log "- compute-sanitizer memcheck: FAILED ($(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1))"
    status=1
  fi
else
  log "- compute-sanitizer: not installed, memcheck skipped"
fi

# An fp8-bench run: its arguments after the first three, its output in
# $out/NAME.json and NAME.log. The log's lines matching KEEP (grep -E; ''
# keeps all but the device line) go under the heading TITLE in the summary;
# a failure puts the log's tail there instead, fails the check and returns 1.
bench_step() { # NAME TITLE KEEP [fp8-bench arguments...]
  local name="$1" title="$2" keep="$3"
  shift 3
  if "$build/bin/fp8-bench" "$@" --json "$out/$name.json" >"$out/$name.log" 2>&1; then
    log ""
    log "## $title"
    log ""
    log '```'
    grep -vE '^device:' "$out/$name.log" | grep -E "$keep" | tee -a "$summary" >/dev/null
    log '```'
  else
    log "- $title: FAILED"
    tail -20 "$out/$name.log" | tee -a "$summary"
    status=1
    return 1
  fi
}

# 5. The benchmark against cuBLASLt on the bench shapes, and its chart; then
# the same shapes with per-tensor scales (the per-tensor recipe, one f32
# scale per operand, promotion every 128) against cuBLASLt's per-tensor FP8
# GEMM, the peer a per-tensor user would otherwise call.
rows=' x |^M |^[0-9]+ |^JIT'
if want bench &&
   bench_step bench "fp8-bench (TFLOP/s; L2 flushed; median of 30)" "$rows"      --shapes "$root/bench/shapes.json" --iters 30; then
  if python3 "$root/scripts/plot-bench.py" "$out/bench.json" "$out/bench.png" >>"$out/bench.log" 2>&1; then
    log "- chart: bench.png"
  else
    log "- chart: not drawn (python3 with matplotlib needed; see bench.log)"
  fi
fi
want bench-per-tensor &&
  bench_step bench-per-tensor "fp8-bench --recipe per-tensor (TFLOP/s; L2 flushed; median of 30)" \
    "$rows" --shapes "$root/bench/shapes.json" --iters 30 --recipe per-tensor

# 5b. The grouped (MoE) GEMMs against a loop of cuBLASLt calls, one per
# group.
want grouped &&
  bench_step grouped-bench "fp8-bench --grouped (TFLOP/s of valid rows; L2 flushed; median of 20)" \
    '' --grouped --shapes "$root/bench/shapes.json" --iters 20

# 5c. The memory-bound steps (every quantize form, the transpose, an add) on
# one 128 MiB tensor, each checked against the oracle: GB/s, % of DRAM.
want memory &&
  bench_step memory-bound "fp8-bench --memory-bound (L2 flushed; median of 20)" \
    '' --memory-bound --iters 20

# 5d. The held-out shapes (bench/heldout.json: other models' GEMMs and odd
# sizes, which the tile heuristic is never fitted to) with the heuristic's
# tiles; then (step tune) fp8-tune measures every candidate of each into a
# fresh tuning database, and fp8-bench runs them again with its tiles.
# The cold-compile figures are the bench step's (--no-jit: three cold
# compiles of each of 24 kernels would add ~30 s a run).
heldout=(--shapes "$root/bench/heldout.json" --iters 30 --no-jit)
heldout_rows='^M |^[0-9]+ |^all |^lowest'
want heldout &&
  FP8_TUNING_DB= bench_step heldout \
    "Held-out shapes, the heuristic's tiles (fp8-bench; L2 flushed; median of 30)" \
    "$heldout_rows" "${heldout[@]}"
if want tune; then
  t0=$(date +%s)
  rm -f "$out/tuning.json"
  if "$build/bin/fp8-tune" --db "$out/tuning.json" --shapes "$root/bench/heldout.json" --iters 10 \
       --json "$out/tune.json" >"$out/tune.log" 2>&1; then
    FP8_TUNING_DB="$out/tuning.json" bench_step heldout-tuned \
      "Held-out shapes, tuned (fp8-tune: $(grep -c ' TF/s ' "$out/tune.log") GEMMs in $(( $(date +%s) - t0 )) s; then fp8-bench with its database)" \
      "$heldout_rows" "${heldout[@]}"
    if python3 "$root/scripts/plot-tune.py" "$out/tune.json" "$out/tune.png" >>"$out/tune.log" 2>&1; then
      log "- chart: tune.png (every candidate's TFLOP/s per GEMM)"
    else
      log "- chart: not drawn (python3 with matplotlib needed; see tune.log)"
    fi
  else
    log "- fp8-tune on the held-out shapes: FAILED"
    tail -20 "$out/tune.log" | tee -a "$summary"
    status=1
  fi
fi
# 5e. The shapes a refit of the tile heuristic fits (bench/shapes.json's
# dense rows and bench/training.json; never bench/heldout.json): every
# candidate of each timed by fp8-tune, into fit-bench.json and
# fit-training.json (with a database of the winners, fit-db.json); and
# fit-decode.json, the training set's weights at M = 16 over a coarser grid
# (widths 64, 128, 192, 256; split-K 1, 2, 4), where 64-row tiles compete;
# and the bench's and the training shapes again with per-tensor scales
# (fit-bench-per-tensor.json, fit-training-per-tensor.json): the shape files'
# recipe is DeepSeek's, and a per-tensor k-block, without per-block scales,
# costs less (attention-proj's O projection, 4096x4096x4096, ran at 0.82x
# cuBLASLt with the heuristic's tile, docs/results/h100-2026-12-07-gpu-check/).
# scripts/heuristic-regret.py scores this build's heuristic on these files.
if want training; then
  rm -f "$out/fit-db.json"
  for set in bench:shapes training:training decode:training \
             bench-per-tensor:shapes training-per-tensor:training; do
    name="${set%%:*}" file="$root/bench/${set#*:}.json" t0=$(date +%s)
    grid=()
    [ "$name" = decode ] && grid=(--m 16 --widths 64,128,192,256 --splits 1,2,4)
    case "$name" in *-per-tensor) grid=(--recipe per-tensor) ;; esac
    if "$build/bin/fp8-tune" --db "$out/fit-db.json" --shapes "$file" --iters 10 \
         "${grid[@]}" --json "$out/fit-$name.json" >"$out/fit-$name.log" 2>&1; then
      log "- every candidate timed on ${file#$root/}: $(grep -c ' TF/s ' "$out/fit-$name.log") GEMMs in $(( $(date +%s) - t0 )) s (fit-$name.json)"
    else
      log "- fp8-tune on ${file#$root/}: FAILED"
      tail -20 "$out/fit-$name.log" | tee -a "$summary"
      status=1
    fi
  done
fi

# 6. The Python package on the GPU: pip builds fp8kit from this tree (no
# MLIR here: no compiler in it), pytest's GPU tests run against the install
# (every API against the CPU oracle and torch._scaled_mm, torch.compile, the
# FP8 Linear's gradients, the call overhead), and the training example
# draws its loss curves (FP8_TRAIN_OUT). The machine has no package index: nanobind,
# scikit-build-core and pytest come as wheels in FP8_PY_WHEELS (default
# .whl/: pip download them elsewhere), PyTorch from its Python.
if want python; then
  t0=$(date +%s)
  if py="$(PY_ENV="$build/pyenv" FP8_PY_WHEELS="${FP8_PY_WHEELS:-$root/.whl}" \
           "$root/scripts/setup-python.sh" 2>"$out/python-build.log" | tail -n 1)" &&
     "$py" -m pip install -q --no-build-isolation --no-deps --upgrade \
       --target "$build/py-site" "$root" >>"$out/python-build.log" 2>&1; then
    if FP8_TRAIN_OUT="$out" PYTHONPATH="$build/py-site" "$py" -m pytest -q -s \
         -p no:cacheprovider -m gpu "$root/python/tests" >"$out/python-tests.log" 2>&1; then
      log "- Python GPU tests: $(tail -1 "$out/python-tests.log") ($(( $(date +%s) - t0 )) s)"
    else
      log "- Python GPU tests: FAILED ($(tail -1 "$out/python-tests.log"))"
      grep -E '^FAILED|^E ' "$out/python-tests.log" | head -20 | tee -a "$summary"
      status=1
    fi
    grep -E '^per call:' "$out/python-tests.log" | sed 's/^/  - /' | tee -a "$summary"
    # The training example ran in the tests (test_training_example_...).
    [ -f "$out/train_mlp.log" ] &&
      log "  - examples/python/train_mlp.py: $(tail -1 "$out/train_mlp.log")"
  else
    log "- Python package: the build FAILED (see python-build.log)"
    tail -20 "$out/python-build.log" | tee -a "$summary"
    status=1
  fi
fi

# 7. Extra GPU checks of later stages (the pipeline's examples), if present.
if want extra && [ -x "$root/scripts/gpu-check-extra.sh" ]; then
  "$root/scripts/gpu-check-extra.sh" "$build" "$out" "$summary" || status=1
fi

log ""
log "status: $([ $status = 0 ] && echo OK || echo FAILED)"
cat "$summary"
exit $status
