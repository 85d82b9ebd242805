//===- PlanRunner.h - Running a plan on the CPU oracle ----------*- C++ -*-===//
//
// The stages of running a plan that need no GPU, as fp8-run (and a binding)
// calls them: host memory checked before anything is allocated, the inputs
// filled and saved, the plan run on the CPU oracle, the outputs written as
// .npy. Every error carries the stage that failed as its context ("cannot
// read the inputs: ..."). PlanGpuRunner.h has the GPU's stages.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLAN_PLANRUNNER_H
#define FP8_RUNTIME_PLAN_PLANRUNNER_H

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanOracle.h"

#include <string>

namespace fp8 {

/// Where the inputs come from and where they go.
struct PlanInputOptions {
  InputOptions inputs;    ///< .npy files or seeded random values
  std::string saveInputs; ///< write the inputs and weights used here ("": no)
};

/// Runs that a verification compares: enough for delayed scaling to use its
/// history (the first run falls back to current scaling); 1 without state.
int verifyIterations(const Plan &plan);

/// Checks that the host holds what running the plan `where` takes (with
/// `verify`, the oracle's share too); the error's context is "cannot run
/// the plan".
Status checkRunMemory(const Plan &plan, const ResolvedPlan &shapes,
                      const DimValues &dims, RunOn where, bool verify);

/// The plan's host buffers, inputs and weights filled (and saved where
/// `options` says).
Expected<HostBuffers> preparePlanInputs(const Plan &plan,
                                        const ResolvedPlan &shapes,
                                        const PlanInputOptions &options);

/// A run on the CPU oracle.
struct CpuPlanRun {
  HostBuffers inputs; ///< the buffers before the run
  HostBuffers values; ///< after it
  int iterations = 1;
  double seconds = 0;
};

/// Runs the plan on the CPU oracle: memory checked, inputs prepared, then
/// one iteration (verifyIterations with `verify`).
Expected<CpuPlanRun> runPlanOnCpuOracle(const Plan &plan,
                                        const ResolvedPlan &shapes,
                                        const DimValues &dims,
                                        const PlanInputOptions &options,
                                        bool verify);

/// Creates `dir` unless it is a directory already.
Status makeDirectory(const std::string &dir);

/// Writes the graph outputs of `values` as <dir>/<name>.npy; returns their
/// file names, "a.npy, b.npy". The error's context is "cannot write the
/// outputs".
Expected<std::string> writePlanOutputs(const Plan &plan,
                                       const HostBuffers &values,
                                       const std::string &dir);

} // namespace fp8

#endif // FP8_RUNTIME_PLAN_PLANRUNNER_H
