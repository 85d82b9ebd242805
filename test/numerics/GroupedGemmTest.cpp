//===- GroupedGemmTest.cpp - The grouped GEMM and MoE permute oracle ------===//

#include "numerics/GroupedGemm.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fp8;
using namespace fp8::numerics;

namespace {

QuantizedTensor quantized(int64_t rows, int64_t cols, Granularity g,
                          uint64_t seed) {
  RandomSpec r{Distribution::Normal, 1.0f, seed};
  std::vector<float> x = randomTensor(rows * cols, r);
  auto q = quantize(x.data(), rows, cols, QuantRecipe{DType::E4M3FN, g});
  EXPECT_TRUE(q.isOk()) << q.status().message();
  return std::move(*q);
}

TEST(SliceRows, PerRowScalesFollowTheRows) {
  QuantizedTensor q = quantized(9, 256, Granularity::block(1, 128), 3);
  auto s = sliceRows(q, 2, 7);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->rows, 5);
  EXPECT_EQ(s->scaleRows, 5);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c : {0, 100, 200, 255})
      EXPECT_EQ(s->valueAt(r, c), q.valueAt(r + 2, c));
}

TEST(SliceRows, BlocksOfRowsSliceAtTheirBoundaries) {
  QuantizedTensor q = quantized(300, 256, Granularity::block(128, 128), 4);
  auto s = sliceRows(q, 1, 5);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("to start at a multiple of 128"),
            std::string::npos)
      << s.status().message();
  auto t = sliceRows(q, 128, 300);
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(t->scaleRows, 2);
  for (int64_t r : {0, 127, 128, 171})
    EXPECT_EQ(t->valueAt(r, 200), q.valueAt(r + 128, 200));
}

/// A contiguous grouped GEMM is the dense GEMM of each group's rows, with
/// empty groups and a group of one row; rows outside all groups keep the
/// fill value.
TEST(GroupedReferenceGemm, ContiguousIsPerGroupDense) {
  const int64_t m = 21, n = 40, k = 256;
  QuantizedTensor a = quantized(m, k, Granularity::block(1, 128), 5);
  std::vector<QuantizedTensor> b;
  for (int g = 0; g < 4; ++g)
    b.push_back(quantized(n, k, Granularity::block(128, 128), 10 + g));
  GroupedRows rows{GemmKind::GroupedContiguous, {0, 0, 1, 13, 20}};
  auto d = groupedReferenceGemm(rows, {a}, b, -7.0f);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  ASSERT_EQ(d->size(), size_t(m * n));
  for (int g = 0; g < 4; ++g) {
    const int64_t r0 = rows.groups[g], r1 = rows.groups[g + 1];
    if (r0 == r1)
      continue;
    auto ag = sliceRows(a, r0, r1);
    ASSERT_TRUE(ag.isOk());
    auto want = referenceGemm(*ag, Layout::KMajor, b[g], Layout::KMajor);
    ASSERT_TRUE(want.isOk());
    for (int64_t i = 0; i < (r1 - r0) * n; ++i)
      ASSERT_EQ((*d)[size_t(r0 * n + i)], (*want)[size_t(i)]) << g;
  }
  for (int64_t c = 0; c < n; ++c) // row 20 is in no group
    EXPECT_EQ((*d)[size_t(20 * n + c)], -7.0f);
}

TEST(GroupedReferenceGemm, MaskedComputesValidRowsOnly) {
  const int64_t maxM = 6, n = 24, k = 128;
  std::vector<QuantizedTensor> a, b;
  for (int g = 0; g < 3; ++g) {
    a.push_back(quantized(maxM, k, Granularity::block(1, 128), 20 + g));
    b.push_back(quantized(n, k, Granularity::perTensor(), 30 + g));
  }
  GroupedRows rows{GemmKind::GroupedMasked, {6, 0, 2}};
  auto d = groupedReferenceGemm(rows, a, b, 0.5f);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  auto g2 = referenceGemm(a[2], Layout::KMajor, b[2], Layout::KMajor);
  ASSERT_TRUE(g2.isOk());
  for (int64_t i = 0; i < 2 * n; ++i)
    EXPECT_EQ((*d)[size_t(2 * maxM * n + i)], (*g2)[size_t(i)]);
  for (int64_t i = 2 * n; i < maxM * n; ++i)
    EXPECT_EQ((*d)[size_t(2 * maxM * n + i)], 0.5f);
  for (int64_t i = 0; i < maxM * n; ++i) // group 1: no valid rows
    EXPECT_EQ((*d)[size_t(maxM * n + i)], 0.5f);
}

TEST(GroupedReferenceGemm, RefusesGroupsThatBreakTheForm) {
  QuantizedTensor a = quantized(8, 128, Granularity::block(1, 128), 1);
  std::vector<QuantizedTensor> b{
      quantized(16, 128, Granularity::block(128, 128), 2),
      quantized(16, 128, Granularity::block(128, 128), 3)};
  auto dec = groupedReferenceGemm({GemmKind::GroupedContiguous, {0, 5, 3}}, {a},
                                  b, 0.0f);
  ASSERT_FALSE(dec.isOk());
  EXPECT_NE(dec.status().message().find("expected offsets[2] in [5, 8]"),
            std::string::npos)
      << dec.status().message();
  auto past = groupedReferenceGemm({GemmKind::GroupedContiguous, {0, 5, 9}},
                                   {a}, b, 0.0f);
  ASSERT_FALSE(past.isOk());
  auto count =
      groupedReferenceGemm({GemmKind::GroupedContiguous, {0, 8}}, {a}, b, 0.0f);
  ASSERT_FALSE(count.isOk());
  EXPECT_NE(count.status().message().find("expected 3 group values"),
            std::string::npos)
      << count.status().message();
}

