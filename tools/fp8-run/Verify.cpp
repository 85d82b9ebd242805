//===- Verify.cpp - fp8-run --verify: steps and outputs against the oracle ===//

#include "tools/fp8-run/Verify.h"

#include "runtime/numerics/Metrics.h"

#include <cmath>

namespace fp8 {

Status runPlanOnCpu(const Plan &plan, HostBuffers &buffers, int iterations) {
  for (const PlanStep &s : plan.steps)
    if (s.phase == Phase::Prepare)
      FP8_RETURN_IF_ERROR(runStepOnCpu(plan, s, buffers));
  for (int it = 0; it < iterations; ++it)
    for (const PlanStep &s : plan.steps)
      if (s.phase == Phase::Run)
        FP8_RETURN_IF_ERROR(runStepOnCpu(plan, s, buffers));
  return Status::ok();
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
    if (s.kind == StepKind::Gemm) {
      c.exact = false;
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
             int iterations, bool withOracle, double bound) {
  auto ref = runReference(plan, shapes, inputs);
  if (!ref)
    return ref.status();
  HostBuffers oracle;
  if (withOracle) {
    oracle = inputs;
    FP8_RETURN_IF_ERROR(
        runPlanOnCpu(plan, oracle, iterations).withContext("the CPU oracle"));
  }
  std::vector<OutputCheck> out;
  for (const std::string &name : plan.outputs) {
    OutputCheck c;
    c.name = name;
    const HostTensor &got = results.at(name);
    c.shape = got.shape;
    auto it = ref->find(name);
    if (it == ref->end())
      return errorf("the plan has no reference value for output '", name, "'");
    c.vsReference = compareValues(got, it->second).metrics;
    c.passed = c.vsReference.nonFinite == 0 && c.vsReference.similarity < bound;
    if (withOracle) {
      c.haveOracle = true;
      c.vsOracle = compareValues(got, oracle.at(name)).metrics;
      c.oracleVsReference = compareValues(oracle.at(name), it->second).metrics;
    }
    out.push_back(c);
  }
  return out;
}

} // namespace fp8
