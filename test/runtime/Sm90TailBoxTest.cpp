//===- Sm90TailBoxTest.cpp - The last M tile's own box of A ---------------===//
//
// A dense GEMM's last M tile, where M leaves it ragged, loads A and its K
// scales in boxes no taller than its rows below M (fp8k::gemmABoxRows): the
// box heights, when the tail-box kernel variant is chosen, and that it
// compiles as cleanly as the default kernel. Its results are checked on
// the GPU by the ragged-M GEMM tests (GemmGpuTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm90Gemm.h"
#include "codegen/kernels/sm90_params.h"
#include "runtime/Nvrtc.h"
#include "test/runtime/Sm90TestVariants.h"

#include <gtest/gtest.h>

#include <iterator>

using namespace fp8;
using namespace fp8::test;

namespace {

// The last M tile's box of A: whole 8-row swizzle atoms covering the rows
// of M that tile holds, fewer than the tile's; 0 (the tile's box) where M
// fills the last tile or rounds up to it.
TEST(Sm90Params, ABoxCoversTheLastTilesRowsInWholeSwizzleAtoms) {
  for (int tile : {64, 128, 192, 256})
    for (int64_t m = 1; m <= 3 * tile; ++m) {
      const int rows = fp8k::gemmABoxRows<int64_t>(m, tile);
      const int64_t rest = (m - 1) % tile + 1; // rows of the last tile
      SCOPED_TRACE("tile " + std::to_string(tile) + ", M " + std::to_string(m));
      if (rest > tile - 8) {
        EXPECT_EQ(rows, 0);
        continue;
      }
      EXPECT_EQ(rows % 8, 0);
      EXPECT_GE(rows, rest);
      EXPECT_LT(rows - rest, 8);
      EXPECT_LT(rows, tile);
    }
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(0, 64), 0);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(100, 0), 0); // no tile chosen
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(1, 64), 8);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(16, 64), 16);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(65, 64), 8);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(129, 192), 136);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(4096, 192), 64);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(4096, 128), 0);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(1000, 128), 104);
  EXPECT_EQ(fp8k::gemmABoxRows<int64_t>(191, 192), 0);
}

// The tail-box variant: chosen by the spec's M only where M leaves the last
// of several M tiles ragged, for a dense kernel without an N cluster; it
// takes two more descriptors and compiles as cleanly as the default kernel
// (recipes x the tiles the heuristic picks, with a split tail, split-K and
// the scales' loaded path).
class Sm90TailBox : public ::testing::TestWithParam<std::tuple<int, int>> {};

/// Tiles the heuristic picks: split > 0 split-K, < 0 a split tail.
struct TailBoxTile {
  const char *name;
  int blockM, blockN, split;
  bool overlapK;
};
const TailBoxTile kTailBoxTiles[] = {{"m64_n64_ovk", 64, 64, 1, true},
                                     {"m128_n128", 128, 128, 1, false},
                                     {"m192_n128_ts4", 192, 128, -4, false},
                                     {"m128_n64_sk2", 128, 64, 2, false}};

