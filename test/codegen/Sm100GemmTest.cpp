//===- Sm100GemmTest.cpp - The sm_100a generator's rules and plan ---------===//
//
// What checkSm100Spec accepts and rejects (one case per message), the
// instruction descriptor's bit fields, the plan (scale atoms, tensor-memory
// columns), the dispatch through codegen/Gemm.h, and the heuristic. The
// emitted source is FileChecked in test/codegen/sm100-*.test and compiled
// with NVRTC in test/runtime/Sm100CompileTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm100Gemm.h"
#include "codegen/Gemm.h"
#include "codegen/Sm90Gemm.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

KernelSpec mxSpec() {
  KernelSpec s;
  s.arch = Arch::SM100a;
  s.n = 7168;
  s.k = 2048;
  s.a.granularity = s.b.granularity = Granularity::mx();
  s.promotionInterval = std::nullopt;
  s.tile.mathWarpgroups = 1;
  return s;
}

KernelSpec deepseekPow2Spec(ScaleFormat f = ScaleFormat::F32Pow2) {
  KernelSpec s = mxSpec();
  s.a.granularity = Granularity::block(1, 128, f);
  s.b.granularity = Granularity::block(128, 128, f);
  s.promotionInterval = 32;
  return s;
}

/// The message of checkSm100Spec, which must fail and contain `needle`.
void expectRejected(const KernelSpec &s, const std::string &needle) {
  Status st = checkSm100Spec(s);
  ASSERT_FALSE(st.isOk()) << "expected a rejection containing '" << needle
                          << "'";
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
}

TEST(Sm100Check, AcceptsTheBlackwellRecipes) {
  KernelSpec s = mxSpec();
  EXPECT_TRUE(checkSm100Spec(s).isOk()) << checkSm100Spec(s).message();
  s.promotionInterval = 32; // the same kernel numerics for MX
  EXPECT_TRUE(checkSm100Spec(s).isOk()) << checkSm100Spec(s).message();
  s.a.format = DType::E5M2; // mixed formats
  s.out = DType::F32;
  s.accumulate = true;
  EXPECT_TRUE(checkSm100Spec(s).isOk()) << checkSm100Spec(s).message();
  for (ScaleFormat f : {ScaleFormat::F32Pow2, ScaleFormat::UE8M0}) {
    KernelSpec d = deepseekPow2Spec(f);
    EXPECT_TRUE(checkSm100Spec(d).isOk()) << checkSm100Spec(d).message();
  }
  // Scales constant along K go to the epilogue, any f32 value.
  KernelSpec t = mxSpec();
  t.a.granularity = Granularity::perTensor();
  t.b.granularity = Granularity::perTensor();
  EXPECT_TRUE(checkSm100Spec(t).isOk()) << checkSm100Spec(t).message();
  t.a.granularity = Granularity::perRow();
  t.b.granularity = Granularity::block(128, Granularity::kWhole);
  EXPECT_TRUE(checkSm100Spec(t).isOk()) << checkSm100Spec(t).message();
  // The 2-CTA variant and the B-multicast cluster.
  s = mxSpec();
  s.tile.ctaGroup = 2;
  s.tile.clusterM = 2;
  s.tile.blockN = 256;
  s.tile.stages = 4;
  EXPECT_TRUE(checkSm100Spec(s).isOk()) << checkSm100Spec(s).message();
  s.tile.ctaGroup = 1;
  EXPECT_TRUE(checkSm100Spec(s).isOk()) << checkSm100Spec(s).message();
}

TEST(Sm100Check, MXIsBlackwellOnly) {
  KernelSpec s = mxSpec();
  ASSERT_TRUE(checkGemmSpec(s).isOk()) << checkGemmSpec(s).message();
  s.arch = Arch::SM90a;
  s.promotionInterval = 32;
  s.tile = TileConfig();
  Status st = checkGemmSpec(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("sm_100a"), std::string::npos) << st.message();
}