/// Along K each group is the dense GEMM of its K slab; an empty group
/// gives zeros, or C.
TEST(GroupedReferenceGemm, AlongKIsPerGroupDenseOverKSlabs) {
  const int64_t m = 9, n = 20, k = 640;
  QuantizedTensor a = quantized(m, k, Granularity::block(1, 128), 40);
  QuantizedTensor b = quantized(n, k, Granularity::block(1, 128), 41);
  GroupedRows rows{GemmKind::GroupedK, {0, 256, 256, 640}};
  std::vector<float> c(size_t(3 * m * n));
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = float(i % 7) - 3.0f;
  auto d = groupedReferenceGemm(rows, {a}, {b}, 0.0f, {}, c.data());
  ASSERT_TRUE(d.isOk()) << d.status().message();
  ASSERT_EQ(d->size(), size_t(3 * m * n));
  for (int g : {0, 2}) {
    auto ag = sliceCols(a, rows.groups[g], rows.groups[g + 1]);
    auto bg = sliceCols(b, rows.groups[g], rows.groups[g + 1]);
    ASSERT_TRUE(ag.isOk() && bg.isOk());
    auto want = referenceGemm(*ag, Layout::KMajor, *bg, Layout::KMajor,
                              c.data() + g * m * n);
    ASSERT_TRUE(want.isOk());
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_EQ((*d)[size_t(g * m * n + i)], (*want)[size_t(i)]) << g;
  }
  for (int64_t i = 0; i < m * n; ++i) // group 1 is empty: C
    EXPECT_EQ((*d)[size_t(m * n + i)], c[size_t(m * n + i)]);
  auto odd =
      groupedReferenceGemm({GemmKind::GroupedK, {0, 100, 640}}, {a}, {b}, 0.0f);
  ASSERT_FALSE(odd.isOk());
  EXPECT_NE(odd.status().message().find("a multiple of 128"), std::string::npos)
      << odd.status().message();
}

TEST(SliceCols, ScaleBlocksFollowTheColumns) {
  QuantizedTensor q = quantized(5, 512, Granularity::block(1, 128), 42);
  auto s = sliceCols(q, 256, 512);
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(s->cols, 256);
  EXPECT_EQ(s->scaleCols, 2);
  for (int64_t r : {0, 4})
    for (int64_t c : {0, 127, 128, 255})
      EXPECT_EQ(s->valueAt(r, c), q.valueAt(r, c + 256));
  EXPECT_FALSE(sliceCols(q, 100, 300).isOk());
}

TEST(MoePermute, GroupsTokensByExpertWithPadding) {
  // 4 tokens, top-2 over 3 experts.
  const std::vector<int32_t> ids = {2, 0, 0, 1, 2, 1, 0, 2};
  auto p = moePermute(ids, 4, 2, 3, /*padTo=*/4);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  // Expert 0: tokens 0, 1, 3 (pad to 4); expert 1: 1, 2 (4); expert 2:
  // 0, 2, 3 (4).
  EXPECT_EQ(p->offsets, (std::vector<int32_t>{0, 4, 8, 12}));
  EXPECT_EQ(p->source,
            (std::vector<int32_t>{0, 1, 3, -1, 1, 2, -1, -1, 0, 2, 3, -1}));
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t j = 0; j < 2; ++j) {
      const int32_t row = p->destination[size_t(t * 2 + j)];
      EXPECT_EQ(p->source[size_t(row)], t);
      const int32_t e = ids[size_t(t * 2 + j)];
      EXPECT_GE(row, p->offsets[size_t(e)]);
      EXPECT_LT(row, p->offsets[size_t(e + 1)]);
    }
}

TEST(MoePermute, UnpermuteWeighsEachExpertsRow) {
  const std::vector<int32_t> ids = {1, 0, 0, 1, 1, 0};
  auto p = moePermute(ids, 3, 2, 2);
  ASSERT_TRUE(p.isOk());
  const int64_t h = 3;
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> rows = gatherRows(x, h, *p);
  ASSERT_EQ(rows.size(), size_t(6 * h));
  // Identity experts: y = permuted x; the weights sum to 1 per token.
  const std::vector<float> w = {0.25f, 0.75f, 0.5f, 0.5f, 1.0f, 0.0f};
  std::vector<float> out = moeUnpermute(rows, h, *p, w, 3, 2);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(out[i], x[i]);
}

TEST(MoePermute, RefusesBadRouting) {
  auto out = moePermute({0, 3}, 1, 2, 3);
  ASSERT_FALSE(out.isOk());
  EXPECT_NE(out.status().message().find("expected routing ids in [0, 3)"),
            std::string::npos)
      << out.status().message();
  auto twice = moePermute({1, 1}, 1, 2, 3);
  ASSERT_FALSE(twice.isOk());
  EXPECT_NE(twice.status().message().find("expert 1 twice"), std::string::npos)
      << twice.status().message();
  auto size = moePermute({0, 1, 2}, 2, 2, 3);
  ASSERT_FALSE(size.isOk());
}

} // namespace
