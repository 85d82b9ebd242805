//===- PlanVerifyTest.cpp - The verdict on a plan's run, without a GPU ----===//
//
// runtime/plan/PlanVerify.h on runs computed on the CPU as an H100 computes
// them (the oracle with the tensor cores' accumulator model), the checker
// always holding the correct plan (test/runtime/plan/PerTensorPlan.h): a run of
// that plan passes every check; a run of the plan with a wrong kernel constant
// (the GEMM's promotion interval 0 instead of 128) fails at the GEMM step
// and at the output against the oracle, while its quantize steps still
// pass; a non-finite value fails; the bounds and their sources reach the
// checks. PlanVerifyGpuTest.cpp does the same on the GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanVerify.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanErrorBound.h"
#include "runtime/plan/PlanOracle.h"

#include "test/runtime/plan/PerTensorPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace fp8;
using namespace fp8::testplans;
namespace nm = fp8::numerics;

namespace {

constexpr int64_t kM = 64, kN = 128, kK = 4096;

/// The correct plan, its shapes and positive inputs.
struct Fixture {
  Plan plan = perTensorPlan("verify", kN, kK);
  ResolvedPlan shapes;
  HostBuffers inputs;

  Fixture() {
    auto r = resolvePlan(plan, {{"M", kM}});
    EXPECT_TRUE(r.isOk()) << r.message();
    if (!r)
      return;
    shapes = *r;
    inputs = allocateHostBuffers(plan, shapes);
    Status s = fillPositiveInputs(plan, inputs);
    EXPECT_TRUE(s.isOk()) << s.message();
  }

  /// Every buffer after one run of `device` from the inputs, its GEMMs
  /// accumulated as the H100's tensor cores do.
  HostBuffers runAsTheH100(const Plan &device) const {
    HostBuffers b = inputs;
    Status s = runPlanOnCpu(device, b, 1, nm::kHopperFP8Accumulator);
    EXPECT_TRUE(s.isOk()) << s.message();
    return b;
  }

  std::vector<OutputCheck> outputs(const HostBuffers &results,
                                   std::optional<double> stated = {}) const {
    OutputCheckOptions o;
    o.withOracle = true;
    o.statedBound = stated;
    auto c = checkOutputs(plan, shapes, inputs, results, o);
    EXPECT_TRUE(c.isOk()) << c.message();
    return c.isOk() ? *c : std::vector<OutputCheck>{};
  }
};

std::vector<StepCheck> steps(const Plan &plan, const HostBuffers &results) {
  auto c = checkSteps(plan, results, {});
  EXPECT_TRUE(c.isOk()) << c.message();
  return c.isOk() ? *c : std::vector<StepCheck>{};
}

} // namespace

TEST(PlanVerify, TheRunPlanPasses) {
  Fixture f;
  const HostBuffers gpu = f.runAsTheH100(f.plan);
  const std::vector<StepCheck> s = steps(f.plan, gpu);
  ASSERT_EQ(s.size(), 3u);
  for (const StepCheck &c : s)
    EXPECT_TRUE(c.passed) << c.step << ": " << c.detail;
  // The accumulator model differs from the oracle's FP32 sums by about a
  // bf16 rounding step of D, within the step's bound.
  EXPECT_EQ(s[2].step, "gemm");
  EXPECT_GT(s[2].relError, 0);

  const std::vector<OutputCheck> o = f.outputs(gpu);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_TRUE(o[0].haveOracle);
  EXPECT_TRUE(o[0].vsOracle.passed) << o[0].vsOracle.metrics.similarity;
  EXPECT_TRUE(o[0].vsReference.passed) << o[0].vsReference.metrics.similarity;
  EXPECT_DOUBLE_EQ(o[0].vsOracle.bound, o[0].expected.bound);
  EXPECT_DOUBLE_EQ(o[0].expected.bound,
                   2 * meanSquaredRoundingError(DType::E4M3FN));
  EXPECT_EQ(o[0].referenceBound, BoundSource::Derived);
  const VerifyVerdict v = verdict(s, o);
  EXPECT_TRUE(v.passed()) << v.failures();
  EXPECT_EQ(v.failures(), "");
}

