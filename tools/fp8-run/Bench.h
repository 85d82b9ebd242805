//===- Bench.h - fp8-run --bench: step times and cuBLASLt peers -*- C++ -*-===//
//
// Times the run steps of a plan on the GPU (CUDA events around every step,
// back to back as the plan runs, median of --iters iterations after 3
// warm-up ones) and the same GEMMs through cuBLASLt in the same process, on
// the plan's own FP8 operands: FP8 with the recipe's scaling where cuBLASLt
// has it (DeepSeek 1x128 x 128x128 block scaling, per-tensor), else FP8
// per-tensor as the nearest, and BF16.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8RUN_BENCH_H
#define FP8_TOOLS_FP8RUN_BENCH_H

#include "runtime/plan/PlanExecutor.h"

#include <string>
#include <vector>

namespace fp8 {

struct BenchStep {
  std::string step, kind, kernel;
  double ms = 0; ///< median
  // GEMM steps:
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double tflops = 0;
  bool scaleATma = false; ///< A's scales came by TMA (GemmReport::scaleATma)
  bool scaleBTma = false; ///< B's scales came by TMA (GemmReport::scaleBTma)
  std::string peerKind;   ///< "fp8 block-scaled", "fp8 per-tensor", ...
  bool peerSameRecipe = false;
  double peerMs = -1; ///< -1: not measured (see peerNote)
  double bf16Ms = -1;
  std::string peerNote;
};

struct BenchReport {
  int iters = 0;
  std::vector<BenchStep> steps;
  double totalMs = 0; ///< median of whole iterations
  double gemmMs = 0, peerGemmMs = 0, bf16GemmMs = 0;
  bool havePeers = false;
};

/// Times the run phase of `gpu` and, where cuBLASLt is available, the peers.
Expected<BenchReport> benchPlan(GpuPlan &gpu, const Plan &plan,
                                const ResolvedPlan &shapes, int iters);

} // namespace fp8

#endif // FP8_TOOLS_FP8RUN_BENCH_H
