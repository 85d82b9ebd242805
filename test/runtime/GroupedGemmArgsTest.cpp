//===- GroupedGemmArgsTest.cpp - fp8::groupedGemm's checks before launch --===//
//
// Everything fp8::groupedGemm refuses without a GPU (shape, form, group
// tensor, strides), the group values' check, and the tile the runtime
// chooses for the MoE shapes.
//
//===----------------------------------------------------------------------===//

#include "runtime/GroupedGemm.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

GemmRecipe deepseek() {
  GemmRecipe r;
  r.a.granularity = Granularity::block(1, 128);
  r.b.granularity = Granularity::block(128, 128);
  return r;
}

/// Plausible (never dereferenced) device addresses, 256-byte aligned.
const void *fakePtr(uintptr_t i) {
  return reinterpret_cast<const void *>(uintptr_t(0x7f0000000000) + i * 256);
}

GroupedGemmTensors tensors() {
  GroupedGemmTensors t;
  t.a = fakePtr(1);
  t.scaleA = fakePtr(2);
  t.b = fakePtr(3);
  t.scaleB = fakePtr(4);
  t.d = const_cast<void *>(fakePtr(5));
  t.groups = static_cast<const int32_t *>(fakePtr(6));
  return t;
}

GroupedGemmShape contiguous() {
  GroupedGemmShape s;
  s.kind = GemmKind::GroupedContiguous;
  s.groups = 8;
  s.m = 32768;
  s.n = 4096;
  s.k = 7168;
  return s;
}

void expectRefused(const GroupedGemmShape &s, const GroupedGemmTensors &t,
                   const char *why) {
  Status st = checkGroupedGemmArgs(deepseek(), s, t);
  ASSERT_FALSE(st.isOk()) << why;
  EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
}

TEST(GroupedGemmArgs, AcceptsTheMoEForms) {
  EXPECT_TRUE(checkGroupedGemmArgs(deepseek(), contiguous(), tensors()).isOk());
  GroupedGemmShape m = contiguous();
  m.kind = GemmKind::GroupedMasked;
  m.m = 256;
  EXPECT_TRUE(checkGroupedGemmArgs(deepseek(), m, tensors()).isOk());
}

TEST(GroupedGemmArgs, RefusesBadArgumentsBeforeLaunch) {
  GroupedGemmShape dense = contiguous();
  dense.kind = GemmKind::Dense;
  expectRefused(dense, tensors(), "expected a grouped GEMM");
  GroupedGemmShape none = contiguous();
  none.groups = 0;
  expectRefused(none, tensors(), "expected G in [1, 2^31), found 0");
  GroupedGemmShape rows = contiguous();
  rows.kind = GemmKind::GroupedMasked;
  rows.groups = 1 << 16;
  rows.m = 1 << 16;
  expectRefused(rows, tensors(), "rows of D (masked: G x max_m) in [0, 2^31)");
  GroupedGemmShape wide = contiguous();
  wide.groups = 1 << 20;
  expectRefused(wide, tensors(), "expected G x N below 2^31");
  GroupedGemmTensors noGroups = tensors();
  noGroups.groups = nullptr;
  expectRefused(contiguous(), noGroups, "offsets, G + 1 int32), found null");
  GroupedGemmTensors odd = tensors();
  odd.groups = reinterpret_cast<const int32_t *>(
      static_cast<const char *>(fakePtr(6)) + 2);
  expectRefused(contiguous(), odd, "group tensor to be 4-byte aligned");
  GroupedGemmTensors stride = tensors();
  stride.scaleAGroupStride = 64;
  expectRefused(contiguous(), stride,
                "no group stride for A's scales in the contiguous form");
  GroupedGemmTensors badK = tensors();
  GroupedGemmShape k = contiguous();
  k.k = 7160;
  expectRefused(k, badK, "row pitches of A and B to be multiples of 16");
  GroupedGemmTensors align = tensors();
  align.b = static_cast<const char *>(fakePtr(3)) + 8;
  expectRefused(contiguous(), align, "16-byte aligned (TMA)");
}

TEST(GroupedGemmArgs, GroupValuesFollowTheForm) {
  GroupedGemmShape c = contiguous();
  c.groups = 3;
  c.m = 10;
  const int32_t good[] = {0, 0, 7, 10};
  EXPECT_TRUE(checkGroupValues(c, good, 4).isOk());
  const int32_t trailing[] = {0, 2, 4, 6}; // rows 6..9 in no group
  EXPECT_TRUE(checkGroupValues(c, trailing, 4).isOk());
  const int32_t down[] = {0, 5, 3, 10};
  Status st = checkGroupValues(c, down, 4);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("expected offsets[2] in [5, 10]"),
            std::string::npos)
      << st.message();
  const int32_t start[] = {1, 2, 3, 4};
  EXPECT_FALSE(checkGroupValues(c, start, 4).isOk());
  EXPECT_FALSE(checkGroupValues(c, good, 3).isOk());
  GroupedGemmShape m = c;
  m.kind = GemmKind::GroupedMasked;
  const int32_t valid[] = {0, 10, 3};
  EXPECT_TRUE(checkGroupValues(m, valid, 3).isOk());
  const int32_t over[] = {0, 11, 3};
  st = checkGroupValues(m, over, 3);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("expected valid_rows[1] in [0, 10]"),
            std::string::npos)
      << st.message();
}

