//===- PlanGpuRunner.h - Running a plan on the GPU --------------*- C++ -*-===//
//
// The GPU's stages of running a plan, as fp8-run (and a binding) calls them:
// set up (host memory checked, buffers allocated, inputs uploaded), the
// prepare steps, the run steps (the states read back before the last run,
// for verification), the results read back. Every error carries the stage
// that failed as its context, like PlanRunner.h's.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLAN_PLANGPURUNNER_H
#define FP8_RUNTIME_PLAN_PLANGPURUNNER_H

#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanRunner.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fp8 {

/// Sets the plan up on the GPU: host memory checked, device buffers
/// allocated, the inputs prepared (into `host`) and uploaded.
Expected<std::unique_ptr<GpuPlan>> setUpGpuPlan(const Plan &plan,
                                                const ResolvedPlan &shapes,
                                                const DimValues &dims,
                                                const PlanInputOptions &options,
                                                bool verify, HostBuffers &host);

/// A scale mirror of the plan on the GPU: the scales some GEMMs read in
/// their TMA layout (runtime/plan/PlanScaleMirror.h).
struct ScaleMirrorUse {
  std::string scales;  ///< the scale buffer mirrored
  std::string writer;  ///< the step that writes the mirror
  bool isA = false;    ///< A's scales (transposed), else B's (padded pitch)
  std::string readers; ///< the steps reading it, "a, b"
  int64_t outer = 0, pitch = 0;
};

/// The scale mirrors of `gpu`, in order.
std::vector<ScaleMirrorUse> scaleMirrorUses(const GpuPlan &gpu,
                                            const Plan &plan);

/// Runs the prepare steps once, each synchronized; returns the seconds.
Expected<double> runPrepareSteps(GpuPlan &gpu);

/// Runs the run steps `iterations` times, each step synchronized; reads the
/// state buffers back into `statesBefore` before the last iteration and
/// calls `onRun(iteration, seconds)` after each.
Status runIterations(GpuPlan &gpu, const Plan &plan, int iterations,
                     HostBuffers &statesBefore,
                     const std::function<void(int, double)> &onRun);

/// Reads back the graph outputs, or with `all` every buffer.
Expected<HostBuffers> readResults(const GpuPlan &gpu, const Plan &plan,
                                  bool all);

} // namespace fp8

#endif // FP8_RUNTIME_PLAN_PLANGPURUNNER_H
