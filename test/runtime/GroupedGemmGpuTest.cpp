//===- GroupedGemmGpuTest.cpp - Grouped sm_90a GEMMs against the oracle ---===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh):
// contiguous and masked grouped GEMMs on ragged groups (empty groups, groups
// of one row, one group holding every row, groups starting at rows that are
// no multiple of anything), checked row by row against the oracle's grouped
// GEMM; rows outside every group must stay unwritten.
//
//===----------------------------------------------------------------------===//

#include "test/runtime/GpuCheck.h"
#include "test/runtime/GroupedGpuCheck.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

using namespace fp8;

namespace {

const Granularity kTok = Granularity::block(1, 128);
const Granularity kBlk = Granularity::block(128, 128);

void expectCase(const GroupedGpuCase &c) {
  auto r = runGroupedGpuCase(c);
  EXPECT_TRUE(r.isOk()) << describe(c) << ": " << r.message();
  if (!r)
    return;
  EXPECT_TRUE(r->passed) << describe(c) << ": " << r->summary;
  std::printf("[case] %s %s: %s\n", r->passed ? "PASS" : "FAIL",
              describe(c).c_str(), r->summary.c_str());
}

TileConfig tile(int bm, int bn, int cm = 1, int cn = 1) {
  TileConfig t;
  t.blockM = bm;
  t.mathWarpgroups = bm / 64;
  t.blockN = bn;
  t.clusterM = cm;
  t.clusterN = cn;
  t.stages = bm == 192 || bn > 128 ? 4 : 5;
  return t;
}

GroupedGpuCase contiguous(std::vector<int32_t> rows, int64_t n, int64_t k,
                          std::optional<TileConfig> t = std::nullopt) {
  GroupedGpuCase c;
  c.recipe = caseRecipe(kTok, kBlk, 128);
  c.rows = std::move(rows);
  c.n = n;
  c.k = k;
  c.tile = t;
  return c;
}

GroupedGpuCase masked(std::vector<int32_t> valid, int64_t maxM, int64_t n,
                      int64_t k, std::optional<TileConfig> t = std::nullopt) {
  GroupedGpuCase c = contiguous(std::move(valid), n, k, t);
  c.kind = GemmKind::GroupedMasked;
  c.maxM = maxM;
  return c;
}

/// `g` group sizes drawn +-30% around `mean` (fixed seed).
std::vector<int32_t> ragged(int g, int mean, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.7, 1.3);
  std::vector<int32_t> rows;
  for (int i = 0; i < g; ++i)
    rows.push_back(int32_t(mean * u(rng)));
  return rows;
}

TEST(GroupedGemmGpu, ContiguousEdgeCases) {
  // Empty groups (first, middle, last), a group of one row, groups starting
  // at odd rows, one group holding every row.
  expectCase(contiguous({0, 1, 129, 0, 300, 7, 0}, 256, 512));
  expectCase(contiguous({333}, 384, 768));
  expectCase(contiguous({1}, 128, 256));
  expectCase(contiguous({0, 0, 0}, 128, 256)); // nothing to compute
  // Rows after the last group stay unwritten.
  GroupedGpuCase tail = contiguous({5, 60, 1}, 256, 512);
  tail.trailingRows = 70;
  expectCase(tail);
}

TEST(GroupedGemmGpu, ContiguousTiles) {
  const std::vector<int32_t> rows = {0, 1, 129, 300, 64, 65, 191};
  for (const TileConfig &t :
       {tile(64, 64), tile(64, 128), tile(128, 128), tile(128, 256),
        tile(192, 128), tile(128, 128, 2, 1), tile(128, 128, 1, 2),
        tile(192, 128, 1, 2), tile(64, 128, 2, 1)})
    expectCase(contiguous(rows, 640, 512, t));
  // Overlapped promotion.
  TileConfig ovk = tile(128, 128);
  ovk.overlap = PromotionOverlap::AlternateK;
  expectCase(contiguous(rows, 512, 1024, ovk));
  TileConfig ovn = tile(128, 192);
  ovn.overlap = PromotionOverlap::AlternateN;
  expectCase(contiguous(rows, 512, 1024, ovn));
}

TEST(GroupedGemmGpu, ContiguousRaggedN) {
  // N not a multiple of the tile; N * 2 bytes not a multiple of 16 (the
  // predicated-store epilogue); f32 output.
  expectCase(contiguous({3, 200, 0, 77}, 200, 512, tile(128, 128)));
  expectCase(contiguous({3, 200, 0, 77}, 100, 512, tile(128, 64)));
  GroupedGpuCase f32 = contiguous({3, 200, 0, 77}, 264, 640);
  f32.recipe.out = DType::F32;
  expectCase(f32);
}

