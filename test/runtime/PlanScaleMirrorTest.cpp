//===- PlanScaleMirrorTest.cpp - Which GEMMs read mirrored A scales -------===//
//
// runtime/PlanScaleMirror.h decides, without a GPU, which GEMM steps read
// their 1x128 A scales from a quantize step's transposed mirror (the layout
// the sm_90a kernel takes by TMA) and with which strides. Here: the rule on
// a small plan, each of its conditions broken one at a time, and the example
// MLP plan, whose three activation GEMMs all qualify.
//
//===----------------------------------------------------------------------===//

#include "runtime/PlanScaleMirror.h"
#include "runtime/Plan.h"

#include <gtest/gtest.h>

#include <functional>

using namespace fp8;

namespace {

PlanBuffer buffer(std::string name, DType t, ShapeExpr shape, BufferRole r) {
  PlanBuffer b;
  b.name = std::move(name);
  b.dtype = t;
  b.shape = std::move(shape);
  b.role = r;
  return b;
}

DimExpr M(int64_t div = 1) { return DimExpr::symbol("M", div); }
DimExpr C(int64_t v) { return DimExpr::constant(v); }

ElementwiseSpec quantizeSpec(Granularity g) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = EwProgram::identity(DType::BF16);
  s.quant.granularity = g;
  return s;
}

/// x [M, 384] quantized per 1x128 (step 0, run), w [256, 384] per 128x128
/// (step 1, prepare), D = x w^T (step 2).
Plan mirrorPlan() {
  Plan p;
  p.function = "mirror";
  p.dims = {"M"};
  p.buffers = {
      buffer("x", DType::BF16, {M(), C(384)}, BufferRole::Input),
      buffer("w", DType::BF16, {C(256), C(384)}, BufferRole::Weight),
      buffer("xq", DType::E4M3FN, {M(), C(384)}, BufferRole::Temp),
      buffer("xs", DType::F32, {M(), C(3)}, BufferRole::Temp),
      buffer("wq", DType::E4M3FN, {C(256), C(384)}, BufferRole::Temp),
      buffer("ws", DType::F32, {C(2), C(3)}, BufferRole::Temp),
      buffer("d", DType::BF16, {M(), C(256)}, BufferRole::Output),
  };
  PlanStep qx;
  qx.name = "quantize_x";
  qx.kind = StepKind::Quantize;
  qx.inputs = {"x"};
  qx.outputs = {"xq", "xs"};
  qx.aux = quantizeSpec(Granularity::block(1, 128));
  PlanStep qw = qx;
  qw.name = "quantize_w";
  qw.phase = Phase::Prepare;
  qw.inputs = {"w"};
  qw.outputs = {"wq", "ws"};
  qw.aux = quantizeSpec(Granularity::block(128, 128));
  PlanStep g;
  g.name = "gemm";
  g.kind = StepKind::Gemm;
  g.inputs = {"xq", "xs", "wq", "ws"};
  g.outputs = {"d"};
  g.gemm.n = 256;
  g.gemm.k = 384;
  g.gemm.a.granularity = Granularity::block(1, 128);
  g.gemm.b.granularity = Granularity::block(128, 128);
  g.gemm.promotionInterval = 128;
  p.steps = {qx, qw, g};
  p.outputs = {"d"};
  RefOp r;
  r.kind = RefOp::Kind::Matmul;
  r.inputs = {"x", "w"};
  r.out = "d";
  r.shape = {M(), C(256)};
  p.reference = {r};
  return p;
}

ResolvedPlan resolved(const Plan &p, int64_t m) {
  auto r = resolvePlan(p, {{"M", m}});
  EXPECT_TRUE(r.isOk()) << r.message();
  return r.isOk() ? *r : ResolvedPlan{};
}

constexpr size_t kGemm = 2;

/// The index of the step named "gemm".
size_t gemmIndex(const Plan &p) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].name == "gemm")
      return i;
  ADD_FAILURE() << "no step 'gemm'";
  return 0;
}

/// The writer the rule finds for the GEMM of mirrorPlan() after `edit`,
/// or -1.
int writerAfter(const std::function<void(Plan &)> &edit, int64_t m = 7) {
  Plan p = mirrorPlan();
  edit(p);
  const ResolvedPlan r = resolved(p, m);
  const std::optional<size_t> w = mirroredAScaleWriter(p, r, gemmIndex(p));
  return w ? int(*w) : -1;
}

