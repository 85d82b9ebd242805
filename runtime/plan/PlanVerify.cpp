//===- PlanVerify.cpp - The verdict on a run of a plan --------------------===//

#include "runtime/plan/PlanVerify.h"

#include "numerics/Metrics.h"
#include "numerics/Quantize.h"

#include <cmath>

namespace fp8 {

namespace {
SimilarityCheck similarityCheck(const HostTensor &got, const HostTensor &want,
                                double bound) {
  SimilarityCheck c;
  c.metrics = compareValues(got, want).metrics;
  c.bound = bound;
  // NaN similarities fail too.
  c.passed = c.metrics.nonFinite == 0 && c.metrics.similarity <= bound;
  return c;
}

/// The values of [rows, cols] FP8 `codes` with their row-block `scales`.
std::vector<float> dequantized(const HostTensor &codes,
                               const HostTensor &scales,
                               const GemmEpilogue &e) {
  numerics::QuantizedTensor q;
  q.format = e.format;
  q.rows = codes.shape[0];
  q.cols = codes.shape[1];
  q.granularity = e.granularity;
  q.scaleRows = e.granularity.scaleRows(q.rows);
  q.scaleCols = e.granularity.scaleCols(q.cols);
  q.codes = codes.data;
  q.scales = scales.toFloat();
  return numerics::dequantize(q);
}

/// A GEMM step quantized in its epilogue: the dequantized codes against
/// the oracle's, and how many codes differ.
void checkEpilogueStep(const PlanStep &s, const HostBuffers &gpu,
                       const HostBuffers &oracle, StepCheck &c) {
  const GemmEpilogue &e = *s.gemm.epilogue;
  const HostTensor &codes = gpu.at(s.outputs[0]);
  const std::vector<float> x = dequantized(codes, gpu.at(s.outputs[1]), e);
  const std::vector<float> y =
      dequantized(oracle.at(s.outputs[0]), oracle.at(s.outputs[1]), e);
  const numerics::ErrorMetrics m =
      numerics::compare(x.data(), y.data(), int64_t(x.size()));
  const TensorComparison bits = compareBits(codes, oracle.at(s.outputs[0]));
  c.metric = "similarity of the dequantized codes";
  c.elements = bits.elements;
  c.mismatches = bits.mismatches;
  c.relError = m.similarity;
  c.bound = meanSquaredRoundingError(e.format);
  c.passed = m.nonFinite == 0 && m.similarity <= c.bound;
  c.detail = std::to_string(bits.mismatches) + " of " +
             std::to_string(bits.elements) + " codes differ";
  if (m.nonFinite)
    c.detail += ", " + std::to_string(m.nonFinite) + " non-finite values";
}

/// "step a", "steps a, b" followed by `one` or `many`.
std::string listed(const char *noun, const std::vector<std::string> &names,
                   const char *one, const char *many) {
  std::string s = noun;
  if (names.size() > 1)
    s += "s";
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : " ") + names[i];
  return s + " " + (names.size() > 1 ? many : one);
}
} // namespace

std::string_view toString(BoundSource s) {
  return s == BoundSource::Stated ? "stated" : "derived";
}