TEST(GroupedGemmGpu, ContiguousRecipesAndScaleLayouts) {
  const std::vector<int32_t> rows = {17, 0, 250, 129};
  // A's scales [K blocks][rows]: they come by TMA with each stage, boxes
  // starting at any row.
  GroupedGpuCase outer = contiguous(rows, 384, 1024, tile(128, 128));
  outer.aScalesOuterContiguous = true;
  expectCase(outer);
  outer.tile = tile(64, 128);
  expectCase(outer);
  for (GemmRecipe r :
       {caseRecipe(kTok, Granularity::block(1, 128), 128),
        caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0),
        caseRecipe(Granularity::perRow(), Granularity::perRow(), 128),
        caseRecipe(Granularity::block(1, 128, ScaleFormat::UE8M0),
                   Granularity::block(128, 128, ScaleFormat::UE8M0), 128),
        caseRecipe(kTok, kBlk, 32, DType::F32)}) {
    GroupedGpuCase c = contiguous(rows, 384, 1024);
    c.recipe = r;
    expectCase(c);
  }
}

TEST(GroupedGemmGpu, ContiguousManyRaggedGroups) {
  expectCase(contiguous(ragged(16, 96, 7), 512, 1024));
  expectCase(contiguous(ragged(32, 40, 8), 768, 512));
  // The padded layout (Ling 2.0): every group a multiple of the tile.
  std::vector<int32_t> padded = ragged(8, 200, 9);
  for (int32_t &r : padded)
    r = (r + 127) / 128 * 128;
  expectCase(contiguous(padded, 512, 1024));
}

TEST(GroupedGemmGpu, MaskedEdgeCases) {
  // Valid rows 0, 1, all, and in between; the rest of each slab unwritten.
  expectCase(masked({0, 1, 192, 150}, 192, 256, 512));
  expectCase(masked({192}, 192, 384, 768));
  expectCase(masked({0, 0}, 64, 128, 256));
  for (const TileConfig &t : {tile(64, 128), tile(128, 128), tile(192, 128),
                              tile(128, 128, 2, 1), tile(64, 256)})
    expectCase(masked({5, 64, 65, 130, 0}, 160, 512, 1024, t));
}

TEST(GroupedGemmGpu, MaskedDecodeAndRecipes) {
  // Decode: ~20 rows per expert, the tile chosen for the expected rows.
  GroupedGpuCase decode = masked(ragged(32, 20, 11), 64, 768, 1024);
  decode.expectedM = 20;
  expectCase(decode);
  GroupedGpuCase pt = masked({9, 33, 0}, 48, 256, 512);
  pt.recipe = caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0);
  expectCase(pt);
  // A's scales of 128-row blocks: each group's slab is scaled on its own.
  GroupedGpuCase blocks = masked({100, 256, 3}, 256, 256, 512);
  blocks.recipe = caseRecipe(kBlk, kBlk, 128);
  expectCase(blocks);
  GroupedGpuCase outer = masked({100, 1, 64}, 128, 256, 512);
  outer.aScalesOuterContiguous = true;
  expectCase(outer);
}

GroupedGpuCase alongK(std::vector<int32_t> ks, int64_t m, int64_t n,
                      std::optional<TileConfig> t = std::nullopt) {
  GroupedGpuCase c;
  c.kind = GemmKind::GroupedK;
  // The experts' weight gradients: 1x128 on both (DeepSeek-V3's wgrad).
  c.recipe = caseRecipe(kTok, kTok, 128, DType::F32);
  c.rows = std::move(ks);
  c.m = m;
  c.n = n;
  c.tile = t;
  return c;
}

TEST(GroupedGemmGpu, AlongKEdgeCases) {
  // Empty groups (first, middle, last), one k-block, one group.
  expectCase(alongK({0, 128, 1024, 0, 384, 0}, 200, 264));
  expectCase(alongK({2048}, 129, 256));
  expectCase(alongK({128}, 1, 128));
  // bf16 output, and the 1x128 x 128x128 recipe.
  GroupedGpuCase bf = alongK({256, 640, 128}, 192, 320);
  bf.recipe.out = DType::BF16;
  expectCase(bf);
  GroupedGpuCase blk = alongK({256, 0, 512}, 256, 384);
  blk.recipe = caseRecipe(kTok, kBlk, 128, DType::F32);
  expectCase(blk);
}

TEST(GroupedGemmGpu, AlongKAccumulatesInPlace) {
  GroupedGpuCase acc = alongK({384, 0, 1280, 128}, 300, 256);
  acc.accumulate = true;
  expectCase(acc);
  for (const TileConfig &t : {tile(128, 128), tile(64, 160), tile(192, 128),
                              tile(128, 128, 1, 2), tile(128, 128, 2, 1)}) {
    GroupedGpuCase c = alongK({512, 128, 0, 896}, 320, 512, t);
    c.accumulate = true;
    expectCase(c);
  }
  GroupedGpuCase outer = alongK({256, 768}, 256, 256);
  outer.aScalesOuterContiguous = true;
  expectCase(outer);
}

} // namespace
