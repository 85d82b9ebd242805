//===- PlanScaleMirrorTest.cpp - Which GEMMs read mirrored scales ---------===//
//
// runtime/plan/PlanScaleMirror.h decides, without a GPU, which GEMM steps read
// their 1x128 A scales from a quantize step's transposed mirror, or their
// 128x128 B scales from a copy with a 16-byte pitch (the layouts the sm_90a
// kernel takes by TMA), and with which strides. Here: both rules on a small
// plan, each of their conditions broken one at a time, and the example MLP
// plan, whose three activation GEMMs all qualify for A and whose
// down-projection (K = 11008: 86 K blocks) qualifies for B.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanScaleMirror.h"
#include "runtime/plan/Plan.h"

#include "test/runtime/plan/DeepSeekPlan.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

using namespace fp8;
using namespace fp8::testplans;

namespace {

/// x [M, 384] quantized per 1x128 (step 0, run), w [256, 384] per 128x128
/// (step 1, prepare), D = x w^T (step 2). K/128 = 3: w's scales have a
/// 12-byte pitch, so both operands' scales are mirrored.
Plan mirrorPlan() { return deepseekPlan("mirror", 256, 384); }

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

/// The writer the A (B) rule finds for the GEMM of mirrorPlan() after
/// `edit`, or -1.
int writerAfter(const std::function<void(Plan &)> &edit, int64_t m = 7,
                bool isA = true) {
  Plan p = mirrorPlan();
  edit(p);
  const ResolvedPlan r = resolved(p, m);
  const std::optional<size_t> w =
      isA ? mirroredAScaleWriter(p, r, gemmIndex(p))
          : mirroredBScaleWriter(p, r, gemmIndex(p));
  return w ? int(*w) : -1;
}
int bWriterAfter(const std::function<void(Plan &)> &edit, int64_t m = 7) {
  return writerAfter(edit, m, /*isA=*/false);
}

/// Gives the weight of mirrorPlan() `k` columns (the GEMM's K) and x too.
void setK(Plan &p, int64_t k) {
  const int64_t blocks = (k + 127) / 128;
  for (PlanBuffer &b : p.buffers) {
    if (b.name == "x" || b.name == "xq" || b.name == "w" || b.name == "wq")
      b.shape[1] = C(k);
    if (b.name == "xs" || b.name == "ws")
      b.shape[1] = C(blocks);
  }
  for (PlanStep &s : p.steps)
    if (s.kind == StepKind::Gemm)
      s.gemm.k = k;
}

PlanBuffer &bufferOf(Plan &p, const std::string &name) {
  for (PlanBuffer &b : p.buffers)
    if (b.name == name)
      return b;
  ADD_FAILURE() << "no buffer " << name;
  return p.buffers[0];
}

} // namespace

/// An edit of mirrorPlan() that one rule must refuse; `afterResolving`:
/// validation refuses the edited plan, so it is edited once resolved.
struct RefusedEdit {
  const char *what;
  std::function<void(Plan &)> edit;
  bool afterResolving = false;
};

/// Edits both rules refuse.
void batchTheGemm(Plan &p) {
  for (PlanBuffer &b : p.buffers)
    b.shape.insert(b.shape.begin(), C(2));
  p.steps[2].batch = 2;
  p.reference[0].shape.insert(p.reference[0].shape.begin(), C(2));
  p.reference[0].batched = true;
}
void targetSm100(Plan &p) { p.steps[2].gemm.arch = Arch::SM100a; }

