//===- GemmGpuTest.cpp - Generated sm_90a GEMMs against the CPU oracle ----===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh): every
// case quantizes random data with the recipe, runs the JIT-compiled kernel,
// and compares with (1) the oracle's emulation of the same promotion
// structure and (2) the unquantized FP64 product (DeepGEMM's similarity).
// D is poisoned with NaN first, so an unwritten element fails.
//
//===----------------------------------------------------------------------===//

#include "codegen/RecipeSpace.h"
#include "codegen/Sm90Gemm.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "test/runtime/GpuCheck.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace fp8;

namespace {

const Granularity kTok = Granularity::block(1, 128);
const Granularity kBlk = Granularity::block(128, 128);

/// A 192x128 tile: three consumer warpgroups.
TileConfig tile192() {
  TileConfig t;
  t.blockM = 192;
  t.mathWarpgroups = 3;
  t.blockN = 128;
  t.stages = 4;
  return t;
}

/// `t` in 2x1 and 1x2 clusters: an odd tile count (a phantom partner) and
/// M = 1.
void expectClusterPairs(const TileConfig &t) {
  for (auto [cm, cn] : {std::pair<int, int>{2, 1}, {1, 2}}) {
    TileConfig c = t;
    c.clusterM = cm;
    c.clusterN = cn;
    expectCase({caseRecipe(kTok, kBlk, 128), 600, 1152, 768, c}); // odd tiles
    expectCase({caseRecipe(kTok, kBlk, 128), 1, 384, 512, c});
  }
}

/// `tile` is refused before launch with a message containing `why`.
void expectRefused(const GemmRecipe &r, const TileConfig &tile,
                   const char *why) {
  auto spec = gemmKernelSpec(r, 300, 1024, 1024, 132, tile);
  Status st = spec ? checkSm90Spec(*spec) : spec.status();
  EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
}

} // namespace

TEST(GemmGpu, DeepSeekRecipeSquare) {
  expectCase({caseRecipe(kTok, kBlk, 128), 128, 128, 128});
  expectCase({caseRecipe(kTok, kBlk, 128), 256, 256, 512});
}

TEST(GemmGpu, DeepSeekRecipeRaggedShapes) {
  for (int64_t m : {1, 7, 64, 129, 1000})
    expectCase({caseRecipe(kTok, kBlk, 128), m, 200, 1040});
  expectCase({caseRecipe(kTok, kBlk, 128), 129, 2112, 7168});
  expectCase({caseRecipe(kTok, kBlk, 128), 7, 576, 7168});
}

TEST(GemmGpu, DeepSeekRecipeBenchShapes) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2112, 7168},
                      {576, 7168},
                      {24576, 1536},
                      {32768, 512},
                      {7168, 16384},
                      {4096, 7168},
                      {7168, 2048}})
    for (int64_t m : {128, 4096})
      expectCase({caseRecipe(kTok, kBlk, 128), m, n, k});
}

TEST(GemmGpu, EveryPromotionInterval) {
  for (int64_t p : {32, 64, 128})
    expectCase({caseRecipe(kTok, kBlk, p), 129, 256, 1024});
  for (int64_t p : {0, 32, 128, 256, 512})
    expectCase(
        {caseRecipe(Granularity::perTensor(), Granularity::perTensor(), p), 129,
         256, 1024});
}

// Intervals that neither divide a k-block nor are a multiple of it promote
// at run-time steps (96: steps 3, 6, 9, ...; 160: every fifth step) and cut
// slices in units of whole groups (sm90GroupBlocks); 384 is whole blocks.
// Ragged shapes, K not a multiple of the interval, split-K, a split tail,
// per-row scales, both outputs.
TEST(GemmGpu, IrregularPromotionIntervals) {
  const Granularity pt = Granularity::perTensor(), row = Granularity::perRow();
  TileConfig t128;
  t128.blockM = 128;
  t128.mathWarpgroups = 2;
  t128.blockN = 128;
  t128.stages = 4;
  for (int64_t p : {96, 160, 192, 384}) {
    expectCase({caseRecipe(pt, pt, p), 129, 256, 1024});
    expectCase({caseRecipe(pt, pt, p, DType::F32), 7, 200, 1040});
    expectCase({caseRecipe(pt, pt, p), 1, 136, 4000});
    expectCase({caseRecipe(row, row, p), 257, 384, 1536});
    TileConfig sk = t128;
    sk.splitK = 3;
    expectCase({caseRecipe(pt, pt, p, DType::F32), 130, 264, 2944, sk});
    TileConfig tail = t128;
    tail.tailSplit = 2;
    tail.persistent = true;
    expectCase({caseRecipe(pt, pt, p), 1000, 1152, 3072, tail});
  }
}

