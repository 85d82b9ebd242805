//===- PlanVerify.h - The verdict on a run of a plan ------------*- C++ -*-===//
//
// What fp8-run --verify concludes from a run of a plan (on the GPU, or the
// CPU oracle itself). Three checks:
//   - steps: every step against the CPU oracle run on the step's own inputs
//     as the GPU saw them: quantize, transpose and elementwise results must
//     be the same bits; a GEMM's result within max |d - oracle| /
//     max |oracle| of 8e-3 (bf16 out) or 2e-3 (f32 out), the order of its
//     FP32 sums; a GEMM quantized in its epilogue, its dequantized codes
//     within a similarity to the oracle's of one quantization's expected
//     error (meanSquaredRoundingError): a code may differ where the order of
//     the sums moves a value across a rounding boundary;
//   - outputs against the oracle: every graph output against the whole plan
//     run on the CPU oracle from the same inputs; the similarity must stay
//     within the bound derived from the plan's recipe
//     (runtime/plan/PlanErrorBound.h): a GPU departing from the oracle by more
//     than the recipe's own error is wrong. Non-finite values fail;
//   - the recipe's quantization error: every graph output against the
//     unquantized reference graph, within the derived bound or one the
//     user states; it grows with the plan's depth and is no fault of the
//     GPU, so it is reported with the error the recipe is expected to
//     cost and where the bound came from.
// A run on the CPU oracle has only the last check.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANVERIFY_H
#define FP8_RUNTIME_PLANVERIFY_H

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanErrorBound.h"
#include "runtime/plan/PlanOracle.h"

#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// One step against the oracle run on the step's inputs.
struct StepCheck {
  std::string step, kind;
  bool exact = true; ///< compared bit for bit (else numerically)
  int64_t elements = 0;
  int64_t mismatches = 0;
  /// GEMMs: max |d - oracle| / max |oracle|; quantized in the epilogue:
  /// the similarity of the dequantized codes (`metric` says which).
  double relError = 0;
  double bound = 0;
  std::string metric;
  bool passed = true;
  std::string detail;
};

/// Checks every step of `plan` on the buffers of one GPU run: `gpu` holds
/// every buffer after the last iteration, `statesBefore` the state buffers
/// before it.
Expected<std::vector<StepCheck>> checkSteps(const Plan &plan,
                                            const HostBuffers &gpu,
                                            const HostBuffers &statesBefore);

/// One output's similarity to what it is compared with, and its bound.
struct SimilarityCheck {
  numerics::ErrorMetrics metrics;
  double bound = 0;
  bool passed = true; ///< no non-finite values, similarity <= bound
};

/// Where the bound of the quantization-error check comes from.
enum class BoundSource : uint8_t {
  Derived, ///< the plan's recipe (runtime/plan/PlanErrorBound.h)
  Stated,  ///< the user (fp8-run --similarity-bound)
};

/// "derived" or "stated".
std::string_view toString(BoundSource s);

/// The checks of one graph output.
struct OutputCheck {
  std::string name;
  Shape shape;
  /// What the recipe is expected to cost this output.
  OutputErrorBound expected;
  /// The result against the whole plan run on the CPU oracle (runs that
  /// are not the oracle's own), within expected.bound.
  bool haveOracle = false;
  SimilarityCheck vsOracle;
  /// The result against the unquantized graph: the recipe's quantization
  /// error, within expected.bound or a stated bound.
  SimilarityCheck vsReference;
  BoundSource referenceBound = BoundSource::Derived;
  /// The oracle's run against the unquantized graph (haveOracle only).
  numerics::ErrorMetrics oracleVsReference;

  bool passed() const {
    return vsReference.passed && (!haveOracle || vsOracle.passed);
  }
};

/// How checkOutputs compares.
struct OutputCheckOptions {
  /// Runs of the run phase that produced the results.
  int iterations = 1;
  /// Compare with the plan run on the CPU oracle (the results are a GPU's).
  bool withOracle = false;
  /// The quantization-error bound stated by the user; the derived one when
  /// absent.
  std::optional<double> statedBound;
};

/// Compares `results` (the graph outputs of `options.iterations` runs from
/// `inputs`) with the unquantized reference graph and, with
/// `options.withOracle`, with the whole plan run as many times on the CPU
/// oracle.
Expected<std::vector<OutputCheck>>
checkOutputs(const Plan &plan, const ResolvedPlan &shapes,
             const HostBuffers &inputs, const HostBuffers &results,
             const OutputCheckOptions &options);

/// Which of the checks failed.
struct VerifyVerdict {
  std::vector<std::string> stepsOffOracle;   ///< steps
  std::vector<std::string> outputsOffOracle; ///< outputs against the oracle
  std::vector<std::string> outputsOverBound; ///< quantization error

  bool passed() const {
    return stepsOffOracle.empty() && outputsOffOracle.empty() &&
           outputsOverBound.empty();
  }
  /// "" when passed; else which check failed for what, e.g. "step gemm_2
  /// differs from the oracle; output d departs from the oracle".
  std::string failures() const;
};

/// The verdict of the step and output checks (`steps` empty for a run on
/// the CPU oracle).
VerifyVerdict verdict(const std::vector<StepCheck> &steps,
                      const std::vector<OutputCheck> &outputs);

} // namespace fp8

#endif // FP8_RUNTIME_PLANVERIFY_H
