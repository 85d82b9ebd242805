//===- PlanAmaxTest.cpp - D's amax from a GEMM step to a quantize step ----===//
//
// A GEMM step that writes D's amax (KernelSpec::amaxOut: outputs d and its
// amax) and the per-tensor quantize step that reads it (ElementwiseSpec::
// amaxIn: inputs the program's, then the amax): valid as built and through
// JSON, each check's message, and the CPU oracle's run: the amax is D's as
// stored, the quantize the two-pass one of D.
//
//===----------------------------------------------------------------------===//

#include "numerics/Quantize.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanOracle.h"

#include "test/runtime/plan/PerTensorPlan.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fp8;
using namespace fp8::testplans;

TEST(PlanAmax, TheGemmsAmaxReachesTheQuantize) {
  const Plan p = amaxPlan("amax", 128, 256);
  ASSERT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
  auto back = parsePlan(toJSON(p), "'p'");
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(toJSON(*back), toJSON(p));
  EXPECT_NE(toJSON(p).find("\"amax_out\""), std::string::npos);
  EXPECT_NE(toJSON(p).find("\"amax_in\""), std::string::npos);
  auto shapes = resolvePlan(p, {{"M", 7}});
  ASSERT_TRUE(shapes.isOk()) << shapes.message();

  HostBuffers host = allocateHostBuffers(p, *shapes);
  ASSERT_TRUE(fillInputs(p, host, InputOptions{}).isOk());
  Status run = runPlanOnCpu(p, host, 1);
  ASSERT_TRUE(run.isOk()) << run.message();
  const HostTensor &d = host.at("d");
  float amax = 0;
  for (int64_t i = 0; i < d.elements(); ++i)
    amax = std::max(amax, std::fabs(d.get(i)));
  ASSERT_GT(amax, 0.0f);
  EXPECT_EQ(host.at("d_amax").get(0), amax);
  const std::vector<float> dv = d.toFloat();
  QuantRecipe r;
  r.granularity = Granularity::perTensor();
  auto want = numerics::quantize(dv.data(), 7, 128, r);
  ASSERT_TRUE(want.isOk()) << want.message();
  EXPECT_EQ(host.at("dq").data, want->codes);
  EXPECT_EQ(host.at("dqs").get(0), want->scales[0]);
}

TEST(PlanAmax, StepsWithAnAmaxAreChecked) {
  auto problem = [](auto edit) {
    Plan p = amaxPlan("amax", 128, 256);
    edit(p);
    return validatePlan(p).message();
  };
  EXPECT_EQ(problem([](Plan &p) { p.steps[2].outputs = {"d"}; }),
            "step 'gemm': expected 2 outputs (d, amax: the epilogue writes "
            "D's amax), found 1");
  EXPECT_EQ(problem([](Plan &p) { p.steps[2].outputs = {"d", "dq"}; }),
            "step 'gemm': expected D's amax 'dq' to be f32, found e4m3fn");
  EXPECT_EQ(problem([](Plan &p) { p.steps[3].inputs = {"d"}; }),
            "step 'quantize_d': expected 2 inputs (one per program input, "
            "then the amax), found 1");
  EXPECT_EQ(problem([](Plan &p) { p.steps[3].inputs = {"d", "xq"}; }),
            "step 'quantize_d': expected amax 'xq' to be f32, found e4m3fn");
  // One f32 a matrix, shaped as per-tensor scales.
  Plan flat = amaxPlan("amax", 128, 256);
  for (PlanBuffer &b : flat.buffers)
    if (b.name == "d_amax")
      b.shape = {C(1)};
  auto r = resolvePlan(flat, {{"M", 7}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.message(), "step 'gemm': expected D's amax 'd_amax' to have "
                         "shape [1, 1], found [1]");
  // Only per-tensor current scaling reads an amax.
  EXPECT_EQ(problem([](Plan &p) {
              p.steps[3].aux.quant.granularity = Granularity::block(1, 128);
            }),
            "step 'quantize_d': expected a quantize with a given amax to take "
            "per-tensor blocks with current scaling, found a quantize of "
            "1x128");
}
