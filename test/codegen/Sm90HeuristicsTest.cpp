//===- Sm90HeuristicsTest.cpp - The sm_90a tile heuristic's picks ---------===//
//
// The picks the fitted cost model makes on the bench shapes, against what the
// H100 sweeps measured fastest (docs/results/h100-2026-11-22d/, and for
// M = 128 docs/results/h100-2026-11-22j/): a refit that moves one of them
// should be a decision, not an accident.
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm90Heuristics.h"
#include "codegen/Sm90Gemm.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {
KernelSpec deepseek(int64_t m, int64_t n, int64_t k) {
  KernelSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  s.promotionInterval = 128;
  return s;
}

struct Pick {
  int64_t m, n, k;
  int blockM, blockN;
  PromotionOverlap overlap;
  int splitK;
  int tailSplit = 1; ///< 4 where the last partial wave splits
  int clusterN = 1;
  Raster raster = Raster::AlongM; ///< 192-row tiles: down M unless ragged
};
} // namespace

TEST(Sm90Heuristic, PicksTheMeasuredBestTileOnTheBenchShapes) {
  using O = PromotionOverlap;
  const Pick picks[] = {
      // Three consumer warpgroups (192x128) beat every 128-row tile at
      // M = 4096 (H100, docs/results/h100-2026-11-22f/: +2% on
      // 4096x4096x7168; +26% on 4096x2112x7168 over 128x128, +15% over
      // 176 columns).
      {4096, 576, 7168, 192, 128, O::None, 1},
      {4096, 2112, 7168, 192, 128, O::None, 1, 1, 1, Raster::AlongN},
      // The last partial wave's tiles split along K where the slices are
      // long (docs/results/h100-2026-11-22g/: +3%, +6%, and with 1x2
      // clusters +6% at K = 16384). Tiles whose last wave splits pair in
      // 1x2 clusters (docs/results/h100-2026-11-22k/: +2.0% and +1.7% on
      // these two).
      {4096, 4096, 7168, 192, 128, O::None, 1, 4, 2},
      {4096, 4096, 11008, 192, 128, O::None, 1, 4, 2}, // mlp's down proj.
      {4096, 7168, 16384, 192, 128, O::None, 1, 4, 2},
      // 44 tiles left over too, but slices of 11 k-blocks: not split, and
      // not paired (unsplit shapes measured -3.5% to +2.9% paired; +2.9%
      // on this one, docs/results/h100-2026-11-22k/).
      {4096, 11008, 4096, 192, 128, O::None, 1, 1, 1, Raster::AlongN},
      {4096, 7168, 2048, 192, 128, O::None, 1},
      {4096, 24576, 1536, 192, 128, O::None, 1},
      {4096, 32768, 512, 192, 128, O::None, 1},
      // Up to 128 rows a 192-row tile only wastes rows. Small M is
      // memory-bound (the cost model's DRAM term, fitted on
      // docs/results/h100-2026-11-22e/): 64 columns unsplit
      // beat 128 split in two at K = 16384 (+5% on the H100: no partials
      // to move), 96 columns beat 192 at 24576x1536 (+3.5-4%).
      {128, 7168, 16384, 128, 64, O::AlternateK, 1, 1, 1, Raster::AlongN},
      {128, 24576, 1536, 128, 96, O::None, 1, 1, 1, Raster::AlongN},
      {128, 32768, 512, 128, 128, O::None, 1, 1, 1, Raster::AlongN},
      // Small M: split-K on narrow tiles fills the SMs, without overlapped
      // promotion (within 1% either way, ~30% less NVRTC time). From the
      // split-K sweep (docs/results/h100-2026-11-22j/): 48 columns in three
      // slices (132 CTAs, +3% over 64 in three) and 32 columns in seven
      // (+5% over four).
      {128, 2112, 7168, 128, 48, O::None, 3, 1, 1, Raster::AlongN},
      {128, 4096, 7168, 128, 64, O::None, 2, 1, 1, Raster::AlongN},
      {128, 576, 7168, 128, 32, O::None, 7, 1, 1, Raster::AlongN},
      // One consumer warpgroup: 128 columns, not 96 (+10%; the refit's
      // DRAM rate is bounded by this pick and by 128x7168x16384's).
      {64, 32768, 512, 64, 128, O::None, 1, 1, 1, Raster::AlongN},
      // Training shapes whose last partial wave streams alone
      // (kCtaBytesPerClock; H200, docs/results/h200-2026-12-05-fit/):
      // 128x144 tiles, not 128x112 (255 us against 283 us).
      {128, 53248, 16384, 128, 144, O::None, 1, 1, 1, Raster::AlongN},
      // Decode weights, where narrow tiles stream slowly
      // (kLoadLatencyClocks; H200, docs/results/h200-2026-12-05-decode/
      // fit-decode.json): 64x192 at 16x18432x16384 (86.5 us; 64x80 107,
      // 64x64 126), 64x128 at 16x16384x3072 (22.4-22.8 us; 64x64 25.2)
      // and 64x192 at 16x24576x1536 (18.3 us; 64x64 20.0).
      {16, 18432, 16384, 64, 192, O::None, 1, 1, 1, Raster::AlongN},
      {16, 16384, 3072, 64, 128, O::None, 1, 1, 1, Raster::AlongN},
      {16, 24576, 1536, 64, 192, O::None, 1, 1, 1, Raster::AlongN},
  };
  for (const Pick &p : picks) {
    SCOPED_TRACE(std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                 std::to_string(p.k));
    const KernelSpec s = deepseek(p.m, p.n, p.k);
    const ConfigChoice c = selectSm90Config(s, 132);
    EXPECT_EQ(c.tile.blockM, p.blockM) << c.reason;
    EXPECT_EQ(c.tile.mathWarpgroups, p.blockM / 64);
    EXPECT_EQ(c.tile.blockN, p.blockN) << c.reason;
    EXPECT_EQ(c.tile.overlap, p.overlap) << c.reason;
    EXPECT_EQ(c.tile.splitK, p.splitK) << c.reason;
    EXPECT_EQ(c.tile.tailSplit, p.tailSplit) << c.reason;
    EXPECT_EQ(c.tile.clusterN, p.clusterN) << c.reason;
    EXPECT_EQ(c.tile.clusterM, 1) << c.reason;
    EXPECT_EQ(c.tile.raster, p.raster) << c.reason;
    KernelSpec chosen = s;
    chosen.tile = c.tile;
    EXPECT_TRUE(checkSm90Spec(chosen).isOk())
        << checkSm90Spec(chosen).message();
  }
}