TEST(Sm100Check, RejectsWithAMessagePerRule) {
  KernelSpec s = mxSpec();
  s.arch = Arch::SM90a;
  expectRejected(s, "expected arch sm_100a");
  s = mxSpec();
  s.kind = GemmKind::GroupedContiguous;
  expectRejected(s, "dense GEMMs only");
  s = mxSpec();
  s.n = 0;
  expectRejected(s, "expected positive N and K");
  s = mxSpec();
  s.k = int64_t(1) << 32;
  expectRejected(s, "below 2^31");
  s = mxSpec();
  s.k = 1000;
  expectRejected(s, "multiple of 16");
  s = mxSpec();
  s.b.layout = Layout::MNMajor;
  expectRejected(s, "K-major");
  s = mxSpec();
  s.b.granularity = Granularity::block(128, 128, ScaleFormat::UE8M0);
  expectRejected(s, "MX granularity"); // RecipeRules: MX on both or neither
  s = deepseekPow2Spec(ScaleFormat::F32);
  expectRejected(s, "power-of-two scales (f32_pow2 or ue8m0) for A");
  s = deepseekPow2Spec();
  s.b.granularity.scale = ScaleFormat::F32;
  expectRejected(s, "power-of-two scales (f32_pow2 or ue8m0) for B");
  s = deepseekPow2Spec();
  s.promotionInterval = 128;
  expectRejected(s, "expected promotion interval 32 (or 0) on sm_100a");
  s = deepseekPow2Spec();
  s.promotionInterval =
      std::nullopt; // scales vary along K: RecipeRules wants one
  expectRejected(s, "promotion_interval");
  s = mxSpec();
  s.tile.blockK = 64;
  expectRejected(s, "expected block_k 128");
  s = mxSpec();
  s.tile.blockM = 64;
  expectRejected(s, "expected block_m 128");
  s = mxSpec();
  s.tile.mathWarpgroups = 3;
  expectRejected(s, "expected math_warpgroups 1 or 2");
  s = mxSpec();
  s.tile.blockN = 48;
  expectRejected(s, "expected block_n to be a multiple of 32");
  s = mxSpec();
  s.tile.mathWarpgroups = 2;
  s.tile.blockN = 96;
  expectRejected(s, "expected block_n to be a multiple of 64");
  s = mxSpec();
  s.tile.blockN = 288;
  expectRejected(s, "in [32, 256]");
  s = mxSpec();
  s.tile.ctaGroup = 4;
  expectRejected(s, "expected cta_group 1 or 2");
  s = mxSpec();
  s.tile.clusterN = 2;
  expectRejected(s, "expected a cluster of 1x1 or 2x1");
  s = mxSpec();
  s.tile.ctaGroup = 2;
  expectRejected(s, "expected cluster_m 2 with cta_group 2");
  s = mxSpec();
  s.tile.splitK = 2;
  expectRejected(s, "expected split_k 1");
  s = mxSpec();
  s.tile.swizzleGroup = 0;
  expectRejected(s, "swizzle_group");
  s = mxSpec();
  s.tile.stages = 1;
  expectRejected(s, "at least 2 pipeline stages");
  s = mxSpec();
  s.tile.stages = 12;
  expectRejected(s, "shared memory");
}

TEST(Sm100InstrDesc, EncodesFormatsShapeAndScaleType) {
  KernelSpec s = mxSpec();
  s.tile.blockN = 128;
  // kind::mxf8f6f4: A, B e4m3 (0), N 128 >> 3 = 16 at bit 17, scale type
  // UE8M0 at bit 23, M 128 >> 4 = 8 at bit 24; scale IDs 0.
  EXPECT_EQ(sm100InstrDesc(s), (16u << 17) | (1u << 23) | (8u << 24));
  s.a.format = DType::E5M2;
  EXPECT_EQ(sm100InstrDesc(s) >> 7 & 7u, 1u);  // A e5m2
  EXPECT_EQ(sm100InstrDesc(s) >> 10 & 7u, 0u); // B e4m3
  EXPECT_EQ(sm100InstrDesc(s) >> 29 & 3u, 0u); // A's scale ID
  EXPECT_EQ(sm100InstrDesc(s) >> 4 & 3u, 0u);  // B's scale ID
  s.b.format = DType::E5M2;
  s.tile.ctaGroup = 2;
  s.tile.clusterM = 2;
  s.tile.blockN = 256;
  EXPECT_EQ(sm100InstrDesc(s) >> 10 & 7u, 1u);   // B e5m2
  EXPECT_EQ(sm100InstrDesc(s) >> 17 & 63u, 32u); // N 256
  EXPECT_EQ(sm100InstrDesc(s) >> 24 & 31u, 16u); // M 256 (the pair)
  // kind::f8f6f4 (scales in the epilogue): D type F32 at bits 4-5, no scale
  // type bit.
  KernelSpec t = mxSpec();
  t.a.granularity = t.b.granularity = Granularity::perTensor();
  t.tile.blockN = 64;
  EXPECT_EQ(sm100InstrDesc(t), (1u << 4) | (8u << 17) | (8u << 24));
}

