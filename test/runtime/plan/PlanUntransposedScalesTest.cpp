//===- PlanUntransposedScalesTest.cpp - A scales from before a transpose --===//
//
// runtime/plan/PlanScaleMirror.h, untransposedAScales: a GEMM whose A was
// transposed in FP8 from 128x1-quantized codes reads the transpose's input
// scales ([K/128][M], the layout the sm_90a kernel takes by TMA) instead of
// the transposed [M][K/128]. Here: the example weight-gradient plan with
// its transposes as steps (three K-grouped GEMMs, each A a transposed
// gradient), then each condition of the rule broken one at a time. Then
// transposedQuantizeWriter: the example plan as compiled, each transpose
// fused into its quantize, whose mirror holds those scales.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanScaleMirror.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

using namespace fp8;

namespace {

Plan wgradPlan(const char *name = "moe-wgrad.transposes") {
  auto p = loadPlan(std::string(FP8_EXAMPLE_PLANS) + "/" + name +
                    ".sm_90a.plan.json");
  EXPECT_TRUE(p.isOk()) << p.message();
  return p.isOk() ? *p : Plan{};
}

size_t stepIndex(const Plan &p, const std::string &name) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].name == name)
      return i;
  ADD_FAILURE() << "no step " << name;
  return 0;
}

/// The index of the step that writes buffer `name`.
size_t writerIndex(const Plan &p, const std::string &name) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    for (const std::string &o : p.steps[i].outputs)
      if (o == name)
        return i;
  ADD_FAILURE() << "no writer of " << name;
  return 0;
}

/// The step that writes buffer `name`.
const PlanStep &writerOf(const Plan &p, const std::string &name) {
  return p.steps[writerIndex(p, name)];
}

/// What the rule finds for step `gemm` of the example plan at M = 640 after
/// `edit` (of the plan, then of its resolved shapes), or "".
std::string foundAfter(
    const std::string &gemm, const std::function<void(Plan &)> &edit,
    const std::function<void(ResolvedPlan &)> &reshape = [](ResolvedPlan &) {},
    bool isA = true) {
  Plan p = wgradPlan();
  auto r = resolvePlan(p, {{"M", 640}});
  EXPECT_TRUE(r.isOk()) << r.message();
  if (!r.isOk())
    return "";
  edit(p);
  reshape(*r);
  const auto u = untransposedScales(p, *r, stepIndex(p, gemm), isA);
  return u ? u->buffer : "";
}

} // namespace

TEST(PlanUntransposedScales, EveryWeightGradientReadsItsScalesUntransposed) {
  const Plan p = wgradPlan();
  auto r = resolvePlan(p, {{"M", 640}});
  ASSERT_TRUE(r.isOk()) << r.message();
  const ScaleMirrorPlan mp = planScaleMirrors(p, *r);
  int gemms = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep &s = p.steps[i];
    const ScaleSource a = scaleSource(mp, i, /*isA=*/true);
    if (s.kind != StepKind::Gemm) {
      EXPECT_TRUE(a.buffer.empty()) << s.name;
      continue;
    }
    ++gemms;
    ASSERT_EQ(s.gemm.kind, GemmKind::GroupedK) << s.name;
    // A's scales are a transpose step's output; the GEMM reads that step's
    // input, [ceil(640 / 128)][M], with strides 1 and M.
    const PlanStep &t = writerOf(p, s.inputs[1]);
    ASSERT_EQ(t.kind, StepKind::Transpose) << s.name;
    EXPECT_EQ(a.buffer, t.inputs[1]) << s.name;
    const Shape &before = r->shapes.at(a.buffer);
    const int64_t m = r->shapes.at(s.inputs[0])[0];
    EXPECT_EQ(before, (Shape{5, m})) << s.name;
    EXPECT_EQ(a.ldOuter, 1) << s.name;
    EXPECT_EQ(a.ldK, m) << s.name;
    EXPECT_EQ(a.mirror, -1) << s.name;
    // So does B (1x128 too: per-column scales, which the kernel's loader
    // warp reads a k-block at a time), with strides 1 and N.
    const ScaleSource b = scaleSource(mp, i, /*isA=*/false);
    EXPECT_EQ(b.buffer, writerOf(p, s.inputs[3]).inputs[1]) << s.name;
    const int64_t n = r->shapes.at(s.inputs[2])[0];
    EXPECT_EQ(r->shapes.at(b.buffer), (Shape{5, n})) << s.name;
    EXPECT_EQ(b.ldOuter, 1) << s.name;
    EXPECT_EQ(b.ldK, n) << s.name;
  }
  EXPECT_EQ(gemms, 3);
  EXPECT_TRUE(mp.mirrors.empty());
}

