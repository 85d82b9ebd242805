//===- PlanFusedStepsTest.cpp - Epilogue and interleave steps -------------===//
//
// The plan steps of GEMM results quantized in the epilogue: a GEMM step
// whose spec has an epilogue (codes and scales out) and the interleave of
// two weights, valid as built and through JSON, and each check's message.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"

#include "test/runtime/plan/DeepSeekPlan.h"

#include <gtest/gtest.h>

using namespace fp8;
using namespace fp8::testplans;

namespace {

/// x [M, 256] quantized per 1x128 (run), w [128, 256] per 128x128
/// (prepare), D = x w^T with promotion every 128; its reference.
Plan tinyPlan() { return deepseekPlan("tiny", 128, 256); }

/// tinyPlan() with its GEMM's result quantized in the epilogue (1x128,
/// the identity), written to codes and scales.
Plan epiloguePlan() {
  Plan p = tinyPlan();
  for (PlanBuffer &b : p.buffers)
    if (b.name == "d")
      b.dtype = DType::E4M3FN;
  p.buffers.push_back(buffer("ds", DType::F32, {M(), C(1)}, BufferRole::Temp));
  PlanStep &g = p.steps[2];
  GemmEpilogue e;
  e.program = EwProgram::identity(DType::BF16);
  e.granularity = Granularity::block(1, 128);
  g.gemm.epilogue = e;
  g.outputs = {"d", "ds"};
  p.reference.clear();
  return p;
}

/// tinyPlan() whose weight is the interleave of two [64, 256] halves.
Plan interleavePlan() {
  Plan p = tinyPlan();
  for (PlanBuffer &b : p.buffers)
    if (b.name == "w")
      b.role = BufferRole::Temp;
  p.buffers.push_back(
      buffer("w0", DType::BF16, {C(64), C(256)}, BufferRole::Weight));
  p.buffers.push_back(
      buffer("w1", DType::BF16, {C(64), C(256)}, BufferRole::Weight));
  PlanStep il;
  il.name = "interleave";
  il.kind = StepKind::Interleave;
  il.phase = Phase::Prepare;
  il.inputs = {"w0", "w1"};
  il.outputs = {"w"};
  il.block = 32;
  il.aux.kind = AuxKind::Interleave;
  il.aux.program = EwProgram::identity(DType::BF16);
  il.aux.out = DType::BF16;
  p.steps.insert(p.steps.begin(), il);
  p.reference.clear();
  return p;
}

} // namespace

TEST(Plan, EpilogueAndInterleaveStepsAreChecked) {
  // Valid as built, and through JSON.
  for (const Plan &p : {epiloguePlan(), interleavePlan()}) {
    ASSERT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
    auto back = parsePlan(toJSON(p), "'p'");
    ASSERT_TRUE(back.isOk()) << back.message();
    EXPECT_EQ(toJSON(*back), toJSON(p));
    auto r = resolvePlan(p, {{"M", 7}});
    EXPECT_TRUE(r.isOk()) << r.message();
  }
  auto epilogue = [](auto edit) {
    Plan p = epiloguePlan();
    edit(p);
    return validatePlan(p).message();
  };
  EXPECT_EQ(epilogue([](Plan &p) { p.steps[2].outputs = {"d"}; }),
            "step 'gemm': expected 2 outputs (codes, scales: the epilogue "
            "quantizes D), found 1");
  EXPECT_EQ(epilogue([](Plan &p) { p.steps[2].outputs = {"ds", "d"}; }),
            "step 'gemm': expected codes 'ds' to be e4m3fn, found f32");
  // The scales' shape follows the quantized result's row blocks.
  Plan wide = epiloguePlan();
  for (PlanBuffer &b : wide.buffers)
    if (b.name == "ds")
      b.shape = {M(), C(2)};
  auto r = resolvePlan(wide, {{"M", 7}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.message(), "step 'gemm': expected scales 'ds' to have shape "
                         "[7, 1], found [7, 2]");
  auto interleave = [](auto edit) {
    Plan p = interleavePlan();
    edit(p);
    return validatePlan(p).message();
  };
  EXPECT_EQ(interleave([](Plan &p) { p.steps[0].inputs = {"w0"}; }),
            "step 'interleave': expected 2 inputs (a, b), found 1");
  EXPECT_EQ(interleave([](Plan &p) { p.steps[0].aux.out = DType::F32; }),
            "step 'interleave': expected output 'w' to be f32, found bf16");
  // Rows that are not whole blocks, and the result's rows.
  Plan odd = interleavePlan();
  odd.steps[0].block = 48;
  r = resolvePlan(odd, {{"M", 7}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.message(), "step 'interleave': expected rows [R, C] with R a "
                         "multiple of the block (48), found [64, 256]");
  // JSON: a block is an interleave step's alone, and positive.
  std::string json = toJSON(interleavePlan());
  const std::string from = "\"block\": 32";
  ASSERT_NE(json.find(from), std::string::npos);
  std::string zero = json;
  zero.replace(zero.find(from), from.size(), "\"block\": 0");
  EXPECT_NE(parsePlan(zero, "'p'").message().find("'block'"),
            std::string::npos);
  std::string gemm = toJSON(tinyPlan());
  gemm.replace(gemm.find("\"batch\":"), 0, "\"block\": 4, ");
  EXPECT_EQ(parsePlan(gemm, "'p'").message(),
            "expected no 'block' in gemm step 'gemm' (interleave steps only)");
}