/// Applies each edit to mirrorPlan() and checks, at M = 7, that the rule for
/// A (`isA`) or B finds no writer and that no GEMM reads such a mirror;
/// `check` adds what the caller expects of the plan's mirrors.
void expectRefused(const std::vector<RefusedEdit> &edits, bool isA,
                   const std::function<void(const RefusedEdit &,
                                            const ScaleMirror &)> &check) {
  for (const RefusedEdit &c : edits) {
    Plan p = mirrorPlan();
    if (!c.afterResolving)
      c.edit(p);
    auto r = resolvePlan(p, {{"M", 7}});
    ASSERT_TRUE(r.isOk()) << c.what << ": " << r.message();
    if (c.afterResolving)
      c.edit(p);
    const size_t g = gemmIndex(p);
    EXPECT_FALSE(isA ? mirroredAScaleWriter(p, *r, g)
                     : mirroredBScaleWriter(p, *r, g))
        << c.what;
    const ScaleMirrorPlan mp = planScaleMirrors(p, *r);
    for (const ScaleMirror &m : mp.mirrors)
      check(c, m);
    EXPECT_EQ(scaleSource(mp, g, isA).mirror, -1) << c.what;
  }
}

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
    ASSERT_EQ(mp.mirrors.size(), 2u);
    const ScaleMirror &mi = mp.mirrors[0];
    EXPECT_EQ(mi.writer, 0u);
    EXPECT_EQ(mi.scales, "xs");
    EXPECT_EQ(mi.rows, m);
    EXPECT_EQ(mi.kBlocks, 3);
    EXPECT_TRUE(mi.transposed());
    EXPECT_EQ(mi.strideRows, 1);
    EXPECT_EQ(mi.strideCols, (m + 3) / 4 * 4) << "M = " << m;
    EXPECT_EQ(mi.outer(), 3);
    EXPECT_EQ(mi.pitch(), mi.strideCols);
    EXPECT_EQ(mi.pitch() % 4, 0);
    EXPECT_EQ(mi.bytes(), 3 * mi.pitch() * 4);
    EXPECT_EQ(mp.writes, (std::vector<int>{0, 1, -1}));
    EXPECT_EQ(mp.readsA, (std::vector<int>{-1, -1, 0}));

    const ScaleSource gemm = scaleSource(mp, kGemm, true);
    EXPECT_EQ(gemm.mirror, 0);
    EXPECT_EQ(gemm.ldOuter, 1);
    EXPECT_EQ(gemm.ldK, mi.strideCols);
    // The writers and the other steps read the plan buffers as they are.
    for (size_t s : {size_t(0), size_t(1), size_t(7)})
      for (bool isA : {true, false}) {
        const ScaleSource other = scaleSource(mp, s, isA);
        EXPECT_EQ(other.mirror, -1) << "step " << s;
        EXPECT_EQ(other.ldOuter, 0);
        EXPECT_EQ(other.ldK, 0);
      }
  }
}

TEST(PlanScaleMirror, A128x128GemmReadsItsWeightsPaddedMirror) {
  for (int64_t m : {1, 7, 129}) {
    const Plan p = mirrorPlan();
    const ResolvedPlan r = resolved(p, m);
    // The weight's quantize runs in the prepare phase, the GEMM in the run
    // phase.
    EXPECT_EQ(mirroredBScaleWriter(p, r, kGemm), std::optional<size_t>(1));
    const ScaleMirrorPlan mp = planScaleMirrors(p, r);
    ASSERT_EQ(mp.mirrors.size(), 2u);
    const ScaleMirror &mi = mp.mirrors[1];
    EXPECT_EQ(mi.writer, 1u);
    EXPECT_EQ(mi.scales, "ws");
    EXPECT_EQ(mi.rows, 2);
    EXPECT_EQ(mi.kBlocks, 3);
    EXPECT_FALSE(mi.transposed());
    EXPECT_EQ(mi.strideRows, 4);
    EXPECT_EQ(mi.strideCols, 1);
    EXPECT_EQ(mi.outer(), 2);
    EXPECT_EQ(mi.pitch(), 4);
    EXPECT_EQ(mi.bytes(), 2 * 4 * 4);
    EXPECT_EQ(mp.readsB, (std::vector<int>{-1, -1, 1}));

    const ScaleSource gemm = scaleSource(mp, kGemm, false);
    EXPECT_EQ(gemm.mirror, 1);
    EXPECT_EQ(gemm.ldOuter, 4);
    EXPECT_EQ(gemm.ldK, 1);
  }
}

