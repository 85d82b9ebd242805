//===- PerTensorPlan.h - A per-tensor FP8 GEMM plan for tests ---*- C++ -*-===//
//
// The verification tests' fixture: x [M, k] and w [n, k] quantized per
// tensor to E4M3 (x in the run phase, w in prepare), D = x w^T in bf16 with
// promotion every 128, its reference; positive inputs; and the plan with a
// deliberately wrong kernel constant, the GEMM's promotion interval.
//
// With every product positive, the tensor core's truncating accumulator
// (13 fraction bits on the H100) loses a share of each partial sum that
// grows with the number of products summed before promotion: about 7.5% of
// D at K = 4096 without promotion, 0.06% when promoting every 128. So a
// kernel built with promotion interval 0 instead of 128 departs from the
// oracle by far more than the GEMM step's bound (8e-3 of max |D|), on the
// GPU and in the oracle's model of its accumulator alike.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TEST_RUNTIME_PERTENSORPLAN_H
#define FP8_TEST_RUNTIME_PERTENSORPLAN_H

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanOracle.h"

#include "test/runtime/plan/DeepSeekPlan.h"

#include <cmath>
#include <string>

namespace fp8::testplans {

/// Steps quantize_x (0), quantize_w (1, prepare) and gemm (2), every scale
/// per tensor. The GEMM's tile is the default one, without split-K: every
/// output tile sums the whole of K (the runtime's pick for M = 64 splits K
/// in 4, which would cut the loss without promotion to a quarter).
inline Plan perTensorPlan(const std::string &function, int64_t n, int64_t k) {
  Plan p = deepseekPlan(function, n, k);
  for (PlanBuffer &b : p.buffers)
    if (b.name == "xs" || b.name == "ws")
      b.shape = {C(1), C(1)};
  for (size_t i : {0, 1})
    p.steps[i].aux.quant.granularity = Granularity::perTensor();
  p.steps[2].gemm.a.granularity = Granularity::perTensor();
  p.steps[2].gemm.b.granularity = Granularity::perTensor();
  return p;
}

/// perTensorPlan() whose GEMM also writes D's amax (KernelSpec::amaxOut,
/// "d_amax", f32 [1, 1]) and a step quantize_d (3) that quantizes D per
/// tensor from it (ElementwiseSpec::amaxIn) into "dq" and "dqs": the one
/// read of D that the epilogue's amax is for.
inline Plan amaxPlan(const std::string &function, int64_t n, int64_t k) {
  Plan p = perTensorPlan(function, n, k);
  p.buffers.push_back(
      buffer("d_amax", DType::F32, {C(1), C(1)}, BufferRole::Temp));
  p.buffers.push_back(
      buffer("dq", DType::E4M3FN, {M(), C(n)}, BufferRole::Temp));
  p.buffers.push_back(
      buffer("dqs", DType::F32, {C(1), C(1)}, BufferRole::Temp));
  PlanStep &g = p.steps[2];
  g.gemm.amaxOut = true;
  g.outputs = {"d", "d_amax"};
  PlanStep q;
  q.name = "quantize_d";
  q.kind = StepKind::Quantize;
  q.inputs = {"d", "d_amax"};
  q.outputs = {"dq", "dqs"};
  q.aux = quantizeSpec(Granularity::perTensor());
  q.aux.amaxIn = true;
  p.steps.push_back(q);
  return p;
}

/// `plan` with its GEMM steps' promotion interval set to `interval` (0:
/// tensor-core accumulation only).
inline Plan withPromotionInterval(Plan plan, int64_t interval) {
  for (PlanStep &s : plan.steps)
    if (s.kind == StepKind::Gemm)
      s.gemm.promotionInterval = promotionFromInt(interval);
  return plan;
}

/// fillInputs' seeded values, made positive.
inline Status fillPositiveInputs(const Plan &plan, HostBuffers &buffers,
                                 uint64_t seed = 1) {
  InputOptions o;
  o.seed = seed;
  FP8_RETURN_IF_ERROR(fillInputs(plan, buffers, o));
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Input || b.role == BufferRole::Weight) {
      HostTensor &t = buffers.at(b.name);
      for (int64_t i = 0; i < t.elements(); ++i)
        t.set(i, std::fabs(t.get(i)));
    }
  return Status::ok();
}

} // namespace fp8::testplans

#endif // FP8_TEST_RUNTIME_PERTENSORPLAN_H
