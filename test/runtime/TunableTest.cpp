//===- TunableTest.cpp - Which GEMMs fp8::tuneGemm measures ---------------===//
//
// checkTunable without a GPU: sm_90a GEMMs, dense or grouped, with K-major
// operands and no epilogue, accumulating into C or not (the plans' residual
// GEMMs, the experts' weight gradients); the rest refused with a message
// naming the kernel. The group tensors a grouped GEMM is timed with
// (tuneGroups) are valid for its form, and its candidate tiles are ones
// the grouped kernel builds (no split-K, no split tail).
//
//===----------------------------------------------------------------------===//

#include "runtime/Tuner.h"

#include "codegen/Gemm.h"
#include "runtime/GroupedGemm.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

KernelSpec deepseek() {
  KernelSpec s;
  s.arch = Arch::SM90a;
  s.n = 4096;
  s.k = 4096;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  return s;
}

void expectRefused(const KernelSpec &s) {
  const Status st = checkTunable(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("fp8-tune times sm_90a GEMMs (dense or "
                              "grouped)"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find(s.kernelName()), std::string::npos)
      << st.message();
}

TEST(Tunable, DenseSm90GemmsWithOrWithoutC) {
  KernelSpec s = deepseek();
  EXPECT_TRUE(checkTunable(s).isOk());
  s.accumulate = true;
  EXPECT_TRUE(checkTunable(s).isOk());
  s.out = DType::F32;
  EXPECT_TRUE(checkTunable(s).isOk());
}

TEST(Tunable, GroupedGemmsOfEachForm) {
  for (GemmKind kind : {GemmKind::GroupedContiguous, GemmKind::GroupedMasked,
                        GemmKind::GroupedK}) {
    KernelSpec s = deepseek();
    s.kind = kind;
    s.groups = 8;
    EXPECT_TRUE(checkTunable(s).isOk()) << toString(kind);
  }
  KernelSpec shortK = deepseek();
  shortK.kind = GemmKind::GroupedK;
  shortK.groups = 2;
  shortK.k = 64;
  const Status st = checkTunable(shortK);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("expected K >= 128 for a K-grouped GEMM"),
            std::string::npos)
      << st.message();
}

TEST(Tunable, OtherTargetsAndLayoutsAreRefused) {
  KernelSpec blackwell = deepseek();
  blackwell.arch = Arch::SM100a;
  expectRefused(blackwell);
  KernelSpec mnMajor = deepseek();
  mnMajor.b.layout = Layout::MNMajor;
  expectRefused(mnMajor);
}

/// checkGroupValues of the tuner's group tensor for `s` at m rows.
Status groupsValid(const KernelSpec &s, int64_t m) {
  GroupedGemmShape shape;
  shape.kind = s.kind;
  shape.groups = s.groups;
  shape.m = m;
  shape.n = s.n;
  shape.k = s.k;
  const std::vector<int32_t> v = tuneGroups(s, m);
  return checkGroupValues(shape, v.data(), int64_t(v.size()));
}

TEST(Tunable, TimedGroupsAreValidAndTheFirstHoldsRows) {
  KernelSpec c = deepseek();
  c.kind = GemmKind::GroupedContiguous;
  c.groups = 3;
  // Fewer rows than groups: the first group still holds one.
  for (int64_t m : {1, 2, 7, 4096, 4097}) {
    EXPECT_TRUE(groupsValid(c, m).isOk()) << m;
    const std::vector<int32_t> v = tuneGroups(c, m);
    EXPECT_GE(v[1], 1) << m;
    EXPECT_EQ(v.back(), m);
  }
  KernelSpec k = c;
  k.kind = GemmKind::GroupedK;
  k.k = 1000; // seven whole blocks; the rest lies past the last offset
  EXPECT_TRUE(groupsValid(k, 256).isOk());
  EXPECT_EQ(tuneGroups(k, 256), (std::vector<int32_t>{0, 384, 640, 896}));
  KernelSpec masked = c;
  masked.kind = GemmKind::GroupedMasked;
  masked.m = 16; // the rows the plan expects a group to hold
  EXPECT_TRUE(groupsValid(masked, 256).isOk());
  EXPECT_EQ(tuneGroups(masked, 256), (std::vector<int32_t>(3, 16)));
  masked.m = -1;
  EXPECT_EQ(tuneGroups(masked, 256), (std::vector<int32_t>(3, 256)));
}

TEST(Tunable, OneBandOfTileRowsIsTimedInOneRasterisation) {
  // Both rasterisations of one band of tile rows are the same schedule.
  KernelSpec s = deepseek();
  auto rasters = [&](int64_t m) {
    std::vector<TileConfig> tiles = tuneCandidates(s, m, 132, {});
    int alongM = 0, alongN = 0;
    for (const TileConfig &t : tiles)
      (t.raster == Raster::AlongM ? alongM : alongN) += 1;
    return std::make_pair(alongM, alongN);
  };
  const auto [m128, n128] = rasters(128);
  EXPECT_GT(n128, 0);
  EXPECT_EQ(m128, 0) << "M = 128: one band of 128-row tiles";
  const auto [m4096, n4096] = rasters(4096);
  EXPECT_GT(m4096, 0) << "M = 4096 has many bands";
  EXPECT_GT(n4096, 0);
}

TEST(Tunable, GroupedCandidatesAreTilesTheGroupedKernelBuilds) {
  for (GemmKind kind : {GemmKind::GroupedContiguous, GemmKind::GroupedMasked,
                        GemmKind::GroupedK}) {
    KernelSpec s = deepseek();
    s.kind = kind;
    s.groups = 8;
    if (kind == GemmKind::GroupedK)
      s.b.granularity = Granularity::block(1, 128);
    const std::vector<TileConfig> tiles = tuneCandidates(s, 512, 132, {});
    ASSERT_GT(tiles.size(), 4u) << toString(kind);
    KernelSpec h = s;
    h.m = 512;
    EXPECT_EQ(tiles.front(), selectConfig(h, 132).tile) << toString(kind);
    for (const TileConfig &t : tiles) {
      KernelSpec c = h;
      c.tile = t;
      EXPECT_TRUE(checkGemmSpec(c).isOk()) << toString(kind) << toJSON(t);
      EXPECT_EQ(t.splitK, 1) << toString(kind);
      EXPECT_EQ(t.tailSplit, 1) << toString(kind);
    }
  }
}

} // namespace