TEST(PlanScaleMirror, BGetsAPaddedMirrorExactlyWhenItsPitchIsNot16Bytes) {
  // K/128 = 1, 2, 3, 4, 5, 8, 86: pitches of 4 scales (16 bytes) need none.
  for (int64_t k : {128, 256, 384, 512, 640, 1024, 11008}) {
    Plan p = mirrorPlan();
    setK(p, k);
    ASSERT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
    const ResolvedPlan r = resolved(p, 7);
    const int64_t blocks = k / 128;
    const bool padded = blocks % 4 != 0;
    EXPECT_EQ(mirroredBScaleWriter(p, r, kGemm).has_value(), padded)
        << "K = " << k;
    // A's mirror does not depend on K.
    EXPECT_EQ(mirroredAScaleWriter(p, r, kGemm), std::optional<size_t>(0));
    const ScaleMirrorPlan mp = planScaleMirrors(p, r);
    ASSERT_EQ(mp.mirrors.size(), padded ? 2u : 1u) << "K = " << k;
    const ScaleSource b = scaleSource(mp, kGemm, false);
    if (!padded) {
      EXPECT_EQ(b.mirror, -1) << "K = " << k;
      continue;
    }
    const ScaleMirror &mi = mp.mirrors[size_t(b.mirror)];
    EXPECT_EQ(mi.kBlocks, blocks);
    EXPECT_EQ(b.ldOuter, (blocks + 3) / 4 * 4) << "K = " << k;
    EXPECT_EQ(b.ldOuter % 4, 0);
    EXPECT_EQ(b.ldK, 1);
    EXPECT_EQ(mi.bytes(), 2 * b.ldOuter * 4);
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
  const std::vector<RefusedEdit> cases = {
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
      {"a batched GEMM", batchTheGemm},
      {"an sm_100a GEMM", targetSm100},
      {"an M-major A",
       [](Plan &p) { p.steps[2].gemm.a.layout = Layout::MNMajor; }, true},
  };
  expectRefused(cases, /*isA=*/true,
                [](const RefusedEdit &c, const ScaleMirror &m) {
                  EXPECT_NE(m.scales, "xs") << c.what;
                });
  // And nothing but these conditions: the unedited plan has its mirror.
  const Plan p = mirrorPlan();
  EXPECT_TRUE(mirroredAScaleWriter(p, resolved(p, 7), kGemm));
}

TEST(PlanScaleMirror, EveryConditionOfTheBRuleIsNeeded) {
  auto bGranularity = [](Plan &p, Granularity g) {
    p.steps[1].aux.quant.granularity = g;
    p.steps[2].gemm.b.granularity = g;
  };
  const std::vector<RefusedEdit> cases = {
      {"a pitch of 4 K blocks (16 bytes) already",
       [](Plan &p) { setK(p, 512); }},
      {"a pitch of 8 K blocks", [](Plan &p) { setK(p, 1024); }},
      {"ue8m0 scales",
       [&](Plan &p) {
         bGranularity(p, Granularity::block(128, 128, ScaleFormat::UE8M0));
         bufferOf(p, "ws").dtype = DType::UE8M0;
       }},
      {"1x128 B scales (consumer-loaded whatever their pitch)",
       [&](Plan &p) {
         bGranularity(p, Granularity::block(1, 128));
         bufferOf(p, "ws").shape = {C(256), C(3)};
       }},
      {"per-row B scales",
       [&](Plan &p) {
         bGranularity(p, Granularity::perRow());
         bufferOf(p, "ws").shape = {C(256), C(1)};
       }},
      {"one row of scales (N = 128: no pitch to speak of)",
       [](Plan &p) {
         for (const char *b : {"w", "wq"})
           bufferOf(p, b).shape[0] = C(128);
         bufferOf(p, "ws").shape[0] = C(1);
         bufferOf(p, "d").shape[1] = C(128);
         p.reference[0].shape[1] = C(128);
         p.steps[2].gemm.n = 128;
       }},
      {"quantize and GEMM granularities differ",
       [](Plan &p) {
         p.steps[1].aux.quant.granularity =
             Granularity::block(128, 128, ScaleFormat::F32Pow2);
       }},
      {"B scales that are uploaded",
       [](Plan &p) { bufferOf(p, "ws").role = BufferRole::Weight; }, true},
      {"B scales written twice",
       [](Plan &p) {
         PlanStep again = p.steps[1];
         again.name = "quantize_w_again";
         again.outputs[0] = "wq2";
         p.buffers.push_back(
             buffer("wq2", DType::E4M3FN, {C(256), C(384)}, BufferRole::Temp));
         p.steps.push_back(again);
       }},
      {"a quantize step after the GEMM",
       [](Plan &p) {
         p.steps[1].phase = Phase::Run;
         std::swap(p.steps[1], p.steps[2]);
       }},
      {"a run-phase quantize for a prepare-phase GEMM",
       [](Plan &p) {
         p.steps[1].phase = Phase::Run;
         p.steps[2].phase = Phase::Prepare;
       },
       true},
      {"a batched GEMM", batchTheGemm},
      {"an sm_100a GEMM", targetSm100},
      {"an N-major B",
       [](Plan &p) { p.steps[2].gemm.b.layout = Layout::MNMajor; }, true},
  };
  expectRefused(cases, /*isA=*/false,
                [](const RefusedEdit &c, const ScaleMirror &m) {
                  EXPECT_TRUE(m.transposed()) << c.what << ": " << m.scales;
                });
  // And nothing but these conditions: the unedited plan has its mirror.
  const Plan p = mirrorPlan();
  EXPECT_TRUE(mirroredBScaleWriter(p, resolved(p, 7), kGemm));
}

TEST(PlanScaleMirror, BScalesOfOtherBlockShapesAreMirroredToo) {
  // 64 x 256 blocks: 4 rows of scales, 2 K blocks (an 8-byte pitch).
  Plan p = mirrorPlan();
  const Granularity g = Granularity::block(64, 256);
  p.steps[1].aux.quant.granularity = g;
  p.steps[2].gemm.b.granularity = g;
  bufferOf(p, "ws").shape = {C(4), C(2)};
  const ResolvedPlan r = resolved(p, 7);
  EXPECT_EQ(mirroredBScaleWriter(p, r, kGemm), std::optional<size_t>(1));
  const ScaleMirrorPlan mp = planScaleMirrors(p, r);
  const ScaleSource b = scaleSource(mp, kGemm, false);
  ASSERT_GE(b.mirror, 0);
  EXPECT_EQ(mp.mirrors[size_t(b.mirror)].rows, 4);
  EXPECT_EQ(mp.mirrors[size_t(b.mirror)].kBlocks, 2);
  EXPECT_EQ(b.ldOuter, 4);
  EXPECT_EQ(b.ldK, 1);
}

TEST(PlanScaleMirror, AQuantizeStepOfThePreparePhaseServesARunGemm) {
  EXPECT_EQ(writerAfter([](Plan &p) { p.steps[0].phase = Phase::Prepare; }), 0);
  // B's (mirrorPlan's weight) is quantized in the prepare phase already;
  // in the run phase, before the GEMM, it serves too.
  EXPECT_EQ(bWriterAfter([](Plan &) {}), 1);
  EXPECT_EQ(bWriterAfter([](Plan &p) { p.steps[1].phase = Phase::Run; }), 1);
  // A prepare-phase GEMM after a prepare-phase quantize.
  EXPECT_EQ(bWriterAfter([](Plan &p) { p.steps[2].phase = Phase::Prepare; }),
            1);
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
  // quantize_0 (x, 1x128) feeds gemm_4 and gemm_5's A; quantize_6 (the
  // fused SwiGLU, 1x128) feeds gemm_7's A; of the weights' 128x128
  // quantizes (prepare phase), quantize_3's (w_down, [4096, 11008]: 86 K
  // blocks) feeds gemm_7's B; the up and gate weights' 32 K blocks have a
  // 16-byte pitch already.
  std::vector<std::string> got;
  for (size_t i = 0; i < p->steps.size(); ++i) {
    got.push_back(p->steps[i].name + ":" + std::to_string(mp.writes[i]) + "," +
                  std::to_string(mp.readsA[i]) + "," +
                  std::to_string(mp.readsB[i]));
    const ScaleSource a = scaleSource(mp, i, true);
    if (a.mirror >= 0) {
      EXPECT_EQ(a.ldOuter, 1);
      EXPECT_EQ(a.ldK, 132) << p->steps[i].name; // 129 rounded up to 4
    }
    const ScaleSource b = scaleSource(mp, i, false);
    if (b.mirror >= 0) {
      EXPECT_EQ(b.ldOuter, 88) << p->steps[i].name; // 86 rounded up to 4
      EXPECT_EQ(b.ldK, 1);
    }
  }
  EXPECT_EQ(got,
            (std::vector<std::string>{
                "quantize_0:0,-1,-1", "quantize_1:-1,-1,-1",
                "quantize_2:-1,-1,-1", "quantize_3:2,-1,-1", "gemm_4:-1,0,-1",
                "gemm_5:-1,0,-1", "quantize_6:1,-1,-1", "gemm_7:-1,1,2"}));
  ASSERT_EQ(mp.mirrors.size(), 3u);
  EXPECT_EQ(mp.mirrors[0].kBlocks, 32);
  EXPECT_EQ(mp.mirrors[1].kBlocks, 86);
  const ScaleMirror &w = mp.mirrors[2];
  EXPECT_EQ(w.scales, "t7");
  EXPECT_EQ(p->steps[w.writer].phase, Phase::Prepare);
  EXPECT_EQ(w.rows, 32);
  EXPECT_EQ(w.kBlocks, 86);
  EXPECT_EQ(w.outer(), 32);
  EXPECT_EQ(w.pitch(), 88);
  EXPECT_EQ(w.bytes(), 32 * 88 * 4);
}

TEST(PlanScaleMirror, AGemmQuantizedInItsEpilogueWritesTheNextGemmsMirror) {
  auto p =
      loadPlan(std::string(FP8_EXAMPLE_PLANS) + "/mlp.fused.sm_90a.plan.json");
  ASSERT_TRUE(p.isOk()) << p.message();
  auto r = resolvePlan(*p, {{"M", 129}});
  ASSERT_TRUE(r.isOk()) << r.message();
  const ScaleMirrorPlan mp = planScaleMirrors(*p, *r);
  // gemm_4 (gate and up, SwiGLU and the 1x128 quantize in its epilogue)
  // writes the transposed mirror of its scales, which gemm_5 (down) reads
  // as its A scales, [86][132].
  std::vector<std::string> got;
  for (size_t i = 0; i < p->steps.size(); ++i)
    got.push_back(p->steps[i].name + ":" + std::to_string(mp.writes[i]) + "," +
                  std::to_string(mp.readsA[i]) + "," +
                  std::to_string(mp.readsB[i]));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "quantize_0:0,-1,-1", "quantize_1:2,-1,-1",
                     "interleave_2:-1,-1,-1", "quantize_3:-1,-1,-1",
                     "gemm_4:1,0,-1", "gemm_5:-1,1,2"}));
  const ScaleMirror &m = mp.mirrors[1];
  EXPECT_EQ(m.writer, 4u);
  EXPECT_EQ(m.rows, 129);
  EXPECT_EQ(m.kBlocks, 86);
  EXPECT_TRUE(m.transposed());
  EXPECT_EQ(m.pitch(), 132);
}
