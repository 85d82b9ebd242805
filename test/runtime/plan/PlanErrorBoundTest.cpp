//===- PlanErrorBoundTest.cpp - The recipe's error derived from a plan ----===//
//
// runtime/plan/PlanErrorBound.h: each format's mean squared relative rounding
// error against rounding done with numerics/, and the bounds derived
// for one GEMM (E4M3 x E4M3, E4M3 x E5M2, through a transpose), a chain of
// two, the example MLP (the FFN shape: a quantization shared by two GEMMs
// counted once) and an output no quantization reaches (the floor).
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanErrorBound.h"
#include "numerics/Formats.h"
#include "numerics/Random.h"
#include "runtime/plan/Plan.h"

#include "test/runtime/plan/DeepSeekPlan.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fp8;
using namespace fp8::testplans;
namespace nm = fp8::numerics;

namespace {

const double kE4M3 = meanSquaredRoundingError(DType::E4M3FN);
const double kE5M2 = meanSquaredRoundingError(DType::E5M2);

/// The bound of the plan's only output, checked to exist.
OutputErrorBound onlyBound(const Plan &p) {
  EXPECT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
  const std::vector<OutputErrorBound> b = deriveErrorBounds(p);
  EXPECT_EQ(b.size(), 1u);
  return b.empty() ? OutputErrorBound{} : b[0];
}

/// Turns the weight of deepseekPlan into an E5M2 tensor.
void weightToE5M2(Plan &p) {
  for (PlanBuffer &b : p.buffers)
    if (b.name == "wq")
      b.dtype = DType::E5M2;
  p.steps[1].aux.quant.format = DType::E5M2;
  p.steps[2].gemm.b.format = DType::E5M2;
}

/// Appends to deepseekPlan (output "d" [M, n]) a second GEMM: d quantized
/// per 1x128, times w2 [n2, n] quantized per 128x128, into the output "y".
void appendGemm(Plan &p, int64_t n, int64_t n2) {
  for (PlanBuffer &b : p.buffers)
    if (b.name == "d")
      b.role = BufferRole::Temp;
  p.buffers.push_back(
      buffer("w2", DType::BF16, {C(n2), C(n)}, BufferRole::Weight));
  p.buffers.push_back(
      buffer("dq", DType::E4M3FN, {M(), C(n)}, BufferRole::Temp));
  p.buffers.push_back(
      buffer("ds", DType::F32, {M(), C(n / 128)}, BufferRole::Temp));
  p.buffers.push_back(
      buffer("w2q", DType::E4M3FN, {C(n2), C(n)}, BufferRole::Temp));
  p.buffers.push_back(
      buffer("w2s", DType::F32, {C(n2 / 128), C(n / 128)}, BufferRole::Temp));
  p.buffers.push_back(
      buffer("y", DType::BF16, {M(), C(n2)}, BufferRole::Output));
  PlanStep qd = p.steps[0];
  qd.name = "quantize_d";
  qd.inputs = {"d"};
  qd.outputs = {"dq", "ds"};
  PlanStep qw = p.steps[1];
  qw.name = "quantize_w2";
  qw.inputs = {"w2"};
  qw.outputs = {"w2q", "w2s"};
  PlanStep g = p.steps[2];
  g.name = "gemm2";
  g.inputs = {"dq", "ds", "w2q", "w2s"};
  g.outputs = {"y"};
  g.gemm.n = n2;
  g.gemm.k = n;
  p.steps.insert(p.steps.end(), {qd, qw, g});
  p.outputs = {"y"};
  RefOp r = p.reference[0];
  r.inputs = {"d", "w2"};
  r.out = "y";
  r.shape = {M(), C(n2)};
  p.reference.push_back(r);
}

} // namespace

TEST(PlanErrorBound, RoundingErrorOfEachFormat) {
  // 2^(-2m) / 12 * (3/8) / ln 2 for m mantissa bits.
  EXPECT_NEAR(kE4M3, 7.04e-4, 0.01e-4);
  EXPECT_NEAR(kE5M2, 2.82e-3, 0.01e-3);
  EXPECT_DOUBLE_EQ(kE5M2, 4 * kE4M3);
  EXPECT_DOUBLE_EQ(meanSquaredRoundingError(DType::BF16), kE4M3 / 256);
  EXPECT_EQ(meanSquaredRoundingError(DType::UE8M0), 0);

  // What rounding does to magnitudes spread log-uniformly over the normal
  // range of both formats (2^-6 .. 2^8): the model within 2%.
  nm::Rng rng(7);
  for (DType f : {DType::E4M3FN, DType::E5M2}) {
    double sum = 0;
    const int n = 1 << 20;
    for (int i = 0; i < n; ++i) {
      const float x = float(std::exp2(-6.0 + 14.0 * rng.uniform()));
      const float r = nm::fp8ToFloat(nm::floatToFP8(x, f), f);
      sum += double(r - x) * double(r - x) / (double(x) * double(x));
    }
    EXPECT_NEAR(sum / n, meanSquaredRoundingError(f),
                0.02 * meanSquaredRoundingError(f))
        << toString(f);
  }
}