PlanBuffer &bufferOf(Plan &p, const std::string &name) {
  for (PlanBuffer &b : p.buffers)
    if (b.name == name)
      return b;
  ADD_FAILURE() << "no buffer " << name;
  return p.buffers[0];
}

} // namespace

TEST(PlanScaleMirror, TheMirrorPlanIsValid) {
  EXPECT_TRUE(validatePlan(mirrorPlan()).isOk())
      << validatePlan(mirrorPlan()).message();
}

TEST(PlanScaleMirror, A1x128GemmReadsItsQuantizeStepsMirror) {
  for (int64_t m : {1, 7, 128, 129}) {
    const Plan p = mirrorPlan();
    const ResolvedPlan r = resolved(p, m);
    EXPECT_EQ(mirroredAScaleWriter(p, r, kGemm), std::optional<size_t>(0));
    const ScaleMirrorPlan mp = planScaleMirrors(p, r);
    ASSERT_EQ(mp.mirrors.size(), 1u);
    const ScaleMirror &mi = mp.mirrors[0];
    EXPECT_EQ(mi.writer, 0u);
    EXPECT_EQ(mi.scales, "xs");
    EXPECT_EQ(mi.rows, m);
    EXPECT_EQ(mi.kBlocks, 3);
    EXPECT_EQ(mi.pitch, (m + 3) / 4 * 4) << "M = " << m;
    EXPECT_EQ(mi.pitch % 4, 0);
    EXPECT_EQ(mi.bytes(), 3 * mi.pitch * 4);
    EXPECT_EQ(mp.mirrorOf, (std::vector<int>{0, -1, 0}));

    const AScaleSource gemm = aScaleSource(mp, kGemm);
    EXPECT_EQ(gemm.mirror, 0);
    EXPECT_EQ(gemm.ldOuter, 1);
    EXPECT_EQ(gemm.ldK, mi.pitch);
    // The writer and the other steps read the plan buffers as they are.
    for (size_t s : {size_t(0), size_t(1), size_t(7)}) {
      const AScaleSource other = aScaleSource(mp, s);
      EXPECT_EQ(other.mirror, -1) << "step " << s;
      EXPECT_EQ(other.ldOuter, 0);
      EXPECT_EQ(other.ldK, 0);
    }
  }
}

TEST(PlanScaleMirror, F32Pow2ScalesAreF32Too) {
  EXPECT_EQ(writerAfter([](Plan &p) {
              const Granularity g =
                  Granularity::block(1, 128, ScaleFormat::F32Pow2);
              p.steps[0].aux.quant.granularity = g;
              p.steps[2].gemm.a.granularity = g;
            }),
            0);
}