TEST(PlanUntransposedScales, EachConditionBrokenIsRefused) {
  const std::string base = foundAfter("gemm_7", [](Plan &) {});
  ASSERT_FALSE(base.empty());
  auto gemm = [](Plan &p) -> PlanStep & {
    return p.steps[stepIndex(p, "gemm_7")];
  };
  auto transpose = [](Plan &p) -> PlanStep & {
    return p.steps[stepIndex(p, "transpose_5")];
  };
  struct Case {
    const char *what;
    std::function<void(Plan &)> edit;
    std::function<void(ResolvedPlan &)> reshape = [](ResolvedPlan &) {};
  };
  const std::vector<Case> cases = {
      {"sm_100a", [&](Plan &p) { gemm(p).gemm.arch = Arch::SM100a; }},
      {"a contiguous grouped GEMM",
       [&](Plan &p) { gemm(p).gemm.kind = GemmKind::GroupedContiguous; }},
      {"A per tensor",
       [&](Plan &p) { gemm(p).gemm.a.granularity = Granularity::perTensor(); }},
      {"ue8m0 scales",
       [&](Plan &p) { gemm(p).gemm.a.granularity.scale = ScaleFormat::UE8M0; }},
      {"a transpose of 1x128 scales",
       [&](Plan &p) {
         transpose(p).aux.quant.granularity = Granularity::block(1, 128);
       }},
      {"the transpose after the GEMM",
       [&](Plan &p) {
         std::swap(p.steps[stepIndex(p, "transpose_5")],
                   p.steps[stepIndex(p, "gemm_7")]);
       }},
      {"a second writer of the transposed scales",
       [&](Plan &p) {
         PlanStep extra = transpose(p);
         extra.name = "again";
         p.steps.push_back(extra);
       }},
      {"a second writer of the scales before the transpose",
       [&](Plan &p) {
         PlanStep extra = writerOf(p, transpose(p).inputs[1]);
         extra.name = "again";
         p.steps.push_back(extra);
       }},
      {"M not a multiple of 4 (no 16-byte pitch)", [](Plan &) {},
       [](ResolvedPlan &r) {
         // gemm_7's A is t10 [2048, M], transposed from t8 [M, 2048].
         r.shapes.at("t10")[0] = 2046;
         r.shapes.at("t8")[1] = 2046;
       }},
      {"a transpose of another matrix", [](Plan &) {},
       [](ResolvedPlan &r) { r.shapes.at("t8")[0] = 641; }},
  };
  for (const Case &c : cases)
    EXPECT_EQ(foundAfter("gemm_7", c.edit, c.reshape), "") << c.what;
}

TEST(PlanUntransposedScales, BHasItsOwnConditions) {
  // gemm_7's B is t12 [7168, M], transposed from t0 [M, 7168] by
  // transpose_6.
  const std::string base =
      foundAfter("gemm_7", [](Plan &) {}, [](ResolvedPlan &) {}, false);
  EXPECT_EQ(base, "t1");
  // B's scales are not read by TMA: no 16-byte pitch needed.
  EXPECT_EQ(foundAfter(
                "gemm_7", [](Plan &) {},
                [](ResolvedPlan &r) {
                  r.shapes.at("t12")[0] = 7166;
                  r.shapes.at("t0")[1] = 7166;
                },
                false),
            "t1");
  auto gemm = [](Plan &p) -> PlanStep & {
    return p.steps[stepIndex(p, "gemm_7")];
  };
  EXPECT_EQ(foundAfter(
                "gemm_7",
                [&](Plan &p) {
                  gemm(p).gemm.b.granularity = Granularity::block(128, 128);
                },
                [](ResolvedPlan &) {}, false),
            "");
  // A's rule does not follow B's operand, nor B's A's.
  EXPECT_EQ(foundAfter(
                "gemm_7",
                [&](Plan &p) {
                  gemm(p).gemm.a.granularity = Granularity::perTensor();
                },
                [](ResolvedPlan &) {}, false),
            "t1");
}

