//===- PlanVerifyGpuTest.cpp - The verdict on a plan's GPU run ------------===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh).
// The per-tensor E4M3 GEMM plan of test/runtime/plan/PerTensorPlan.h (M=64,
// N=128, K=4096, promotion every 128, positive inputs) runs on the GPU
// through the plan executor and is checked by runtime/plan/PlanVerify.h with
// the plan as compiled: the run of that plan passes every check; the run
// of the plan with the GEMM's promotion interval set to 0 (a wrong kernel
// constant: the tensor cores' truncating accumulator then sums all of K)
// must fail at the GEMM step, its quantize steps passing.
// PlanVerifyTest.cpp is the same test on the CPU, the GPU modelled. The
// same plan's run phase captured as one CUDA graph (runtime/plan/
// PlanGraph.cpp) writes the step-by-step run's bytes. A GEMM step's amax of
// D reaches the quantize step that reads it (amaxPlan), exactly.
//
//===----------------------------------------------------------------------===//

#include "numerics/Quantize.h"
#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanVerify.h"

#include "test/runtime/plan/PerTensorPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace fp8;
using namespace fp8::testplans;

namespace {

constexpr int64_t kM = 64, kN = 128, kK = 4096;

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

/// The run of `device` checked against `plan`, one line printed per check.
struct Checked {
  std::vector<StepCheck> steps;
  std::vector<OutputCheck> outputs;
  VerifyVerdict verdict;
};

Checked runAndCheck(const Plan &plan, const Plan &device, const char *what) {
  Checked c;
  auto shapes = resolvePlan(plan, {{"M", kM}});
  EXPECT_TRUE(shapes.isOk()) << shapes.message();
  if (!shapes)
    return c;
  HostBuffers inputs = allocateHostBuffers(plan, *shapes);
  Status s = fillPositiveInputs(plan, inputs);
  EXPECT_TRUE(s.isOk()) << s.message();
  auto gpu = runOnGpu(device, *shapes, inputs);
  EXPECT_TRUE(gpu.isOk()) << gpu.message();
  if (!gpu)
    return c;
  auto steps = checkSteps(plan, *gpu, {});
  EXPECT_TRUE(steps.isOk()) << steps.message();
  OutputCheckOptions o;
  o.withOracle = true;
  auto outs = checkOutputs(plan, *shapes, inputs, *gpu, o);
  EXPECT_TRUE(outs.isOk()) << outs.message();
  if (!steps || !outs)
    return c;
  c.steps = *steps;
  c.outputs = *outs;
  c.verdict = verdict(c.steps, c.outputs);
  for (const StepCheck &sc : c.steps)
    std::printf("[verify] %s: step %s %s: %s (max |d - oracle| / max |oracle| "
                "%.3g, bound %.0e) %s\n",
                what, sc.step.c_str(), sc.kind.c_str(),
                sc.passed ? "ok" : "FAILED", sc.relError, sc.bound,
                sc.detail.c_str());
  for (const OutputCheck &oc : c.outputs)
    std::printf("[verify] %s: output %s: similarity %.3g to the oracle "
                "(bound %.3g), %.3g to the unquantized graph (bound %.3g)\n",
                what, oc.name.c_str(), oc.vsOracle.metrics.similarity,
                oc.vsOracle.bound, oc.vsReference.metrics.similarity,
                oc.vsReference.bound);
  std::printf(
      "[verify] %s: %s %s\n", what,
      c.verdict.passed() ? "PASSED" : "FAILED:", c.verdict.failures().c_str());
  return c;
}

} // namespace

TEST(PlanVerifyGpu, TheCompiledPlanPasses) {
  const Plan plan = perTensorPlan("verify_gpu", kN, kK);
  const Checked c = runAndCheck(plan, plan, "compiled plan");
  ASSERT_EQ(c.steps.size(), 3u);
  for (const StepCheck &s : c.steps)
    EXPECT_TRUE(s.passed) << s.step << ": " << s.detail;
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_TRUE(c.outputs[0].vsOracle.passed);
  EXPECT_TRUE(c.outputs[0].vsReference.passed);
  EXPECT_TRUE(c.verdict.passed()) << c.verdict.failures();
}

TEST(PlanVerifyGpu, AWrongPromotionIntervalFailsAtTheGemm) {
  const Plan plan = perTensorPlan("verify_gpu", kN, kK);
  const Checked c =
      runAndCheck(plan, withPromotionInterval(plan, 0), "promotion 0");
  ASSERT_EQ(c.steps.size(), 3u);
  EXPECT_TRUE(c.steps[0].passed) << c.steps[0].detail; // quantize_x
  EXPECT_TRUE(c.steps[1].passed) << c.steps[1].detail; // quantize_w
  EXPECT_EQ(c.steps[2].step, "gemm");
  EXPECT_FALSE(c.steps[2].passed) << c.steps[2].relError;
  EXPECT_EQ(c.verdict.stepsOffOracle, std::vector<std::string>{"gemm"});
  EXPECT_FALSE(c.verdict.passed());
}