TEST(Sm100Plan, ScaleAtomsAndTensorMemory) {
  struct Case {
    int blockN, ctaGroup, atoms, accStages, tmemColumns;
  };
  // Atoms: the most 128-row scale atoms any tile's columns touch (96-wide
  // tiles start at column 96 of an atom, 224-wide ones at 32, 64, 96).
  for (Case c : {Case{64, 1, 1, 2, 256}, Case{96, 1, 2, 2, 256},
                 Case{128, 1, 1, 2, 512}, Case{192, 1, 2, 2, 512},
                 Case{224, 2, 3, 2, 512}, Case{256, 2, 2, 1, 512}}) {
    KernelSpec s = mxSpec();
    s.tile.blockN = c.blockN;
    s.tile.ctaGroup = s.tile.clusterM = c.ctaGroup;
    s.tile.stages = 3;
    auto plan = planSm100Gemm(s);
    ASSERT_TRUE(plan.isOk()) << c.blockN << ": " << plan.message();
    EXPECT_TRUE(plan->blockScaled);
    EXPECT_EQ(plan->sfbAtoms, c.atoms) << c.blockN;
    EXPECT_EQ(plan->accStages, c.accStages) << c.blockN;
    EXPECT_EQ(plan->tmemColumns, c.tmemColumns) << c.blockN;
    EXPECT_EQ(plan->mmaM, 128 * c.ctaGroup);
    EXPECT_LE(plan->accStages * c.blockN + 2 * (4 + 4 * plan->sfbAtoms),
              plan->tmemColumns);
    EXPECT_EQ(plan->threads, 64 + 128 * s.tile.mathWarpgroups);
  }
  KernelSpec t = mxSpec();
  t.a.granularity = Granularity::perRow(ScaleFormat::UE8M0);
  t.b.granularity = Granularity::perTensor();
  t.n = 4097; // an odd N: no 16-byte row pitch, predicated stores
  auto plan = planSm100Gemm(t);
  ASSERT_TRUE(plan.isOk()) << plan.message();
  EXPECT_FALSE(plan->blockScaled);
  EXPECT_EQ(plan->sfbAtoms, 0);
  EXPECT_EQ(plan->a.mode, Sm100ScalePlan::Mode::Outer);
  EXPECT_TRUE(plan->a.ue8m0);
  EXPECT_EQ(plan->b.mode, Sm100ScalePlan::Mode::Tensor);
  EXPECT_FALSE(plan->tmaStore);
}

TEST(Sm100Emit, DispatchesAndDescribesTheLaunch) {
  KernelSpec s = mxSpec();
  s.tile.ctaGroup = s.tile.clusterM = 2;
  auto g = emitGemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->arch, Arch::SM100a);
  EXPECT_EQ(g->name, s.kernelName());
  EXPECT_EQ(g->launch.threads, 192);
  EXPECT_EQ(g->launch.clusterX, 2);
  ASSERT_EQ(g->launch.tma.size(), 5u);
  EXPECT_EQ(g->launch.tma[1].boxOuter, 64); // half of B per CTA
  EXPECT_EQ(g->launch.tma[2].operand, TmaPlan::Operand::ScaleA);
  EXPECT_EQ(g->launch.tma[2].boxInner, 16);
  EXPECT_EQ(g->launch.tma[2].boxOuter, 32);
  EXPECT_EQ(g->launch.tma[3].operand, TmaPlan::Operand::ScaleB);
  EXPECT_EQ(g->launch.tma[4].swizzleBytes, 64); // 32 bf16 columns
  EXPECT_NE(g->source.find("tcgen05.mma.cta_group::2.kind::mxf8f6f4."
                           "block_scale.block32"),
            std::string::npos);
  EXPECT_NE(g->source.find("static constexpr u32 kIdesc = 0x"),
            std::string::npos);
  KernelSpec bad = s;
  bad.tile.blockK = 64;
  EXPECT_FALSE(emitGemm(bad).isOk());
}

TEST(Sm100Heuristic, PicksLegalTilesAndPairsForLargeM) {
  for (int64_t m : {1, 128, 1000, 4096, 16384})
    for (int64_t n : {512, 2112, 7168, 4097})
      for (int64_t k : {128, 2048, 7168}) {
        for (KernelSpec s : {mxSpec(), deepseekPow2Spec()}) {
          s.m = m;
          s.n = n;
          s.k = k;
          ConfigChoice c = selectConfig(s, 148);
          s.tile = c.tile;
          EXPECT_TRUE(checkSm100Spec(s).isOk())
              << m << "x" << n << "x" << k << ": "
              << checkSm100Spec(s).message();
          EXPECT_FALSE(c.reason.empty());
          if (m <= 256)
            EXPECT_EQ(c.tile.ctaGroup, 1) << m;
        }
      }
  KernelSpec big = mxSpec();
  big.m = 16384;
  EXPECT_EQ(selectConfig(big, 148).tile.ctaGroup, 2);
  KernelSpec bad = deepseekPow2Spec(ScaleFormat::F32);
  bad.m = 4096;
  EXPECT_NE(selectConfig(bad, 148).reason.find("power-of-two"),
            std::string::npos);
}

} // namespace