TEST(PlanTransposedQuantize, TheFusedTransposesWriteTheMirrorsTheGemmsRead) {
  const Plan p = wgradPlan("moe-wgrad");
  auto r = resolvePlan(p, {{"M", 640}});
  ASSERT_TRUE(r.isOk()) << r.message();
  const ScaleMirrorPlan mp = planScaleMirrors(p, *r);
  int gemms = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep &s = p.steps[i];
    EXPECT_NE(s.kind, StepKind::Transpose) << s.name << ": not fused";
    if (s.kind != StepKind::Gemm)
      continue;
    ++gemms;
    for (bool isA : {true, false}) {
      const std::string what = s.name + (isA ? " A" : " B");
      // The operand's scales [M][640 / 128] come from a transposed quantize
      // of its [640, M] tokens; the GEMM reads its mirror, [5][pad4(M)].
      const size_t data = isA ? 0 : 2;
      const std::optional<size_t> w = transposedQuantizeWriter(p, *r, i, isA);
      ASSERT_TRUE(w.has_value()) << what;
      const PlanStep &q = p.steps[*w];
      EXPECT_EQ(q.kind, StepKind::Quantize) << what;
      EXPECT_TRUE(q.aux.transposed) << what;
      EXPECT_EQ(q.outputs[0], s.inputs[data]) << what;
      const ScaleSource src = scaleSource(mp, i, isA);
      ASSERT_GE(src.mirror, 0) << what;
      EXPECT_TRUE(src.buffer.empty()) << what;
      const ScaleMirror &m = mp.mirrors[size_t(src.mirror)];
      const int64_t rows = r->shapes.at(s.inputs[data])[0];
      EXPECT_EQ(m.writer, *w) << what;
      EXPECT_EQ(m.scales, s.inputs[data + 1]) << what;
      EXPECT_EQ(m.rows, rows) << what;
      EXPECT_EQ(m.kBlocks, 5) << what;
      EXPECT_EQ(src.ldOuter, 1) << what;
      EXPECT_EQ(src.ldK, (rows + 3) / 4 * 4) << what;
      EXPECT_EQ(mp.writes[*w], src.mirror) << what;
    }
  }
  EXPECT_EQ(gemms, 3);
  // One mirror per quantize: the tokens' serves two GEMMs as B.
  EXPECT_EQ(mp.mirrors.size(), 5u);
}

TEST(PlanTransposedQuantize, EachConditionBrokenIsRefused) {
  const Plan base = wgradPlan("moe-wgrad");
  auto r = resolvePlan(base, {{"M", 640}});
  ASSERT_TRUE(r.isOk()) << r.message();
  const size_t g = stepIndex(base, "gemm_5");
  ASSERT_TRUE(transposedQuantizeWriter(base, *r, g, true).has_value());
  struct Case {
    const char *what;
    std::function<void(Plan &)> edit;
  };
  const std::vector<Case> cases = {
      {"a quantize that does not transpose",
       [&](Plan &p) {
         p.steps[writerIndex(p, p.steps[g].inputs[1])].aux.transposed = false;
       }},
      {"sm_100a", [&](Plan &p) { p.steps[g].gemm.arch = Arch::SM100a; }},
      {"a contiguous grouped GEMM",
       [&](Plan &p) { p.steps[g].gemm.kind = GemmKind::GroupedContiguous; }},
      {"ue8m0 scales",
       [&](Plan &p) {
         p.steps[g].gemm.a.granularity.scale = ScaleFormat::UE8M0;
       }},
      {"the quantize after the GEMM",
       [&](Plan &p) {
         std::swap(p.steps[writerIndex(p, p.steps[g].inputs[1])], p.steps[g]);
       }},
      {"a second writer of the scales",
       [&](Plan &p) {
         PlanStep extra = p.steps[writerIndex(p, p.steps[g].inputs[1])];
         extra.name = "again";
         p.steps.push_back(extra);
       }},
  };
  for (const Case &c : cases) {
    Plan p = base;
    c.edit(p);
    // (the swap moves the GEMM: find it by name)
    EXPECT_FALSE(transposedQuantizeWriter(p, *r, stepIndex(p, "gemm_5"), true))
        << c.what;
  }
}