/// The run phase captured as one CUDA graph writes what the step-by-step
/// run writes, bit for bit, into buffers cleared before each of two
/// launches.
TEST(PlanVerifyGpu, TheRunAsOneGraphEqualsTheStepByStepRun) {
  const Plan plan = perTensorPlan("graph_gpu", kN, kK);
  auto shapes = resolvePlan(plan, {{"M", kM}});
  ASSERT_TRUE(shapes.isOk()) << shapes.message();
  HostBuffers inputs = allocateHostBuffers(plan, *shapes);
  ASSERT_TRUE(fillPositiveInputs(plan, inputs).isOk());
  auto gpu = GpuPlan::create(plan, *shapes);
  ASSERT_TRUE(gpu.isOk()) << gpu.message();
  ASSERT_TRUE((*gpu)->upload(inputs).isOk());
  ASSERT_TRUE((*gpu)->run(Phase::Prepare, true).isOk());
  ASSERT_TRUE((*gpu)->run(Phase::Run, true).isOk());
  HostBuffers stepByStep;
  for (const PlanBuffer &b : plan.buffers)
    ASSERT_TRUE((*gpu)->download(b.name, stepByStep[b.name]).isOk());
  Status captured = (*gpu)->captureRun();
  ASSERT_TRUE(captured.isOk()) << captured.message();
  for (int launch = 0; launch < 2; ++launch) {
    // upload zeroes every buffer the run writes: the graph must write them.
    ASSERT_TRUE((*gpu)->upload(inputs).isOk());
    ASSERT_TRUE((*gpu)->run(Phase::Prepare, true).isOk());
    ASSERT_TRUE((*gpu)->launchGraph().isOk());
    ASSERT_TRUE((*gpu)->sync(60, "the graph").isOk());
    for (const PlanBuffer &b : plan.buffers) {
      HostTensor t;
      ASSERT_TRUE((*gpu)->download(b.name, t).isOk());
      EXPECT_EQ(t.data, stepByStep.at(b.name).data)
          << "buffer " << b.name << " after graph launch " << launch;
    }
  }
}

/// A GEMM step writes D and its amax, the per-tensor quantize step after it
/// reads the amax (amaxPlan): the amax is the largest magnitude of the D
/// the GEMM stored, bit for bit, and the quantize the oracle's two-pass
/// quantize of that D; run step by step and as one CUDA graph (the amax's
/// zeroing captured with the GEMM). Ragged M.
TEST(PlanVerifyGpu, TheGemmsAmaxReachesTheQuantize) {
  const Plan plan = amaxPlan("amax_gpu", kN, kK);
  for (int64_t m : {int64_t(129), int64_t(7)}) {
    auto shapes = resolvePlan(plan, {{"M", m}});
    ASSERT_TRUE(shapes.isOk()) << shapes.message();
    HostBuffers inputs = allocateHostBuffers(plan, *shapes);
    InputOptions o;
    o.seed = uint64_t(m);
    ASSERT_TRUE(fillInputs(plan, inputs, o).isOk());
    auto gpu = GpuPlan::create(plan, *shapes);
    ASSERT_TRUE(gpu.isOk()) << gpu.message();
    for (bool graph : {false, true}) {
      const std::string what =
          "M = " + std::to_string(m) + (graph ? ", one graph" : ", by step");
      ASSERT_TRUE((*gpu)->upload(inputs).isOk());
      ASSERT_TRUE((*gpu)->run(Phase::Prepare, true).isOk());
      if (graph) {
        Status captured = (*gpu)->captureRun();
        ASSERT_TRUE(captured.isOk()) << captured.message();
        ASSERT_TRUE((*gpu)->launchGraph().isOk());
        ASSERT_TRUE((*gpu)->sync(60, "the graph").isOk());
      } else {
        Status ran = (*gpu)->run(Phase::Run, true);
        ASSERT_TRUE(ran.isOk()) << what << ": " << ran.message();
      }
      HostTensor d, amax, dq, dqs;
      ASSERT_TRUE((*gpu)->download("d", d).isOk());
      ASSERT_TRUE((*gpu)->download("d_amax", amax).isOk());
      ASSERT_TRUE((*gpu)->download("dq", dq).isOk());
      ASSERT_TRUE((*gpu)->download("dqs", dqs).isOk());
      float want = 0;
      for (int64_t i = 0; i < d.elements(); ++i)
        want = std::max(want, std::fabs(d.get(i)));
      EXPECT_GT(want, 0.0f) << what;
      EXPECT_EQ(amax.get(0), want) << what << ": D's amax";
      const std::vector<float> dv = d.toFloat();
      QuantRecipe r;
      r.granularity = Granularity::perTensor();
      auto q = numerics::quantize(dv.data(), m, kN, r);
      ASSERT_TRUE(q.isOk()) << q.message();
      EXPECT_EQ(dqs.get(0), q->scales[0]) << what << ": scale";
      EXPECT_TRUE(dq.data == q->codes) << what << ": codes differ";
    }
  }
}