Expected<std::vector<StepCheck>> checkSteps(const Plan &plan,
                                            const HostBuffers &gpu,
                                            const HostBuffers &statesBefore) {
  std::vector<StepCheck> out;
  for (const PlanStep &s : plan.steps) {
    // The step's inputs as the GPU saw them, its outputs recomputed.
    HostBuffers local;
    for (const std::string &n : s.inputs)
      local[n] = gpu.at(n);
    for (const std::string &n : s.outputs)
      local[n] = HostTensor::zeros(gpu.at(n).dtype, gpu.at(n).shape);
    if (!s.state.empty())
      local[s.state] = statesBefore.at(s.state);
    FP8_RETURN_IF_ERROR(runStepOnCpu(plan, s, local));

    StepCheck c;
    c.step = s.name;
    c.kind = std::string(toString(s.kind));
    if (s.kind == StepKind::Gemm && s.gemm.epilogue) {
      c.exact = false;
      checkEpilogueStep(s, gpu, local, c);
    } else if (s.kind == StepKind::Gemm) {
      c.exact = false;
      c.metric = "max |d - oracle| / max |oracle|";
      c.bound = s.gemm.out == DType::F32 ? 2e-3 : 8e-3;
      const TensorComparison cmp =
          compareValues(gpu.at(s.outputs[0]), local.at(s.outputs[0]));
      c.elements = cmp.elements;
      c.relError = cmp.metrics.refMaxAbs > 0
                       ? cmp.metrics.maxAbsError / cmp.metrics.refMaxAbs
                       : cmp.metrics.maxAbsError;
      c.passed = cmp.metrics.nonFinite == 0 && c.relError <= c.bound;
      if (cmp.metrics.nonFinite)
        c.detail = std::to_string(cmp.metrics.nonFinite) + " non-finite values";
    } else {
      for (const std::string &n : s.outputs) {
        const TensorComparison cmp = compareBits(gpu.at(n), local.at(n));
        c.elements += cmp.elements;
        c.mismatches += cmp.mismatches;
        if (cmp.mismatches && c.detail.empty())
          c.detail = "first difference in '" + n + "' at element " +
                     std::to_string(cmp.firstMismatch) + ": GPU " +
                     std::to_string(gpu.at(n).get(cmp.firstMismatch)) +
                     ", oracle " +
                     std::to_string(local.at(n).get(cmp.firstMismatch));
      }
      if (!s.state.empty()) {
        // The history after the step: same steps and amaxes.
        const DelayedScaling &d = s.aux.quant.delayed;
        const numerics::AmaxHistory g = historyFromState(gpu.at(s.state), d);
        const numerics::AmaxHistory o = historyFromState(local.at(s.state), d);
        if (g.steps() != o.steps() || g.values() != o.values()) {
          ++c.mismatches;
          if (c.detail.empty())
            c.detail = "amax history differs: GPU " +
                       std::to_string(g.steps()) + " steps, " +
                       std::to_string(g.values().size()) + " values; oracle " +
                       std::to_string(o.steps()) + " steps, " +
                       std::to_string(o.values().size()) + " values";
        }
      }
      c.passed = c.mismatches == 0;
    }
    out.push_back(c);
  }
  return out;
}

Expected<std::vector<OutputCheck>>
checkOutputs(const Plan &plan, const ResolvedPlan &shapes,
             const HostBuffers &inputs, const HostBuffers &results,
             const OutputCheckOptions &options) {
  auto ref = runReference(plan, shapes, inputs);
  if (!ref)
    return ref.status();
  HostBuffers oracle;
  if (options.withOracle) {
    oracle = inputs;
    FP8_RETURN_IF_ERROR(runPlanOnCpu(plan, oracle, options.iterations)
                            .withContext("the CPU oracle"));
  }
  const std::vector<OutputErrorBound> expected = deriveErrorBounds(plan);
  std::vector<OutputCheck> out;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const std::string &name = plan.outputs[i];
    OutputCheck c;
    c.name = name;
    c.expected = expected[i];
    auto got = results.find(name);
    if (got == results.end())
      return errorf("expected a result for output '", name, "', found none");
    c.shape = got->second.shape;
    auto it = ref->find(name);
    if (it == ref->end())
      return errorf("the plan has no reference value for output '", name, "'");
    c.referenceBound =
        options.statedBound ? BoundSource::Stated : BoundSource::Derived;
    c.vsReference =
        similarityCheck(got->second, it->second,
                        options.statedBound.value_or(c.expected.bound));
    if (options.withOracle) {
      c.haveOracle = true;
      c.vsOracle =
          similarityCheck(got->second, oracle.at(name), c.expected.bound);
      c.oracleVsReference = compareValues(oracle.at(name), it->second).metrics;
    }
    out.push_back(c);
  }
  return out;
}

std::string VerifyVerdict::failures() const {
  std::string s;
  auto add = [&](std::string part) { s += (s.empty() ? "" : "; ") + part; };
  if (!stepsOffOracle.empty())
    add(listed("step", stepsOffOracle, "differs from the oracle",
               "differ from the oracle"));
  if (!outputsOffOracle.empty())
    add(listed("output", outputsOffOracle, "departs from the oracle",
               "depart from the oracle"));
  if (!outputsOverBound.empty())
    add(listed("output", outputsOverBound,
               "exceeds its quantization-error bound",
               "exceed their quantization-error bounds"));
  return s;
}

VerifyVerdict verdict(const std::vector<StepCheck> &steps,
                      const std::vector<OutputCheck> &outputs) {
  VerifyVerdict v;
  for (const StepCheck &c : steps)
    if (!c.passed)
      v.stepsOffOracle.push_back(c.step);
  for (const OutputCheck &c : outputs) {
    if (c.haveOracle && !c.vsOracle.passed)
      v.outputsOffOracle.push_back(c.name);
    if (!c.vsReference.passed)
      v.outputsOverBound.push_back(c.name);
  }
  return v;
}

} // namespace fp8