TEST(Sm90Heuristic, RowsThatFitOneWarpgroupTakeA64RowTile) {
  // Up to 64 rows a taller tile multiplies padding, and dense 64-row tiles
  // come in whole multiples of 64 columns; N from narrow to 16 waves of
  // 64-column tiles, K from one k-block to 128.
  for (int64_t m : {1, 7, 16, 33, 64})
    for (int64_t n : {256, 1000, 4096, 14336, 135168})
      for (int64_t k : {128, 3584, 16384}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" +
                     std::to_string(k));
        const ConfigChoice c = selectSm90Config(deepseek(m, n, k), 132);
        EXPECT_EQ(c.tile.blockM, 64) << c.reason;
        EXPECT_EQ(c.tile.blockN % 64, 0) << c.reason;
      }
  // 65 rows do not fit one warpgroup.
  EXPECT_EQ(selectSm90Config(deepseek(65, 4096, 4096), 132).tile.blockM, 128);
}

TEST(Sm90Heuristic, WideTilesOfTwoWarpgroupsPromoteInPlace) {
  // Overlapped promotion ("k") lost at 128x128 on every training shape of
  // K >= 8192 (H200, docs/results/h200-2026-12-05-fit/): 128-row tiles
  // wider than 64 columns promote in place, also over long units; those of
  // 64 columns or fewer keep it.
  int wide = 0, narrow = 0;
  for (int64_t m : {65, 200, 257, 1000, 2500})
    for (int64_t n : {2048, 5120, 16384, 28672})
      for (int64_t k : {2048, 8192, 13824, 53248}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" +
                     std::to_string(k));
        const TileConfig t = selectSm90Config(deepseek(m, n, k), 132).tile;
        if (t.blockM != 128 || t.splitK != 1)
          continue;
        if (t.blockN > 64) {
          ++wide;
          EXPECT_EQ(t.overlap, PromotionOverlap::None) << toJSON(t);
        } else {
          ++narrow;
          EXPECT_EQ(t.overlap, PromotionOverlap::AlternateK) << toJSON(t);
        }
      }
  // The grid reaches both sides of the rule.
  EXPECT_GT(wide, 5);
  EXPECT_GT(narrow, 0);
}

TEST(Sm90Heuristic, ACtaPaysItsPipelineFillOnce) {
  // A CTA's next tile loads during its epilogue, so two tiles a CTA cost
  // less than twice one (docs/results/h100-2026-12-06-refit/). On the
  // training shape 8192x1000x2048 the H100 measured 128x256 tiles (two
  // waves) 9.1% slower than 128x128 (four), and 192x128 tiles (three) 4.6-
  // 5.4% faster than 128x256: the pick is no longer the wide tile.
  const ConfigChoice c = selectSm90Config(deepseek(8192, 1000, 2048), 132);
  EXPECT_NE(c.tile.blockN, 256) << c.reason;
  // Both tiles of a CTA still pay their k-blocks: the same shape with K
  // eight times as deep is predicted more than four times as slow.
  EXPECT_GT(selectSm90Config(deepseek(8192, 1000, 16384), 132).predictedCost,
            4 * c.predictedCost);
}