// The grouping itself, observed: with non-negative inputs the tensor cores'
// truncating accumulation loses more the longer a group runs, so a kernel
// whose interval ran as another (160 or 192 as 128, 96 dropping a step) is
// nearer that interval's emulation than its own.
TEST(GemmGpu, PromotionGroupingMatchesItsInterval) {
  const Granularity pt = Granularity::perTensor();
  for (auto [p, rival] : {std::pair<int64_t, int64_t>{96, 128},
                          {160, 128},
                          {192, 128},
                          {384, 128},
                          {128, 256},
                          {256, 128}}) {
    GpuCase c{caseRecipe(pt, pt, p, DType::F32), 256, 256, 8192};
    c.nonNegative = true;
    c.rivalInterval = rival;
    GpuCaseResult r = expectCase(c);
    EXPECT_LT(r.relErrVsEmulated, 0.5 * r.relErrVsRival)
        << describe(c) << ": " << r.summary;
  }
}

// One point of every recipe class sm_90a accepts (codegen/RecipeSpace.h:
// scale paths x promotion schedules x result types, the format pairs
// rotating), ragged: M = 129, N = 264 (not a multiple of any tile).
TEST(GemmGpu, EveryAcceptedRecipeClass) {
  for (const RecipePoint &p : recipeSample(Arch::SM90a)) {
    GemmRecipe r;
    r.a = p.a;
    r.b = p.b;
    r.promotionInterval = p.promotionInterval;
    r.out = p.out;
    expectCase({r, 129, 264, 1536});
  }
}

TEST(GemmGpu, EveryGranularityPair) {
  expectCase({caseRecipe(Granularity::perRow(), Granularity::perRow(), 128),
              257, 384, 512});
  expectCase({caseRecipe(Granularity::perTensor(), Granularity::perRow(), 128),
              64, 128, 256});
  expectCase(
      {caseRecipe(kTok, kTok, 128), 129, 320, 768}); // weight-gradient style
  expectCase({caseRecipe(kTok, Granularity::perTensor(), 128), 33, 256, 384});
  expectCase({caseRecipe(Granularity::block(1, 128, ScaleFormat::UE8M0),
                         Granularity::block(128, 128, ScaleFormat::UE8M0), 128),
              200, 512, 1024});
  expectCase(
      {caseRecipe(Granularity::block(1, 128, ScaleFormat::F32Pow2),
                  Granularity::block(128, 128, ScaleFormat::F32Pow2), 64),
       77, 136, 640});
}

TEST(GemmGpu, FormatsAndOutputs) {
  expectCase(
      {caseRecipe(kTok, kBlk, 128, DType::BF16, DType::E5M2, DType::E4M3FN),
       128, 256, 512});
  expectCase(
      {caseRecipe(kTok, kBlk, 128, DType::BF16, DType::E4M3FN, DType::E5M2),
       128, 256, 512});
  expectCase(
      {caseRecipe(kTok, kBlk, 128, DType::BF16, DType::E5M2, DType::E5M2), 65,
       128, 256});
  expectCase({caseRecipe(kTok, kBlk, 128, DType::F32), 130, 264, 512});
  // N * sizeof(bf16) not a multiple of 16: the predicated-store epilogue.
  expectCase({caseRecipe(kTok, kBlk, 128), 100, 1001, 256});
  expectCase({caseRecipe(kTok, kBlk, 128, DType::F32), 100, 130, 256});
}

TEST(GemmGpu, AccumulateIntoC) {
  GemmRecipe r = caseRecipe(kTok, kBlk, 128);
  r.accumulate = true;
  expectCase({r, 129, 256, 512});
  // C by TMA into the staging buffers: one round (64x64), two rounds with a
  // buffer each (192x128), four rounds over two buffers (128x256: the last
  // two load at their round's start), a split K; ragged M and N.
  auto tiled = [](int bm, int bn, int splitK) {
    TileConfig t;
    t.blockM = bm;
    t.mathWarpgroups = bm / 64;
    t.blockN = bn;
    t.splitK = splitK;
    t.stages = 4;
    return t;
  };
  for (const TileConfig &t : {tiled(64, 64, 1), tiled(192, 128, 1),
                              tiled(128, 256, 1), tiled(128, 128, 2)})
    expectCase({r, 329, 264, 1024, t});
  r.out = DType::F32;
  expectCase({r, 7, 136, 256});
  expectCase({r, 200, 136, 512, tiled(128, 128, 1)});
}