TEST(PlanScaleMirror, EveryConditionIsNeeded) {
  struct Case {
    const char *what;
    std::function<void(Plan &)> edit;
    bool afterResolving = false; ///< validation refuses the edited plan
  };
  const Case cases[] = {
      {"ue8m0 scales",
       [](Plan &p) {
         const Granularity g = Granularity::block(1, 128, ScaleFormat::UE8M0);
         p.steps[0].aux.quant.granularity = g;
         p.steps[2].gemm.a.granularity = g;
         bufferOf(p, "xs").dtype = DType::UE8M0;
       }},
      {"per-row A scales",
       [](Plan &p) {
         p.steps[0].aux.quant.granularity = Granularity::perRow();
         p.steps[2].gemm.a.granularity = Granularity::perRow();
         bufferOf(p, "xs").shape = {M(), C(1)};
       }},
      {"128x128 A scales",
       [](Plan &p) {
         p.steps[0].aux.quant.granularity = Granularity::block(128, 128);
         p.steps[2].gemm.a.granularity = Granularity::block(128, 128);
         bufferOf(p, "xs").shape = {M(128), C(3)};
       }},
      {"quantize and GEMM granularities differ",
       [](Plan &p) {
         p.steps[0].aux.quant.granularity =
             Granularity::block(1, 128, ScaleFormat::F32Pow2);
       }},
      {"A scales that are uploaded (an input the quantize step writes)",
       [](Plan &p) { bufferOf(p, "xs").role = BufferRole::Input; }, true},
      {"A scales no step writes",
       [](Plan &p) {
         p.steps[0].outputs[1] = "xs2";
         p.buffers.push_back(
             buffer("xs2", DType::F32, {M(), C(3)}, BufferRole::Temp));
       }},
      {"A scales written by an elementwise step",
       [](Plan &p) {
         PlanStep e;
         e.name = "ew";
         e.kind = StepKind::Elementwise;
         e.inputs = {"xs2"};
         e.outputs = {"xs"};
         e.aux.kind = AuxKind::Elementwise;
         e.aux.program = EwProgram::identity(DType::F32);
         e.aux.out = DType::F32;
         p.steps[0].outputs[1] = "xs2";
         p.buffers.push_back(
             buffer("xs2", DType::F32, {M(), C(3)}, BufferRole::Temp));
         p.steps.insert(p.steps.begin() + 1, e);
       }},
      {"A scales written twice",
       [](Plan &p) {
         PlanStep again = p.steps[0];
         again.name = "quantize_again";
         again.outputs[0] = "xq2";
         p.buffers.push_back(
             buffer("xq2", DType::E4M3FN, {M(), C(384)}, BufferRole::Temp));
         p.steps.push_back(again);
       }},
      {"a quantize step after the GEMM",
       [](Plan &p) { std::swap(p.steps[0], p.steps[2]); }},
      {"a run-phase quantize for a prepare-phase GEMM",
       [](Plan &p) { p.steps[2].phase = Phase::Prepare; }},
      {"a batched GEMM",
       [](Plan &p) {
         for (PlanBuffer &b : p.buffers)
           b.shape.insert(b.shape.begin(), C(2));
         p.steps[2].batch = 2;
         p.reference[0].shape.insert(p.reference[0].shape.begin(), C(2));
         p.reference[0].batched = true;
       }},
      {"an sm_100a GEMM", [](Plan &p) { p.steps[2].gemm.arch = Arch::SM100a; }},
      {"an M-major A",
       [](Plan &p) { p.steps[2].gemm.a.layout = Layout::MNMajor; }, true},
  };
  for (const Case &c : cases) {
    Plan p = mirrorPlan();
    if (!c.afterResolving)
      c.edit(p);
    auto r = resolvePlan(p, {{"M", 7}});
    ASSERT_TRUE(r.isOk()) << c.what << ": " << r.message();
    if (c.afterResolving)
      c.edit(p);
    const size_t g = gemmIndex(p);
    EXPECT_FALSE(mirroredAScaleWriter(p, *r, g)) << c.what;
    const ScaleMirrorPlan mp = planScaleMirrors(p, *r);
    EXPECT_TRUE(mp.mirrors.empty()) << c.what;
    EXPECT_EQ(aScaleSource(mp, g).mirror, -1) << c.what;
  }
  // And nothing but these conditions: the unedited plan has its mirror.
  const Plan p = mirrorPlan();
  EXPECT_TRUE(mirroredAScaleWriter(p, resolved(p, 7), kGemm));
}

TEST(PlanScaleMirror, AQuantizeStepOfThePreparePhaseServesARunGemm) {
  EXPECT_EQ(writerAfter([](Plan &p) { p.steps[0].phase = Phase::Prepare; }), 0);
}

TEST(PlanScaleMirror, NoMirrorForAnEmptyM) {
  EXPECT_EQ(writerAfter([](Plan &) {}, 0), -1);
}

TEST(PlanScaleMirror, TheExampleMlpReadsMirrorsInEveryGemm) {
  auto p = loadPlan(std::string(FP8_EXAMPLE_PLANS) + "/mlp.sm_90a.plan.json");
  ASSERT_TRUE(p.isOk()) << p.message();
  auto r = resolvePlan(*p, {{"M", 129}});
  ASSERT_TRUE(r.isOk()) << r.message();
  const ScaleMirrorPlan mp = planScaleMirrors(*p, *r);
  // quantize_0 (x, 1x128) feeds gemm_4 and gemm_5; quantize_6 (the fused
  // SwiGLU, 1x128) feeds gemm_7; the weights' 128x128 quantizes none.
  std::vector<std::string> got;
  for (size_t i = 0; i < p->steps.size(); ++i) {
    const int m = mp.mirrorOf[i];
    got.push_back(p->steps[i].name + ":" + std::to_string(m));
    const AScaleSource a = aScaleSource(mp, i);
    if (a.mirror >= 0) {
      EXPECT_EQ(a.ldOuter, 1);
      EXPECT_EQ(a.ldK, 132) << p->steps[i].name; // 129 rounded up to 4
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "quantize_0:0", "quantize_1:-1", "quantize_2:-1",
                     "quantize_3:-1", "gemm_4:0", "gemm_5:0", "quantize_6:1",
                     "gemm_7:1", "elementwise_8:-1"}));
  ASSERT_EQ(mp.mirrors.size(), 2u);
  EXPECT_EQ(mp.mirrors[0].kBlocks, 32);
  EXPECT_EQ(mp.mirrors[1].kBlocks, 86);
}
