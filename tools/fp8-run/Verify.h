//===- Verify.h - fp8-run --verify: steps and outputs against the oracle -*- C++
//-*-===//
//
// Two checks of a plan's run:
//   - every step against the CPU oracle run on the step's own inputs as the
//     GPU saw them: quantize, transpose and elementwise results must be the
//     same bits; a GEMM's result within max |d - oracle| / max |oracle| of
//     8e-3 (bf16 out) or 2e-3 (f32 out), the order of its FP32 sums;
//   - every graph output against the unquantized reference graph:
//     DeepGEMM's similarity < 1e-3 passes; max abs and max rel errors are
//     reported, and the same against the whole plan run on the CPU oracle.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8RUN_VERIFY_H
#define FP8_TOOLS_FP8RUN_VERIFY_H

#include "runtime/Plan.h"
#include "runtime/PlanOracle.h"

#include <string>
#include <vector>

namespace fp8 {

/// The similarity bound every graph output must meet (fp8-run
/// --similarity-bound changes it).
inline constexpr double kSimilarityBound = 1e-3;

struct StepCheck {
  std::string step, kind;
  bool exact = true; ///< compared bit for bit (else numerically)
  int64_t elements = 0;
  int64_t mismatches = 0;
  double relError = 0; ///< GEMMs: max |d - oracle| / max |oracle|
  double bound = 0;
  bool passed = true;
  std::string detail;
};

struct OutputCheck {
  std::string name;
  Shape shape;
  numerics::ErrorMetrics vsReference;
  bool haveOracle = false;
  numerics::ErrorMetrics vsOracle;
  numerics::ErrorMetrics oracleVsReference;
  bool passed = true;
};

/// Checks every step of `plan` on the buffers of one GPU run: `gpu` holds
/// every buffer after the last iteration, `statesBefore` the state buffers
/// before it.
Expected<std::vector<StepCheck>> checkSteps(const Plan &plan,
                                            const HostBuffers &gpu,
                                            const HostBuffers &statesBefore);

/// Compares `results` (the graph outputs of `iterations` runs from
/// `inputs`) with the reference graph (passing when the similarity is below
/// `bound`) and, when `withOracle`, with the whole plan run `iterations`
/// times on the CPU oracle.
Expected<std::vector<OutputCheck>>
checkOutputs(const Plan &plan, const ResolvedPlan &shapes,
             const HostBuffers &inputs, const HostBuffers &results,
             int iterations, bool withOracle, double bound = kSimilarityBound);

/// Runs the plan on the CPU: the prepare steps, then `iterations` times the
/// run steps, on `buffers` (inputs filled).
Status runPlanOnCpu(const Plan &plan, HostBuffers &buffers, int iterations);

} // namespace fp8

#endif // FP8_TOOLS_FP8RUN_VERIFY_H
