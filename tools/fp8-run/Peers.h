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

#include <memory>

namespace fp8 {

/// The cuBLASLt peers of a plan's GEMM steps, timed in the same turns as
/// the steps (timePlanSteps's BenchRound), each launch queued as the steps'
/// are.
class PlanPeers {
public:
  PlanPeers();
  ~PlanPeers();
  PlanPeers(const PlanPeers &) = delete;
  PlanPeers &operator=(const PlanPeers &) = delete;

  /// Sets up the peers of every GEMM step of `r` (describePlanSteps) where
  /// cuBLASLt is available (built with it and a handle created), writing
  /// their kinds and notes into `r`; otherwise leaves them unmeasured.
  Status prepare(GpuPlan &gpu, const Plan &plan, BenchReport &r);
  /// One turn: every peer, `warmup` untimed launches then `iters` timed.
  Status round(int warmup, int iters);
  /// Each peer's median into `r`'s steps, their sums into `r`.
  void finish(BenchReport &r) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace fp8

#endif // FP8_TOOLS_FP8RUN_PEERS_H