TEST(GemmGpu, ExplicitTileConfigs) {
  for (int bn : {64, 112, 128, 144, 160, 192, 208, 224, 256}) {
    TileConfig t;
    t.blockN = bn;
    t.stages = bn >= 192 ? 4 : 5;
    if (bn == 208 || bn == 224) {
      // 128x128 B blocks at a run-time column of a tile over 192 columns:
      // refused before launch (register limit), with per-tensor scales fine.
      auto spec = gemmKernelSpec(caseRecipe(kTok, kBlk, 128), 300, 1000 + bn,
                                 1024, 132, t);
      Status st = spec ? checkSm90Spec(*spec) : spec.status();
      EXPECT_NE(st.message().find("above 192 columns"), std::string::npos)
          << st.message();
      expectCase(
          {caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 128),
           300, 1000 + bn, 1024, t});
      continue;
    }
    expectCase({caseRecipe(kTok, kBlk, 128), 300, 1000 + bn, 1024, t});
  }
  TileConfig small;
  small.blockM = 64;
  small.mathWarpgroups = 1;
  small.blockN = 256;
  small.stages = 4;
  expectCase({caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0),
              70, 512, 512, small});
  for (int split : {2, 3, 8}) {
    TileConfig t;
    t.splitK = split;
    t.stages = 4;
    expectCase({caseRecipe(kTok, kBlk, 128), 128, 2112, 7168, t});
    expectCase({caseRecipe(Granularity::perRow(), Granularity::perRow(), 128),
                100, 520, 3072, t});
  }
  // Clusters: multicast of B (2x1) or A (1x2); odd tile counts give the
  // last pair a phantom partner; with split-K too.
  for (auto [cm, cn] : {std::pair<int, int>{2, 1}, {1, 2}}) {
    TileConfig t;
    t.clusterM = cm;
    t.clusterN = cn;
    t.blockN = 128;
    t.stages = 4;
    expectCase({caseRecipe(kTok, kBlk, 128), 129, 640, 1024, t}); // 2 m tiles
    expectCase({caseRecipe(kTok, kBlk, 128), 300, 1152, 768, t}); // 3 x 9 tiles
    expectCase({caseRecipe(kTok, kBlk, 128), 1, 384, 512, t});    // M = 1
    expectCase(
        {caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0), 257,
         1000, 512, t});
    t.splitK = 3;
    expectCase({caseRecipe(kTok, kBlk, 128), 200, 1000, 2048, t});
  }
  TileConfig alongM;
  alongM.raster = Raster::AlongM;
  alongM.swizzleGroup = 3;
  expectCase({caseRecipe(kTok, kBlk, 128), 1000, 1280, 512, alongM});
}

// Three consumer warpgroups (192-row tiles): ragged M around the 192-row
// boundary (phantom rows zero-filled, stores clipped), ragged N and K, the
// recipes' promotion paths (per-tensor, per-row epilogue scales, per-column
// B scales by the loader warp, several promotions per k-block, none),
// f32 output and accumulate-into-C, 2-CTA clusters with a phantom partner.
TEST(GemmGpu, ThreeConsumerWarpgroups) {
  const TileConfig t = tile192();
  for (int64_t m : {1, 7, 191, 193, 1000})
    expectCase({caseRecipe(kTok, kBlk, 128), m, 1000, 1040, t});
  expectCase({caseRecipe(kTok, kBlk, 128), 4096, 2112, 7168, t});
  expectCase({caseRecipe(kTok, kBlk, 32), 385, 256, 512, t});
  expectCase({caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0),
              400, 520, 1024, t});
  expectCase(
      {caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 128), 400,
       520, 1024, t});
  expectCase({caseRecipe(Granularity::perRow(), Granularity::perTensor(), 128),
              257, 384, 768, t});
  expectCase({caseRecipe(kTok, kTok, 128), 300, 320, 768, t}); // per-column B
  expectCase({caseRecipe(kTok, kBlk, 128, DType::F32), 200, 264, 512, t});
  GemmRecipe acc = caseRecipe(kTok, kBlk, 128);
  acc.accumulate = true;
  expectCase({acc, 250, 256, 512, t});
  TileConfig narrow = t;
  narrow.blockN = 64;
  narrow.stages = 5;
  expectCase({caseRecipe(kTok, kBlk, 128), 500, 1000, 1024, narrow});
  expectClusterPairs(t);
  // Overlapped promotion, split-K and per-column epilogue scales do not fit
  // three warpgroups' registers: refused before launch.
  TileConfig ovk = t;
  ovk.overlap = PromotionOverlap::AlternateK;
  expectRefused(caseRecipe(kTok, kBlk, 128), ovk,
                "overlap 'none' with block_m 192");
  TileConfig split = t;
  split.splitK = 2;
  expectRefused(caseRecipe(kTok, kBlk, 128), split,
                "split_k 1 with block_m 192");
  expectRefused(caseRecipe(Granularity::perRow(), Granularity::perRow(), 128),
                t, "with block_m 192 (per-column epilogue scales");
}

