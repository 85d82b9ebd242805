//===- PlanErrorBound.cpp - What a plan's recipe is expected to cost ------===//

#include "runtime/plan/PlanErrorBound.h"

#include "numerics/Formats.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace fp8 {

namespace {
/// Stored mantissa bits of a value format.
int mantissaBits(DType t) {
  switch (t) {
  case DType::E4M3FN:
  case DType::E5M2:
    return numerics::fp8Format(t).mantissaBits;
  case DType::BF16:
    return 7;
  case DType::F16:
    return 10;
  case DType::F32:
    return 23;
  case DType::UE8M0:
  case DType::I32:
    break;
  }
  return -1;
}

/// What one value of the plan has accumulated on its way from the inputs.
struct Provenance {
  std::vector<size_t> quantizations; ///< steps, sorted, each once
  int depth = 0;                     ///< GEMMs on the longest path
  int pathQuantizations = 0;         ///< quantizations on the longest path
};

/// The union of the provenance of `names`.
Provenance merge(const std::map<std::string, Provenance> &values,
                 const std::vector<std::string> &names) {
  Provenance p;
  for (const std::string &n : names) {
    auto it = values.find(n);
    if (it == values.end())
      continue; // an input, weight, constant or state: exact
    const Provenance &q = it->second;
    std::vector<size_t> u;
    std::set_union(p.quantizations.begin(), p.quantizations.end(),
                   q.quantizations.begin(), q.quantizations.end(),
                   std::back_inserter(u));
    p.quantizations = std::move(u);
    p.depth = std::max(p.depth, q.depth);
    p.pathQuantizations = std::max(p.pathQuantizations, q.pathQuantizations);
  }
  return p;
}
} // namespace

double meanSquaredRoundingError(DType format) {
  const int m = mantissaBits(format);
  if (m < 0)
    return 0;
  // Rounding to nearest with m mantissa bits leaves an absolute error
  // uniform in +-ulp/2, ulp = 2^(E - m) for x = 2^E * f, f in [1, 2): its
  // mean square is ulp^2 / 12, relative to x^2 that is 2^(-2m) / (12 f^2).
  // Over magnitudes spread log-uniformly across binades, f has the density
  // 1 / (f ln 2) on [1, 2), and E[1 / f^2] = (1 / ln 2) * integral of f^-3
  // from 1 to 2 = (3/8) / ln 2.
  return std::ldexp(1.0, -2 * m) / 12.0 * (3.0 / 8.0) / std::log(2.0);
}

std::vector<OutputErrorBound> deriveErrorBounds(const Plan &plan) {
  std::map<std::string, Provenance> values;
  // In execution order: the prepare steps once, then the run steps.
  std::vector<size_t> order = plan.stepsOf(Phase::Prepare);
  for (size_t i : plan.stepsOf(Phase::Run))
    order.push_back(i);
  for (size_t i : order) {
    const PlanStep &s = plan.steps[i];
    switch (s.kind) {
    case StepKind::Quantize:
    case StepKind::Permute: {
      // Inputs: those of the program fused into the quantize (a permute:
      // its rows and routing ids, which are exact).
      Provenance p = merge(values, s.inputs);
      p.quantizations.insert(
          std::upper_bound(p.quantizations.begin(), p.quantizations.end(), i),
          i);
      ++p.pathQuantizations;
      for (const std::string &o : s.outputs)
        values[o] = p;
      break;
    }
    case StepKind::Transpose:
      for (size_t k = 0; k < s.inputs.size() && k < s.outputs.size(); ++k)
        values[s.outputs[k]] = merge(values, {s.inputs[k]});
      break;
    case StepKind::Elementwise:
    case StepKind::Reduce:     // the row sums of exact operands
    case StepKind::Unpermute:  // a weighted sum of rows: exact operands
    case StepKind::Interleave: // rows moved
      for (const std::string &o : s.outputs)
        values[o] = merge(values, s.inputs);
      break;
    case StepKind::Gemm: {
      // A, B and C (when the GEMM accumulates into it); not the scales.
      std::vector<std::string> operands;
      // A grouped GEMM's fifth input is its group tensor: exact.
      const bool grouped = s.gemm.kind != GemmKind::Dense;
      for (size_t k = 0; k < s.inputs.size(); ++k)
        if (k != 1 && k != 3 && !(grouped && k == 4))
          operands.push_back(s.inputs[k]);
      Provenance p = merge(values, operands);
      // The depth counts the products: C (after A and B) is added, as by
      // an add step.
      const size_t ab = std::min<size_t>(operands.size(), 2);
      p.depth = std::max(
          merge(values, {operands.begin(), operands.begin() + ab}).depth + 1,
          merge(values, {operands.begin() + ab, operands.end()}).depth);
      if (s.gemm.epilogue) { // the result is quantized on its way out
        p.quantizations.insert(
            std::upper_bound(p.quantizations.begin(), p.quantizations.end(), i),
            i);
        ++p.pathQuantizations;
      }
      for (const std::string &o : s.outputs)
        values[o] = p;
      break;
    }
    }
  }

  std::vector<OutputErrorBound> out;
  for (const std::string &name : plan.outputs) {
    OutputErrorBound b;
    b.output = name;
    auto it = values.find(name);
    if (it != values.end()) {
      const Provenance &p = it->second;
      for (size_t step : p.quantizations) {
        const PlanStep &q = plan.steps[step];
        b.relSquaredError += meanSquaredRoundingError(
            q.kind == StepKind::Gemm ? q.gemm.epilogue->format
                                     : q.aux.quant.format);
      }
      b.depth = p.depth;
      b.pathQuantizations = p.pathQuantizations;
      b.quantizations = int(p.quantizations.size());
    }
    b.expectedSimilarity = b.relSquaredError / 2;
    b.bound = std::max(b.relSquaredError, kMinSimilarityBound);
    out.push_back(b);
  }
  return out;
}

} // namespace fp8