TEST_P(Sm90TailBox, ChosenForARaggedLastTileAndCompiles) {
  auto [variant, tileIndex] = GetParam();
  const Variant &v = kVariants[variant];
  const TailBoxTile &tl = kTailBoxTiles[tileIndex];
  KernelSpec s = variantSpec(v, 7168 + 8, 2048, tl.blockM);
  s.tile.blockN = tl.blockN;
  s.tile.splitK = tl.split > 0 ? tl.split : 1;
  s.tile.tailSplit = tl.split < 0 ? -tl.split : 1;
  // (Overlapped promotion needs an interval of one k-block.)
  if (tl.overlapK && v.promotion == 128)
    s.tile.overlap = PromotionOverlap::AlternateK;
  s.tile.stages = sm90MaxStages(s);
  if (Status legal = checkSm90Spec(s); !legal.isOk()) {
    // Only three consumer warpgroups with per-column B scales are refused.
    EXPECT_EQ(tl.blockM, 192);
    EXPECT_NE(legal.message().find("block_m 192"), std::string::npos)
        << legal.message();
    return;
  }
  ASSERT_TRUE(sm90HasTailBox(s));
  // Whole tiles, M within one tile, and a last tile that rounds up to
  // whole: the default kernel.
  for (int64_t m : {int64_t(kDynamic), int64_t(4 * tl.blockM),
                    int64_t(tl.blockM - 5), int64_t(3 * tl.blockM - 3)}) {
    s.m = m;
    EXPECT_FALSE(s.m != kDynamic && sm90TailBox(s, s.m)) << "M " << m;
    auto g = emitSm90Gemm(s);
    ASSERT_TRUE(g.isOk()) << g.message();
    EXPECT_FALSE(g->launch.tailBox) << "M " << m;
    EXPECT_EQ(g->name, sm90KernelName(s, sm90ScaleTmaOperands(s)));
    EXPECT_NE(g->source.find("kATail = false"), std::string::npos);
  }
  s.m = 3 * tl.blockM + 1;
  ASSERT_TRUE(sm90TailBox(s, s.m));
  auto g = emitSm90Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_TRUE(g->launch.tailBox);
  EXPECT_EQ(g->name, sm90KernelName(s, sm90ScaleTmaOperands(s)) + "_tail");
  EXPECT_NE(g->source.find("kATail = true"), std::string::npos);
  EXPECT_NE(g->source.find("TmaDesc tmap_sa_tail,"), std::string::npos);
  // The same source for every M that takes the variant.
  KernelSpec other = s;
  other.m = 5 * tl.blockM + 17;
  auto go = emitSm90Gemm(other);
  ASSERT_TRUE(go.isOk()) << go.message();
  EXPECT_EQ(go->source, g->source);
  for (int scaleTma : {sm90ScaleTmaOperands(s), 0}) {
    if (scaleTma == 0 && sm90ScaleTmaOperands(s) == 0)
      continue;
    auto gv = emitSm90Gemm(s, scaleTma, true);
    ASSERT_TRUE(gv.isOk()) << gv.message();
    auto c = compileWithNvrtc(*gv);
    ASSERT_TRUE(c.isOk()) << c.message();
    if (std::string(v.name) == "wgrad_1x128" && scaleTma == 0)
      continue; // the loaded path's per-column scales (as in Sm90Compile)
    EXPECT_EQ(c->spillBytes, 0) << gv->name << "\n" << c->log;
    EXPECT_EQ(c->stackBytes, 0) << gv->name << "\n" << c->log;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, Sm90TailBox,
    ::testing::Combine(::testing::Range(0, int(std::size(kVariants))),
                       ::testing::Range(0, int(std::size(kTailBoxTiles)))),
    [](const auto &info) {
      return std::string(kVariants[std::get<0>(info.param)].name) + "_" +
             kTailBoxTiles[std::get<1>(info.param)].name;
    });

// Only a dense kernel without an N cluster has the tail box: the others
// keep their boxes whatever M, and asking for it is refused by name.
TEST(Sm90TailBox, OnlyDenseKernelsWithoutAnNClusterHaveIt) {
  KernelSpec s = variantSpec(kVariants[0], 4096, 4096, 128);
  s.tile.blockN = 128;
  s.tile.clusterN = 2;
  s.tile.stages = sm90MaxStages(s);
  ASSERT_TRUE(checkSm90Spec(s).isOk()) << checkSm90Spec(s).message();
  EXPECT_FALSE(sm90HasTailBox(s));
  s.m = 1000;
  EXPECT_FALSE(sm90TailBox(s, s.m));
  auto g = emitSm90Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_FALSE(g->launch.tailBox);
  auto refused = emitSm90Gemm(s, {}, true);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.message().find("clusters 1x2"), std::string::npos)
      << refused.message();
  s.tile.clusterN = 1;
  s.kind = GemmKind::GroupedContiguous;
  s.groups = 4;
  EXPECT_FALSE(sm90HasTailBox(s));
  EXPECT_FALSE(sm90TailBox(s, 1000));
}

} // namespace