TEST(GroupedGemmArgs, AlongKOffsetsAreScaleBlocks) {
  GroupedGemmShape k;
  k.kind = GemmKind::GroupedK;
  k.groups = 3;
  k.m = 4096;
  k.n = 7168;
  k.k = 1024;
  const int32_t good[] = {0, 128, 128, 1024};
  EXPECT_TRUE(checkGroupValues(k, good, 4).isOk());
  const int32_t odd[] = {0, 100, 128, 1024};
  Status st = checkGroupValues(k, odd, 4);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("offsets[1] to be a multiple of 128"),
            std::string::npos)
      << st.message();
  const int32_t past[] = {0, 128, 256, 1152};
  st = checkGroupValues(k, past, 4);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("(non-decreasing, at most K)"), std::string::npos)
      << st.message();
  GroupedGemmTensors t = tensors();
  t.scaleBGroupStride = 8;
  Status refused = checkGroupedGemmArgs(deepseek(), k, t);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.message().find("no group stride for B's scales"),
            std::string::npos)
      << refused.message();
  EXPECT_TRUE(checkGroupedGemmArgs(deepseek(), k, tensors()).isOk());
}

TEST(GroupedGemmArgs, TileForTheShape) {
  // Prefill: thousands of rows per expert.
  auto big = groupedGemmKernelSpec(deepseek(), contiguous(), 132, {});
  ASSERT_TRUE(big.isOk()) << big.message();
  EXPECT_EQ(big->kind, GemmKind::GroupedContiguous);
  EXPECT_EQ(big->tile.splitK, 1);
  EXPECT_EQ(big->tile.tailSplit, 1);
  EXPECT_GE(big->tile.blockM, 128);
  // Decode: ~20 rows per expert take 64-row tiles.
  GroupedGemmShape decode = contiguous();
  decode.kind = GemmKind::GroupedMasked;
  decode.groups = 32;
  decode.m = 128;
  decode.expectedM = 20;
  decode.n = 6144;
  auto small = groupedGemmKernelSpec(deepseek(), decode, 132, {});
  ASSERT_TRUE(small.isOk()) << small.message();
  EXPECT_EQ(small->tile.blockM, 64);
  EXPECT_EQ(small->m, 20);
}

TEST(GroupedGemmArgs, SpecKeepsTheRecipeAndTakesTheTileRows) {
  // A recipe's spec as a grouped GEMM: the formats and granularities stay,
  // the form, groups, N and K are the shape's, and M is the rows the tile
  // is chosen for: a masked shape's expected rows when set, else its m.
  KernelSpec base;
  base.a.granularity = Granularity::block(1, 128);
  base.b.granularity = Granularity::block(128, 128);
  base.b.format = DType::E5M2;
  GroupedGemmShape masked = contiguous();
  masked.kind = GemmKind::GroupedMasked;
  masked.groups = 32;
  masked.m = 128;
  masked.expectedM = 20;
  KernelSpec s = groupedSpec(base, masked);
  EXPECT_EQ(s.kind, GemmKind::GroupedMasked);
  EXPECT_EQ(s.groups, 32);
  EXPECT_EQ(s.m, 20);
  EXPECT_EQ(s.n, 4096);
  EXPECT_EQ(s.k, 7168);
  EXPECT_EQ(s.b.format, DType::E5M2);
  EXPECT_EQ(s.b.granularity, base.b.granularity);
  EXPECT_EQ(groupedTileRows(s, masked.m), 20);
  masked.expectedM = 0;
  EXPECT_EQ(groupedSpec(base, masked).m, 128);
  // Only the masked form has expected rows.
  GroupedGemmShape c = contiguous();
  c.expectedM = 20;
  EXPECT_EQ(groupedSpec(base, c).m, 32768);
  // The runtime's own spec of a recipe's grouped GEMM is the same one.
  auto launched = groupedGemmKernelSpec(deepseek(), contiguous(), 132, {});
  ASSERT_TRUE(launched.isOk()) << launched.message();
  EXPECT_EQ(launched->m, groupedSpec(base, contiguous()).m);
}

/// Without a driver the call says so; with one, the driver does not know
/// these addresses. Either way nothing is launched.
TEST(GroupedGemmArgs, RefusedWithoutADriverOrDeviceMemory) {
  Status st = groupedGemm(deepseek(), contiguous(), tensors(), nullptr);
  ASSERT_FALSE(st.isOk());
  const bool noDriver =
      st.message().find("no CUDA driver found") != std::string::npos;
  const bool notDevice =
      st.message().find("the driver does not know this address") !=
      std::string::npos;
  EXPECT_TRUE(noDriver || notDevice) << st.message();
}

} // namespace