TEST(Sm90Heuristic, FewerSMsMeanMoreWaves) {
  // The same shape on a part with fewer SMs is predicted slower.
  const KernelSpec s = deepseek(4096, 4096, 7168);
  EXPECT_GT(selectSm90Config(s, 114).predictedCost,
            selectSm90Config(s, 132).predictedCost);
}

// The split tail's arithmetic (the runtime launches with it; GemmGpu.SplitTail
// runs these shapes on the H100).
TEST(Sm90TailSchedule, SplitsTheLastPartialWave) {
  struct Case {
    int64_t tiles, slots;
    int maxSplit;
    int64_t kSlices, first;
    int split;
  };
  const Case cases[] = {
      {704, 132, 4, 56, 660, 3},    // 4096x4096 in 192x128 tiles: 44 left
      {1232, 132, 4, 128, 1188, 3}, // 4096x7168
      {176, 132, 4, 16, 132, 3},    // 2000x2000
      {192, 132, 4, 9, 132, 2},     // 1000x4000: 60 left, 2 slices fit
      {8, 132, 4, 9, 0, 4},         // fewer tiles than SMs: all split
      {8, 132, 8, 9, 0, 8},         // up to the most asked for
      {2, 132, 4, 2, 0, 2},         // no more slices than promotion groups
      {264, 132, 4, 56, 264, 1},    // whole waves: nothing to split
      {200, 132, 4, 56, 200, 1},    // 68 left: two slices would not fit
      {5, 132, 1, 56, 5, 1},        // off
      {9, 132, 4, 1, 9, 1},         // one K slice only
      {0, 132, 4, 56, 0, 1},        // no tiles (M = 0)
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.tiles) + " tiles, " +
                 std::to_string(c.slots) + " slots");
    const Sm90TailSchedule t =
        sm90TailSchedule(c.tiles, c.slots, c.maxSplit, c.kSlices);
    EXPECT_EQ(t.first, c.first);
    EXPECT_EQ(t.split, c.split);
    // Never more units in the tail than one wave holds.
    EXPECT_LE((c.tiles - t.first) * t.split, c.slots);
    EXPECT_EQ(t.units(c.tiles), t.first + (c.tiles - t.first) * t.split);
  }
}

TEST(Sm90CandidateTiles, TheGridsLegalTilesInOrder) {
  // The default grid times the widths the cost model was fitted on.
  EXPECT_EQ(Sm90TileGrid().widths,
            (std::vector<int>{64, 96, 112, 128, 144, 160, 176, 192, 224, 256}));
  KernelSpec base = deepseek(kDynamic, 7168, 2048);
  const std::vector<TileConfig> small =
      sm90CandidateTiles(base, 128, 132, Sm90TileGrid());
  const std::vector<TileConfig> large =
      sm90CandidateTiles(base, 4096, 132, Sm90TileGrid());
  ASSERT_FALSE(small.empty());
  ASSERT_FALSE(large.empty());
  bool split = false;
  int previousWidth = 0;
  for (const TileConfig &t : small) {
    KernelSpec s = base;
    s.tile = t;
    EXPECT_TRUE(checkSm90Spec(s).isOk()) << toJSON(t);
    EXPECT_EQ(t.clusterM * t.clusterN, 1) << toJSON(t);
    EXPECT_NE(t.overlap, PromotionOverlap::AlternateN) << toJSON(t);
    EXPECT_GE(t.blockN, previousWidth) << "in width order";
    previousWidth = t.blockN;
    split = split || t.splitK > 1;
  }
  EXPECT_TRUE(split) << "M = 128 splits along K";
  for (const TileConfig &t : large)
    EXPECT_EQ(t.splitK, 1) << "no split-K above M = 1024: " << toJSON(t);
  // Up to 64 rows the grid has one-warpgroup tiles too, first.
  const std::vector<TileConfig> decode =
      sm90CandidateTiles(base, 16, 132, Sm90TileGrid());
  ASSERT_FALSE(decode.empty());
  EXPECT_EQ(decode.front().blockM, 64);
  EXPECT_EQ(decode.front().mathWarpgroups, 1);
  EXPECT_EQ(decode.back().blockM, 128);
  for (const TileConfig &t : small)
    EXPECT_EQ(t.blockM, 128) << "64-row tiles only up to M = 64";
  // The full grid adds 2-CTA clusters.
  Sm90TileGrid full;
  full.full = true;
  bool clusters = false;
  for (const TileConfig &t : sm90CandidateTiles(base, 4096, 132, full))
    clusters = clusters || t.clusterM * t.clusterN == 2;
  EXPECT_TRUE(clusters);
}
