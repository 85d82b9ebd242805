//===- PlanErrorBound.h - What a plan's recipe costs ------------*- C++ -*-===//
//
// How far each output of a plan is expected to be from the plan's
// unquantized reference graph, derived from the plan alone (which values it
// quantizes, to which formats, and how they reach the outputs): the bound of
// fp8-run --verify.
//
// Every quantization to a format F adds rounding noise of relative variance
// eps2(F), F's mean squared relative rounding error, independent of every
// other quantization's. A GEMM passes the relative errors of its operands on
// (for dot products of random-sign data the relative squared errors of A and
// B add), a product those of its factors, a sum a weighted average of its
// terms'. So an output's relative squared error e is estimated as the sum of
// eps2 over the quantizations it depends on, each counted once however many
// paths lead from it to the output: counted once per path, a residual
// stream's error would be counted three times at every dense layer (the
// residual add and the SwiGLU's two branches), a bound growing like 3^layers
// where the error grows about linearly (8 dense layers: e = 28 counted per
// path, about 1e-2 on the CPU oracle). An elementwise step, and a quantize
// with a program fused in, depend on every input of the program; a
// transpose changes nothing.
//
// DeepGEMM's similarity 1 - 2 sum(xy) / sum(x^2 + y^2) is about e / 2; the
// bound is e, a factor 2 of headroom, and at least kMinSimilarityBound.
// Plain C++ (no CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANERRORBOUND_H
#define FP8_RUNTIME_PLANERRORBOUND_H

#include "runtime/plan/Plan.h"

#include <string>
#include <vector>

namespace fp8 {

/// The smallest derived bound: the similarity bound of one FP8 GEMM that
/// fp8-run --verify used for every output before bounds were derived (an
/// E4M3 x E4M3 GEMM's derived bound, 2 eps2(E4M3) = 1.4e-3, is above it).
inline constexpr double kMinSimilarityBound = 1e-3;

/// The mean squared relative rounding error of values rounded to `format`
/// (E4M3FN: 7.0e-4, E5M2: 2.8e-3; BF16, F16, F32 from their mantissas; 0 for
/// UE8M0, which holds no values).
double meanSquaredRoundingError(DType format);

/// What the recipe is expected to cost one output of a plan.
struct OutputErrorBound {
  std::string output;
  /// e: the sum of eps2 over the quantizations the output depends on.
  double relSquaredError = 0;
  double expectedSimilarity = 0; ///< e / 2
  double bound = 0;              ///< max(e, kMinSimilarityBound)
  int depth = 0; ///< the most GEMMs on one path to the output (not via C)
  /// The most quantizations on one path to the output.
  int pathQuantizations = 0;
  /// Distinct quantizations the output depends on (what e sums over).
  int quantizations = 0;
};

/// One entry per graph output of `plan` (a validated plan), in the order of
/// plan.outputs.
std::vector<OutputErrorBound> deriveErrorBounds(const Plan &plan);

} // namespace fp8

#endif // FP8_RUNTIME_PLANERRORBOUND_H
