//===- Sm100CompileTest.cpp - Every sm_100a config compiles with NVRTC ----===//
//
// There is no Blackwell GPU on our machines, so this is where the generated
// sm_100a kernels are proven to be valid CUDA and PTX: a matrix over recipes
// (MX, DeepSeek with power-of-two scales, per-tensor / per-row scales in the
// epilogue), format pairs (E4M3/E5M2 mixed), outputs (bf16/f32, + C), and
// tiles (block_n 64..256 incl. 96 and 224, whose B tiles straddle scale
// atoms; cta_group 1 alone or sharing B in a 2x1 cluster; cta_group 2), each
// compiled by NVRTC and ptxas to a sm_100a cubin without register spills or
// stack. N is ragged (not a multiple of block_n) and, for half of the
// tiles, odd (predicated stores instead of TMA).
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm100Gemm.h"
#include "runtime/Nvrtc.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {
struct Variant {
  const char *name;
  Granularity a, b;
  int64_t promotion;
  DType out = DType::BF16;
  bool accumulate = false;
  DType fa = DType::E4M3FN, fb = DType::E4M3FN;
};

const Variant kVariants[] = {
    {"mx", Granularity::mx(), Granularity::mx(), 0},
    {"mx_e5m2_e4m3_f32", Granularity::mx(), Granularity::mx(), 32, DType::F32,
     false, DType::E5M2, DType::E4M3FN},
    {"mx_e4m3_e5m2_acc", Granularity::mx(), Granularity::mx(), 0, DType::BF16,
     true, DType::E4M3FN, DType::E5M2},
    {"deepseek_pow2", Granularity::block(1, 128, ScaleFormat::F32Pow2),
     Granularity::block(128, 128, ScaleFormat::F32Pow2), 32},
    {"deepseek_ue8m0_f32", Granularity::block(1, 128, ScaleFormat::UE8M0),
     Granularity::block(128, 128, ScaleFormat::UE8M0), 32, DType::F32},
    {"per_tensor", Granularity::perTensor(), Granularity::perTensor(), 0},
    {"per_row_acc_f32", Granularity::perRow(), Granularity::perRow(), 32,
     DType::F32, true},
};

struct Tile {
  const char *name;
  int blockN, epiWarpgroups, ctaGroup, clusterM;
};

const Tile kTiles[] = {
    {"n64", 64, 1, 1, 1},         {"n96", 96, 1, 1, 1},
    {"n128w2", 128, 2, 1, 1},     {"n256w2", 256, 2, 1, 1},
    {"n192_mcast", 192, 2, 1, 2}, {"n128_cta2", 128, 1, 2, 2},
    {"n224_cta2", 224, 1, 2, 2},  {"n256w2_cta2", 256, 2, 2, 2},
};

class Sm100Compile : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Sm100Compile, CompilesWithoutSpills) {
  auto [variant, tileIndex] = GetParam();
  const Variant &v = kVariants[variant];
  const Tile &t = kTiles[tileIndex];
  KernelSpec s;
  s.arch = Arch::SM100a;
  // Ragged N; odd for every other tile (no 16-byte pitch: predicated stores).
  s.n = tileIndex % 2 ? 7168 + 33 : 7168 + 32;
  s.k = 2048 + 16; // a partial last k-block and K block
  s.a.granularity = v.a;
  s.b.granularity = v.b;
  s.a.format = v.fa;
  s.b.format = v.fb;
  s.promotionInterval = promotionFromInt(v.promotion);
  s.out = v.out;
  s.accumulate = v.accumulate;
  s.tile.blockN = t.blockN;
  s.tile.mathWarpgroups = t.epiWarpgroups;
  s.tile.ctaGroup = t.ctaGroup;
  s.tile.clusterM = t.clusterM;
  s.tile.stages = 2;
  s.tile.stages = std::min(sm100MaxStages(s), 8);
  Status legal = checkSm100Spec(s);
  ASSERT_TRUE(legal.isOk()) << legal.message();
  auto g = emitSm100Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_EQ(g->launch.tmaStore, tileIndex % 2 == 0);
  auto c = compileWithNvrtc(*g);
  ASSERT_TRUE(c.isOk()) << c.message();
  EXPECT_GT(c->cubin.size(), 1000u);
  EXPECT_EQ(c->spillBytes, 0) << v.name << "\n" << c->log;
  EXPECT_EQ(c->stackBytes, 0) << v.name << "\n" << c->log;
  EXPECT_GT(c->registers, 0);
  EXPECT_LT(c->compileCpuSeconds, 2.0)
      << "(wall " << c->compileSeconds << " s)";
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, Sm100Compile,
    ::testing::Combine(::testing::Range(0, int(std::size(kVariants))),
                       ::testing::Range(0, int(std::size(kTiles)))),
    [](const auto &info) {
      return std::string(kVariants[std::get<0>(info.param)].name) + "_" +
             kTiles[std::get<1>(info.param)].name;
    });

TEST(Sm100Compile, PtxHasTheBlackwellInstructions) {
  KernelSpec s;
  s.arch = Arch::SM100a;
  s.n = 4096;
  s.k = 7168;
  s.a.granularity = s.b.granularity = Granularity::mx();
  s.promotionInterval = std::nullopt;
  s.tile.ctaGroup = s.tile.clusterM = 2;
  s.tile.mathWarpgroups = 1;
  auto g = emitSm100Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  auto ptx = compileToPtx(*g);
  ASSERT_TRUE(ptx.isOk()) << ptx.message();
  for (const char *insn :
       {"tcgen05.alloc.cta_group::2", "tcgen05.cp.cta_group::2.32x128b.warpx4",
        "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.block32",
        "tcgen05.commit.cta_group::2", "tcgen05.ld.sync.aligned.32x32b.x32",
        "tcgen05.wait::ld", "tcgen05.dealloc.cta_group::2",
        "complete_tx::bytes.cta_group::2"})
    EXPECT_NE(ptx->find(insn), std::string::npos) << insn;
}
} // namespace