// A split tail (tail_split): the last partial wave's tiles are cut into K
// slices, reduced by the last slice to finish. On the H100's 132 SMs each
// case below splits (Sm90TailSchedule in HeuristicsTest pins the
// arithmetic): every tile when there are fewer tiles than SMs, else the
// tiles past the last whole wave; slices of 1 to 28 k-blocks.
TEST(GemmGpu, SplitTail) {
  TileConfig t = tile192();
  t.tailSplit = 4;
  expectCase({caseRecipe(kTok, kBlk, 128), 1, 1000, 1040, t}); // 8 tiles x 4
  expectCase({caseRecipe(kTok, kBlk, 128), 7, 1000, 256, t});  // 2 k-blocks
  expectCase(
      {caseRecipe(kTok, kBlk, 128), 2000, 2000, 2048, t}); // 132 + 44 x 3
  expectCase(
      {caseRecipe(kTok, kBlk, 128), 1000, 4000, 1040, t}); // 132 + 60 x 2
  expectCase(
      {caseRecipe(kTok, kBlk, 128), 4096, 4096, 7168, t}); // 660 + 44 x 3
  expectCase({caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0),
              400, 520, 1024, t});
  expectCase(
      {caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 512), 400,
       520, 1024, t}); // two promotion groups: 2 slices
  expectCase({caseRecipe(kTok, kBlk, 128, DType::F32), 250, 256, 512, t});
  GemmRecipe acc = caseRecipe(kTok, kBlk, 128);
  acc.accumulate = true; // C is added once, by the reducing slice
  expectCase({acc, 250, 256, 512, t});
  TileConfig two = t; // two consumer warpgroups, per-column B scales
  two.blockM = 128;
  two.mathWarpgroups = 2;
  two.stages = 5;
  expectCase({caseRecipe(kTok, kBlk, 128), 1000, 1000, 1040, two});
  expectCase({caseRecipe(kTok, kTok, 128), 300, 320, 768, two});
  TileConfig one = two; // one consumer warpgroup, 64 columns
  one.blockM = 64;
  one.mathWarpgroups = 1;
  one.blockN = 64;
  one.stages = 8;
  expectCase({caseRecipe(kTok, kBlk, 128), 33, 520, 768, one});
  expectClusterPairs(t);
  // Run twice on one stream: the arrival counters are reset for the next.
  expectCase({caseRecipe(kTok, kBlk, 128), 1, 1000, 1040, t});
  TileConfig many = t;
  many.tailSplit = 9;
  expectRefused(caseRecipe(kTok, kBlk, 128), many,
                "expected 'tail_split' in tile to be an integer in [1, 8], "
                "found 9");
  TileConfig both = two;
  both.splitK = 2;
  expectRefused(caseRecipe(kTok, kBlk, 128), both,
                "expected split_k 1 and a persistent grid with tail_split 4");
  TileConfig wide = two;
  wide.blockN = 256;
  expectRefused(caseRecipe(kTok, kBlk, 128), wide,
                "expected block_n <= 192 with tail_split > 1");
}