TEST(PlanVerify, AWrongKernelConstantFailsAtTheGemm) {
  Fixture f;
  // The run: promotion interval 0. The checker: the plan as compiled.
  const HostBuffers gpu = f.runAsTheH100(withPromotionInterval(f.plan, 0));
  const std::vector<StepCheck> s = steps(f.plan, gpu);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].passed) << s[0].detail; // quantize_x
  EXPECT_TRUE(s[1].passed) << s[1].detail; // quantize_w
  EXPECT_EQ(s[2].step, "gemm");
  EXPECT_FALSE(s[2].passed);
  EXPECT_EQ(s[2].bound, 8e-3);
  EXPECT_GT(s[2].relError, 4 * s[2].bound) << "the mutation is too weak";

  const std::vector<OutputCheck> o = f.outputs(gpu);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_FALSE(o[0].vsOracle.passed) << o[0].vsOracle.metrics.similarity;
  EXPECT_GT(o[0].vsOracle.metrics.similarity, o[0].vsOracle.bound);

  const VerifyVerdict v = verdict(s, o);
  EXPECT_FALSE(v.passed());
  EXPECT_EQ(v.stepsOffOracle, std::vector<std::string>{"gemm"});
  EXPECT_EQ(v.outputsOffOracle, std::vector<std::string>{"d"});
  EXPECT_NE(v.failures().find("step gemm differs from the oracle"),
            std::string::npos)
      << v.failures();
  EXPECT_NE(v.failures().find("output d departs from the oracle"),
            std::string::npos)
      << v.failures();

  // The oracle itself sums in FP32: the promotion interval barely changes
  // its result, which is why the run above models the tensor cores.
  HostBuffers fp32 = f.inputs;
  ASSERT_TRUE(runPlanOnCpu(withPromotionInterval(f.plan, 0), fp32, 1).isOk());
  const std::vector<StepCheck> s32 = steps(f.plan, fp32);
  EXPECT_TRUE(s32[2].passed);
  EXPECT_LT(s32[2].relError, 1e-3);
}

TEST(PlanVerify, NonFiniteValuesFail) {
  Fixture f;
  HostBuffers gpu = f.runAsTheH100(f.plan);
  gpu.at("d").set(5, std::numeric_limits<float>::quiet_NaN());
  const std::vector<StepCheck> s = steps(f.plan, gpu);
  EXPECT_FALSE(s[2].passed);
  EXPECT_EQ(s[2].detail, "1 non-finite values");
  const std::vector<OutputCheck> o = f.outputs(gpu);
  EXPECT_EQ(o[0].vsOracle.metrics.nonFinite, 1);
  EXPECT_FALSE(o[0].vsOracle.passed);
  EXPECT_FALSE(o[0].vsReference.passed);
  EXPECT_EQ(verdict(s, o).failures(),
            "step gemm differs from the oracle; output d departs from the "
            "oracle; output d exceeds its quantization-error bound");
}

TEST(PlanVerify, AStatedBoundReplacesTheDerivedOneForTheRecipeOnly) {
  Fixture f;
  const HostBuffers gpu = f.runAsTheH100(f.plan);
  const std::vector<OutputCheck> o = f.outputs(gpu, 1e-12);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].referenceBound, BoundSource::Stated);
  EXPECT_EQ(o[0].vsReference.bound, 1e-12);
  EXPECT_FALSE(o[0].vsReference.passed);
  // The check against the oracle keeps the derived bound.
  EXPECT_DOUBLE_EQ(o[0].vsOracle.bound, o[0].expected.bound);
  EXPECT_TRUE(o[0].vsOracle.passed);
  const VerifyVerdict v = verdict({}, o);
  EXPECT_EQ(v.outputsOverBound, std::vector<std::string>{"d"});
  EXPECT_TRUE(v.outputsOffOracle.empty());
  EXPECT_EQ(v.failures(), "output d exceeds its quantization-error bound");

  // A run on the oracle itself: the recipe's check alone.
  HostBuffers cpu = f.inputs;
  ASSERT_TRUE(runPlanOnCpu(f.plan, cpu, 1).isOk());
  OutputCheckOptions opts;
  auto c = checkOutputs(f.plan, f.shapes, f.inputs, cpu, opts);
  ASSERT_TRUE(c.isOk()) << c.message();
  EXPECT_FALSE((*c)[0].haveOracle);
  EXPECT_TRUE((*c)[0].passed());
  EXPECT_EQ((*c)[0].referenceBound, BoundSource::Derived);
}
