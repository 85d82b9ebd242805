//===- Peers.h - fp8-run --bench: the cuBLASLt peers of a plan --*- C++ -*-===//
//
// The GEMM steps of a plan through cuBLASLt in the same process, on the
// plan's own FP8 operands: FP8 with the recipe's scaling where cuBLASLt has
// it (DeepSeek 1x128 x 128x128 block scaling, per-tensor), else FP8
// per-tensor as the nearest, and BF16; next to the step times of
// runtime/plan/PlanBench.h.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8RUN_PEERS_H
#define FP8_TOOLS_FP8RUN_PEERS_H

#include "runtime/plan/PlanBench.h"

namespace fp8 {

/// Times the cuBLASLt peers of every GEMM step of `r` (from benchPlanSteps)
/// where cuBLASLt is available (built with it and a handle created);
/// otherwise leaves them unmeasured.
Status benchPeers(GpuPlan &gpu, const Plan &plan, const ResolvedPlan &shapes,
                  int iters, BenchReport &r);

} // namespace fp8

#endif // FP8_TOOLS_FP8RUN_PEERS_H
