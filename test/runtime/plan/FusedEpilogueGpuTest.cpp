//===- FusedEpilogueGpuTest.cpp - GEMMs quantized in their epilogue -------===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh).
// The committed mlp plans, as compiled (examples/plans/mlp.sm_90a) and with
// the GEMM results quantized in their epilogues (mlp.fused.sm_90a: gate and
// up one GEMM over interleaved weights whose epilogue computes the SwiGLU
// and the 1x128 quantize), run on the GPU from the same inputs at ragged M:
//   - every step of the fused run against the CPU oracle on its own inputs
//     (runtime/plan/PlanVerify.h: the fused GEMM's dequantized codes within
//     one quantization's error of the oracle's), its output against the
//     whole plan on the oracle and against the unquantized graph;
//   - the fused GEMM's codes and scales against the unfused run's SwiGLU
//     quantize: the same values up to the order of the GEMM's sums (the
//     tiles differ), so at most a few codes differ, and the two runs'
//     outputs agree within the oracle's bound.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanVerify.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

using namespace fp8;

namespace {

Plan loadExample(const std::string &name) {
  auto p = loadPlan(std::string(FP8_EXAMPLE_PLANS) + "/" + name +
                    ".sm_90a.plan.json");
  EXPECT_TRUE(p.isOk()) << p.message();
  return p.isOk() ? *p : Plan();
}

/// Every buffer of `plan` after its prepare steps and one run on the GPU.
Expected<HostBuffers> runOnGpu(const Plan &plan, const ResolvedPlan &shapes,
                               const HostBuffers &inputs) {
  auto gpu = GpuPlan::create(plan, shapes);
  if (!gpu)
    return gpu.status();
  FP8_RETURN_IF_ERROR((*gpu)->upload(inputs));
  FP8_RETURN_IF_ERROR((*gpu)->run(Phase::Prepare, true));
  FP8_RETURN_IF_ERROR((*gpu)->run(Phase::Run, true));
  HostBuffers out;
  for (const PlanBuffer &b : plan.buffers)
    FP8_RETURN_IF_ERROR((*gpu)->download(b.name, out[b.name]));
  return out;
}

/// The plan's first step of `kind` whose spec satisfies `pred`.
template <class Pred>
const PlanStep *stepWhere(const Plan &p, StepKind kind, Pred pred) {
  for (const PlanStep &s : p.steps)
    if (s.kind == kind && pred(s))
      return &s;
  return nullptr;
}

class FusedEpilogueGpu : public ::testing::TestWithParam<int64_t> {};

TEST_P(FusedEpilogueGpu, MatchesTheOracleAndTheUnfusedPlan) {
  const int64_t m = GetParam();
  const Plan plain = loadExample("mlp"), fused = loadExample("mlp.fused");
  auto shapes = resolvePlan(fused, {{"M", m}});
  auto plainShapes = resolvePlan(plain, {{"M", m}});
  ASSERT_TRUE(shapes.isOk() && plainShapes.isOk());
  // The same inputs (seeded by buffer name: both plans name them alike).
  HostBuffers inputs = allocateHostBuffers(fused, *shapes);
  ASSERT_TRUE(fillInputs(fused, inputs, {}).isOk());
  HostBuffers plainInputs = allocateHostBuffers(plain, *plainShapes);
  ASSERT_TRUE(fillInputs(plain, plainInputs, {}).isOk());

  auto got = runOnGpu(fused, *shapes, inputs);
  ASSERT_TRUE(got.isOk()) << got.message();
  auto steps = checkSteps(fused, *got, {});
  ASSERT_TRUE(steps.isOk()) << steps.message();
  for (const StepCheck &c : *steps) {
    std::printf(
        "[fused M=%lld] step %s %s: %s (%s %.3g, bound %.2g) %s\n",
        (long long)m, c.step.c_str(), c.kind.c_str(),
        c.passed ? "ok" : "FAILED", c.exact ? "mismatches" : c.metric.c_str(),
        c.exact ? double(c.mismatches) : c.relError, c.bound, c.detail.c_str());
    EXPECT_TRUE(c.passed) << c.step << ": " << c.detail;
  }
  OutputCheckOptions o;
  o.withOracle = true;
  auto outs = checkOutputs(fused, *shapes, inputs, *got, o);
  ASSERT_TRUE(outs.isOk()) << outs.message();
  ASSERT_EQ(outs->size(), 1u);
  EXPECT_TRUE((*outs)[0].vsOracle.passed)
      << (*outs)[0].vsOracle.metrics.similarity;
  EXPECT_TRUE((*outs)[0].vsReference.passed)
      << (*outs)[0].vsReference.metrics.similarity;

  // The unfused run: its SwiGLU quantize writes what the fused GEMM's
  // epilogue writes.
  auto want = runOnGpu(plain, *plainShapes, plainInputs);
  ASSERT_TRUE(want.isOk()) << want.message();
  const PlanStep *epi = stepWhere(fused, StepKind::Gemm, [](const PlanStep &s) {
    return !!s.gemm.epilogue;
  });
  const PlanStep *swiglu =
      stepWhere(plain, StepKind::Quantize,
                [](const PlanStep &s) { return s.inputs.size() == 2; });
  ASSERT_TRUE(epi && swiglu);
  const TensorComparison codes =
      compareBits(got->at(epi->outputs[0]), want->at(swiglu->outputs[0]));
  const TensorComparison scales =
      compareValues(got->at(epi->outputs[1]), want->at(swiglu->outputs[1]));
  std::printf("[fused M=%lld] epilogue vs the SwiGLU quantize: %lld of %lld "
              "codes differ, scales similarity %.3g\n",
              (long long)m, (long long)codes.mismatches,
              (long long)codes.elements, scales.metrics.similarity);
  EXPECT_LE(codes.mismatches, codes.elements / 100 + 1);
  EXPECT_LT(scales.metrics.similarity, 1e-5);
  const TensorComparison out =
      compareValues(got->at(fused.outputs[0]), want->at(plain.outputs[0]));
  EXPECT_LE(out.metrics.similarity, (*outs)[0].vsOracle.bound);
  EXPECT_EQ(out.metrics.nonFinite, 0);
}

// One row, part of a 64-row slab, two 128-row tiles and a row, a whole
// number of tiles.
INSTANTIATE_TEST_SUITE_P(RaggedM, FusedEpilogueGpu,
                         ::testing::Values(int64_t(1), int64_t(7), int64_t(129),
                                           int64_t(512)));

} // namespace