TEST(PlanErrorBound, OneGemm) {
  const OutputErrorBound b = onlyBound(deepseekPlan("one", 256, 512));
  EXPECT_EQ(b.output, "d");
  EXPECT_DOUBLE_EQ(b.relSquaredError, 2 * kE4M3); // 1.41e-3
  EXPECT_DOUBLE_EQ(b.expectedSimilarity, kE4M3);
  EXPECT_DOUBLE_EQ(b.bound, 2 * kE4M3);
  EXPECT_EQ(b.depth, 1);
  EXPECT_EQ(b.pathQuantizations, 1);
  EXPECT_EQ(b.quantizations, 2);
}

TEST(PlanErrorBound, OneGemmWithAnE5M2Operand) {
  Plan p = deepseekPlan("mixed", 256, 512);
  weightToE5M2(p);
  const OutputErrorBound b = onlyBound(p);
  EXPECT_DOUBLE_EQ(b.relSquaredError, kE4M3 + kE5M2); // 3.52e-3
  EXPECT_DOUBLE_EQ(b.bound, kE4M3 + kE5M2);

  // The example with E5M2 gradients and E4M3 weights, transposed: the same.
  auto g = loadPlan(std::string(FP8_EXAMPLE_PLANS) +
                    "/grad-projection.sm_90a.plan.json");
  ASSERT_TRUE(g.isOk()) << g.message();
  const OutputErrorBound gb = onlyBound(*g);
  EXPECT_DOUBLE_EQ(gb.relSquaredError, kE4M3 + kE5M2);
  EXPECT_EQ(gb.depth, 1);
  EXPECT_EQ(gb.quantizations, 2);
}

TEST(PlanErrorBound, ChainOfTwoGemms) {
  Plan p = deepseekPlan("chain", 256, 512);
  appendGemm(p, 256, 128);
  const OutputErrorBound b = onlyBound(p);
  EXPECT_EQ(b.output, "y");
  // x, w, d and w2 quantized: 2.8e-3.
  EXPECT_DOUBLE_EQ(b.relSquaredError, 4 * kE4M3);
  EXPECT_DOUBLE_EQ(b.bound, 4 * kE4M3);
  EXPECT_EQ(b.depth, 2);
  EXPECT_EQ(b.pathQuantizations, 2);
  EXPECT_EQ(b.quantizations, 4);
}

TEST(PlanErrorBound, TheExampleFfn) {
  // x quantized once for the gate and up projections, the weights, the
  // SwiGLU fused into the quantize of the down projection's input, the
  // residual add: five quantizations, x's counted once (3.5e-3).
  auto p = loadPlan(std::string(FP8_EXAMPLE_PLANS) + "/mlp.sm_90a.plan.json");
  ASSERT_TRUE(p.isOk()) << p.message();
  const OutputErrorBound b = onlyBound(*p);
  EXPECT_EQ(b.output, "result0");
  EXPECT_DOUBLE_EQ(b.relSquaredError, 5 * kE4M3);
  EXPECT_DOUBLE_EQ(b.expectedSimilarity, 2.5 * kE4M3);
  EXPECT_DOUBLE_EQ(b.bound, 5 * kE4M3);
  EXPECT_EQ(b.depth, 2);
  EXPECT_EQ(b.pathQuantizations, 2);
  EXPECT_EQ(b.quantizations, 5);
}

TEST(PlanErrorBound, OutputsWithoutQuantizationGetTheFloor) {
  // An output computed from the input alone next to the GEMM's.
  Plan p = deepseekPlan("floor", 256, 512);
  p.buffers.push_back(
      buffer("y", DType::BF16, {M(), C(512)}, BufferRole::Output));
  PlanStep e;
  e.name = "double_x";
  e.kind = StepKind::Elementwise;
  e.inputs = {"x", "x"};
  e.outputs = {"y"};
  e.aux.kind = AuxKind::Elementwise;
  e.aux.program.inputs = {DType::BF16, DType::BF16};
  e.aux.program.instrs = {
      {EwOp::Add, {EwArg::input(0), EwArg::input(1)}, DType::BF16}};
  e.aux.program.result = EwArg::result(0);
  p.steps.push_back(e);
  p.outputs = {"d", "y"};
  RefOp r;
  r.kind = RefOp::Kind::Elementwise;
  r.inputs = {"x", "x"};
  r.out = "y";
  r.shape = {M(), C(512)};
  r.program = e.aux.program;
  p.reference.push_back(r);
  ASSERT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
  const std::vector<OutputErrorBound> b = deriveErrorBounds(p);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].output, "d");
  EXPECT_DOUBLE_EQ(b[0].bound, 2 * kE4M3);
  EXPECT_EQ(b[1].output, "y");
  EXPECT_EQ(b[1].relSquaredError, 0);
  EXPECT_EQ(b[1].depth, 0);
  EXPECT_EQ(b[1].quantizations, 0);
  EXPECT_EQ(b[1].bound, kMinSimilarityBound);
}