// K-varying scales reach the consumers two ways: with each pipeline stage by
// TMA when their layout allows (A: [K blocks][M] with a 16-byte pitch; B:
// K blocks contiguous with a 16-byte pitch), else loaded by the consumers.
// Both ways, in every mix, over ragged M, tiles whose B block boundary sits
// at a run-time offset (112, 192), wide and overlapped tiles, split-K.
TEST(GemmGpu, ScaleLoadPaths) {
  struct Way {
    int64_t m, n, k;
    bool outerContiguous;
    bool aTma, bTma; // expected
  };
  const Way ways[] = {
      {1000, 2112, 7168, false, false, true},  // oracle layout, 56 k-blocks
      {1000, 2112, 1040, false, false, false}, // 9 k-blocks: B pitch 36 B
      {1000, 2112, 7168, true, true, false},   // M pitch 4000 B
      {4096, 576, 2048, true, true, false},
      {129, 576, 2048, true, false, false}, // M pitch 516 B
      {7, 640, 1024, true, false, false},
      {1, 640, 1024, true, false, false},
      {128, 640, 1024, true, true, false},
  };
  // The heuristic's tile (0), B blocks at a run-time column (112, 192), two
  // N chunks (256).
  const int widths[] = {0, 112, 192, 256};
  auto withWidth = [](GpuCase &c, int bn) {
    if (!bn)
      return;
    TileConfig t;
    t.blockN = bn;
    t.stages = bn == 256 ? 3 : 4;
    c.tile = t;
  };
  for (const Way &w : ways)
    for (int bn : widths) {
      GpuCase c{caseRecipe(kTok, kBlk, 128), w.m, w.n, w.k};
      c.outerContiguousScales = w.outerContiguous;
      withWidth(c, bn);
      GpuCaseResult r = expectCase(c);
      EXPECT_EQ(r.scaleATma, w.aTma) << describe(c);
      EXPECT_EQ(r.scaleBTma, w.bTma) << describe(c);
    }
  // B scale pitches that are not 16 bytes (9 and 86 k-blocks), stored with
  // rows padded to a multiple of 4 as the plan executor's mirror stores
  // them (runtime/plan/PlanScaleMirror.h): by TMA.
  for (int bn : widths) {
    GpuCase c{caseRecipe(kTok, kBlk, 128), 1000, 2112, 1040};
    c.scaleBPitch = 12;
    withWidth(c, bn);
    GpuCaseResult r = expectCase(c);
    EXPECT_FALSE(r.scaleATma) << describe(c);
    EXPECT_TRUE(r.scaleBTma) << describe(c);
  }
  GpuCase mlpDown{caseRecipe(kTok, kBlk, 128), 129, 1024, 11008};
  mlpDown.scaleBPitch = 88;
  EXPECT_TRUE(expectCase(mlpDown).scaleBTma) << describe(mlpDown);
  TileConfig ovk;
  ovk.overlap = PromotionOverlap::AlternateK;
  ovk.blockN = 128;
  ovk.stages = 4;
  TileConfig split;
  split.splitK = 3;
  split.blockN = 96;
  split.stages = 4;
  for (bool outer : {false, true})
    for (const TileConfig &t : {ovk, split}) {
      GpuCase c{caseRecipe(kTok, kBlk, 128), 256, 1152, 2048, t};
      c.outerContiguousScales = outer;
      GpuCaseResult r = expectCase(c);
      EXPECT_EQ(r.scaleATma, outer) << describe(c);
      EXPECT_EQ(r.scaleBTma, !outer) << describe(c);
    }
  // UE8M0 scales are always loaded by the consumers.
  GpuCase e8{caseRecipe(Granularity::block(1, 128, ScaleFormat::UE8M0),
                        Granularity::block(128, 128, ScaleFormat::UE8M0), 128),
             512, 1024, 2048};
  e8.outerContiguousScales = true;
  GpuCaseResult r = expectCase(e8);
  EXPECT_FALSE(r.scaleATma || r.scaleBTma);
}

