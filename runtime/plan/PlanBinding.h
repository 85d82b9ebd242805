//===- PlanBinding.h - A plan bound to the caller's device memory -*- C++
//-*-===//
//
// A plan as a serving or training loop uses it: the weights are the
// caller's device tensors, bound once; each run takes the inputs and the
// outputs the same way (no copies) and enqueues its steps on the caller's
// stream. The dims may change from run to run (a decode step, then a
// prefill): each new set of dims gets its own GpuPlan, holding the buffers
// that depend on them (temps, scale mirrors of activations), while what
// does not (the prepared weights, their scale mirrors, constants, delayed
// scaling's states) is allocated once and shared, so the weights are
// quantized once and an amax history runs on across dims.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLAN_PLANBINDING_H
#define FP8_RUNTIME_PLAN_PLANBINDING_H

#include "runtime/plan/PlanExecutor.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fp8 {

/// The caller's device memory for one plan buffer.
struct DeviceSpan {
  CUdeviceptr ptr = 0;
  int64_t bytes = 0;
};

class BoundPlan {
public:
  /// Binds every weight of `plan` (by name, at least the buffer's bytes).
  /// Needs the GPU; allocates nothing until the first run.
  static Expected<std::unique_ptr<BoundPlan>>
  create(std::shared_ptr<const Plan> plan,
         const std::map<std::string, DeviceSpan> &weights);
  ~BoundPlan();

  /// The dims the shapes of the inputs give (a plain dimension name in an
  /// input's shape takes that input's size), then resolved as resolvePlan
  /// does; `given` adds or overrides. Errors name the input.
  Expected<DimValues> dimsOf(const std::map<std::string, Shape> &inputs,
                             const std::map<std::string, int64_t> &given);

  /// The buffers' shapes at `dims` (resolved once per set of dims).
  Expected<const ResolvedPlan *> shapes(const DimValues &dims);

  /// Enqueues one run on `stream`: `io` has every input and output of the
  /// plan (at least its bytes at `dims`). The first run at a set of dims
  /// sets it up (allocations, its prepare steps when it is the first set;
  /// synchronous), later ones only launch, step by step. Outputs that a
  /// step may write only in part (a grouped GEMM's rows after the last
  /// group) are zeroed first, on `stream`.
  /// With `graph`, the run phase is a CUDA graph per set of dims, replayed
  /// on buffers of its own: the inputs are copied in and the outputs out
  /// (device to device, on `stream`), so any tensors may be passed each
  /// time. Its first run launches step by step (loading every kernel), the
  /// second captures. Runs from several threads take turns.
  Status run(const DimValues &dims, const std::map<std::string, DeviceSpan> &io,
             CUstream stream, bool graph = false);

  const Plan &plan() const { return *plan_; }
  /// The sets of dims set up so far.
  size_t instances() const { return instances_.size(); }

private:
  struct Instance;
  BoundPlan() = default;
  Expected<Instance *> instance(const DimValues &dims, CUstream stream);
  /// A GpuPlan at `shapes` over the weights and the first instance's
  /// shared buffers; the inputs and outputs are the caller's unless
  /// `ownIo`.
  Expected<std::unique_ptr<GpuPlan>> makeGpuPlan(const ResolvedPlan &shapes,
                                                 bool ownIo);
  Status runGraph(Instance &inst, const std::map<std::string, DeviceSpan> &io,
                  CUstream stream);

  std::shared_ptr<const Plan> plan_;
  std::map<std::string, DeviceSpan> weights_;
  /// Buffers every instance shares: constants, states and what only the
  /// prepare steps write; the first instance owns them.
  std::map<std::string, bool> shared_;
  std::map<DimValues, std::unique_ptr<Instance>> instances_;
  std::map<DimValues, ResolvedPlan> shapes_;
  Instance *first_ = nullptr;
  std::mutex mutex_;
};

} // namespace fp8

#endif // FP8_RUNTIME_PLAN_PLANBINDING_H
