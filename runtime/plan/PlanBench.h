//===- PlanBench.h - Step times of a plan on the GPU ------------*- C++ -*-===//
//
// Times the run steps of a plan on the GPU: CUDA events around every step,
// back to back as the plan runs, median of the iterations; GEMM steps with
// their shape, TFLOP/s and scale path; the run phase as one CUDA graph
// launch; and whatever the caller times beside them (fp8-run --bench:
// cuBLASLt's times of the same GEMMs, tools/fp8-run/Peers.h), all in turns.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLAN_PLANBENCH_H
#define FP8_RUNTIME_PLAN_PLANBENCH_H

#include "runtime/plan/PlanExecutor.h"

#include <functional>
#include <string>
#include <vector>

namespace fp8 {

/// One run step's times.
struct BenchStep {
  std::string step, kind, kernel;
  double ms = 0; ///< median
  // GEMM steps:
  int64_t m = 0, n = 0, k = 0, batch = 1;
  /// The GEMM's form. A contiguous grouped GEMM (m: every group's rows) has
  /// for cuBLASLt peer one dense m x n x k GEMM, the same FLOPs in one
  /// launch, which a loop of per-group calls does not beat; so has one
  /// along K (k: every group's), one dense m x n x k GEMM; a masked one
  /// (batch G slabs of m rows) one call per slab.
  GemmKind gemmKind = GemmKind::Dense;
  double tflops = 0;
  /// Other steps: the bytes of their input and output buffers (what a
  /// step at the bandwidth limit moves once) and the rate over `ms`.
  int64_t bytes = 0;
  double gbPerS = 0;
  bool scaleATma = false; ///< A's scales came by TMA (GemmReport::scaleATma)
  bool scaleBTma = false; ///< B's scales came by TMA (GemmReport::scaleBTma)
  std::string peerKind;   ///< "fp8 block-scaled", "fp8 per-tensor", ...
  bool peerSameRecipe = false;
  double peerMs = -1; ///< -1: not measured (see peerNote)
  double bf16Ms = -1;
  std::string peerNote;
};

/// The run steps' times and their sums.
struct BenchReport {
  int iters = 0;
  std::vector<BenchStep> steps;
  double totalMs = 0;   ///< median of whole iterations
  double stepSumMs = 0; ///< the sum of the steps' medians
  /// The run phase as one CUDA graph launch (GpuPlan::captureRun): its
  /// median time, or -1 and why it was not measured.
  double graphMs = -1;
  std::string graphNote;
  double gemmMs = 0, peerGemmMs = 0, bf16GemmMs = 0;
  bool havePeers = false;
};

/// The median of `samples` (0 when there are none).
double medianOf(std::vector<double> samples);

/// The run steps of `plan` (plan.stepsOf(Phase::Run), the report's steps,
/// one each) without their times: names, kinds, kernels,
/// GEMM shapes and scale paths, other steps' bytes.
BenchReport describePlanSteps(const GpuPlan &gpu, const Plan &plan,
                              const ResolvedPlan &shapes);

/// Something timed in the same turns as the plan's steps: called after each
/// round with the round's untimed and timed launch counts.
using BenchRound = std::function<Status(int warmup, int iters)>;

/// Times the run phase of `gpu` over `iters` iterations into `r` (from
/// describePlanSteps): the steps, the run phase as one CUDA graph, and
/// `alsoEachRound`, in turns of a few iterations each, every turn after
/// untimed launches that its timed ones queue behind. A GPU under sustained
/// load lowers its clock at its power limit (an H200 running the Llama
/// layer from 1980 to 1400-1470 MHz at 700 W within a second), so forms
/// timed one after the other would compare clock states.
Status timePlanSteps(GpuPlan &gpu, const Plan &plan, int iters, BenchReport &r,
                     const BenchRound &alsoEachRound = {});

} // namespace fp8

#endif // FP8_RUNTIME_PLAN_PLANBENCH_H