// Overlapped promotion: two tensor-core accumulators alternate (over
// k-blocks, or over the tile's N halves). Ragged M, N and K, an odd number
// of k-blocks (the tail), one k-block, split-K, clusters, every granularity
// pair that varies along K or not, E5M2, f32 output and accumulate-into-C.
TEST(GemmGpu, OverlappedPromotion) {
  struct Ov {
    PromotionOverlap o;
    int bn;
  };
  for (Ov ov : {Ov{PromotionOverlap::AlternateK, 64},
                Ov{PromotionOverlap::AlternateK, 128},
                Ov{PromotionOverlap::AlternateN, 128},
                Ov{PromotionOverlap::AlternateN, 160},
                Ov{PromotionOverlap::AlternateN, 192}}) {
    TileConfig t;
    t.overlap = ov.o;
    t.blockN = ov.bn;
    t.stages = 4;
    expectCase(
        {caseRecipe(kTok, kBlk, 128), 129, 1000 + ov.bn, 1152, t}); // 9 kb
    expectCase({caseRecipe(kTok, kBlk, 128), 7, 520, 1024, t});
    expectCase({caseRecipe(kTok, kBlk, 128), 1, 384, 128, t}); // one k-block
    expectCase({caseRecipe(kTok, kBlk, 128), 300, 1000, 1040, t}); // ragged K
    expectCase(
        {caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 128),
         200, 776, 768, t});
    TileConfig narrow = t; // per-column B scales: narrower overlap limits
    narrow.blockN =
        std::min(ov.bn, ov.o == PromotionOverlap::AlternateK ? 112 : 176);
    expectCase({caseRecipe(Granularity::perRow(), Granularity::perRow(), 128),
                130, 1000, 512, narrow});
    expectCase({caseRecipe(kTok, kTok, 128), 257, 640, 896, narrow});
    TileConfig split = t;
    split.splitK = 3;
    expectCase({caseRecipe(kTok, kBlk, 128), 128, 2112, 7168, split});
    TileConfig cluster = t;
    cluster.clusterM = 2;
    expectCase({caseRecipe(kTok, kBlk, 128), 300, 1152, 768, cluster});
  }
  TileConfig t;
  t.overlap = PromotionOverlap::AlternateN;
  t.blockN = 160;
  t.stages = 4;
  GemmRecipe e5 = caseRecipe(kTok, kBlk, 128);
  e5.a.format = DType::E5M2;
  expectCase({e5, 200, 800, 1024, t});
  GemmRecipe f32 = caseRecipe(kTok, kBlk, 128);
  f32.out = DType::F32;
  expectCase({f32, 129, 640, 512, t});
  GemmRecipe acc = caseRecipe(kTok, kBlk, 128);
  acc.accumulate = true;
  expectCase({acc, 129, 640, 512, t});
  // N * sizeof(bf16) not a multiple of 16: the predicated-store epilogue.
  expectCase({caseRecipe(kTok, kBlk, 128), 100, 1001, 256, t});
}

TEST(GemmGpu, RefusesBadArgumentsBeforeLaunch) {
  GemmRecipe r = caseRecipe(kTok, kBlk, 128);
  auto a = DeviceBuffer::alloc(128 * 256);
  auto b = DeviceBuffer::alloc(256 * 256);
  auto sa = DeviceBuffer::alloc(128 * 2 * 4);
  auto sb = DeviceBuffer::alloc(2 * 2 * 4);
  auto d = DeviceBuffer::alloc(128 * 256 * 2);
  ASSERT_TRUE(a && b && sa && sb && d);
  GemmTensors t{a->get(),  0, sa->get(), 0,       0, b->get(), 0,
                sb->get(), 0, 0,         nullptr, 0, d->get(), 0};
  EXPECT_TRUE(gemm(r, 128, 256, 256, t, nullptr).isOk());
  // Too small a buffer for the shape: refused, not a fault.
  Status s = gemm(r, 129, 256, 256, t, nullptr);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected A to hold at least"), std::string::npos)
      << s.message();
  GemmTensors noScale = t;
  noScale.scaleA = nullptr;
  s = gemm(r, 128, 256, 256, noScale, nullptr);
  EXPECT_NE(s.message().find("scales"), std::string::npos) << s.message();
  GemmTensors host = t;
  std::vector<uint8_t> hostA(128 * 256);
  host.a = hostA.data() + 0; // host memory
  s = gemm(r, 128, 256, 256, host, nullptr);
  EXPECT_FALSE(s.isOk());
  GemmTensors misaligned = t;
  misaligned.a = static_cast<const char *>(t.a) + 8;
  s = gemm(r, 64, 256, 256, misaligned, nullptr);
  EXPECT_NE(s.message().find("16-byte aligned"), std::string::npos)
      << s.message();
  s = gemm(r, 128, 256, 200, t, nullptr); // K % 16 != 0
  EXPECT_NE(s.message().find("multiples of 16"), std::string::npos)
      << s.message();
  GemmRecipe mx = r;
  mx.a.granularity = Granularity::mx();
  mx.b.granularity = Granularity::mx();
  s = gemm(mx, 128, 256, 256, t, nullptr);
  EXPECT_NE(s.message().find("sm_100a"), std::string::npos) << s.message();
}
