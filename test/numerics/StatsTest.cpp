//===- StatsTest.cpp - Quantization statistics on hand-made inputs --------===//

#include "numerics/Stats.h"

#include "numerics/Quantize.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace fp8;
using namespace fp8::numerics;

namespace {
QuantStats statsOf(const std::vector<float> &x, int64_t rows, int64_t cols,
                   Granularity g) {
  QuantRecipe r;
  r.granularity = g;
  QuantStats st;
  auto q = quantize(x.data(), rows, cols, r, &st);
  EXPECT_TRUE(q) << q.message();
  return st;
}
} // namespace

TEST(QuantStats, UnderflowCountsNonzeroValuesThatBecameZero) {
  // Per-tensor E4M3 with amax 448: scale 1. 2^-11 is below half the smallest
  // subnormal (2^-10) and underflows; 2^-9 survives; zeros do not count.
  std::vector<float> x = {448.0f, 0x1p-11f, -0x1p-12f, 0x1p-9f, 0.0f, 1.0f};
  QuantStats st = statsOf(x, 1, 6, Granularity::perTensor());
  EXPECT_EQ(st.nonzero, 5);
  EXPECT_EQ(st.underflow, 2);
  EXPECT_DOUBLE_EQ(st.underflowRatio, 0.4);
  // An underflowed value has relative error 1.
  EXPECT_EQ(st.maxRelError, 1.0);
}

TEST(QuantStats, RangeCollapseCountsMergedDistinctValues) {
  // One block, scale 1 (amax 448). 1.0, 1.03 and 1.05 all become 1.0
  // (ulp 0.125); 2.0 and 448 stay apart; the duplicate 2.0 is one value.
  std::vector<float> x = {1.0f, 1.03f, 1.05f, 2.0f, 2.0f, 448.0f};
  QuantStats st = statsOf(x, 1, 6, Granularity::perTensor());
  EXPECT_EQ(st.distinctInputs, 5);
  EXPECT_EQ(st.distinctQuantized, 3);
  EXPECT_DOUBLE_EQ(st.rangeCollapseRatio, 1.0 - 3.0 / 5.0);
}

TEST(QuantStats, RangeCollapseIsSummedOverBlocks) {
  // Two 1x4 blocks, each with amax 448 (scale 1).
  // Block 0: {1.0, 1.01, 1.02, 448}: 4 distinct -> 2 codes.
  // Block 1: {3.0, 5.0, -5.0, 448}: 4 distinct -> 4 codes (sign matters).
  std::vector<float> x = {1.0f, 1.01f, 1.02f, 448.0f,
                          3.0f, 5.0f,  -5.0f, 448.0f};
  QuantStats st = statsOf(x, 1, 8, Granularity::block(1, 4));
  EXPECT_EQ(st.distinctInputs, 8);
  EXPECT_EQ(st.distinctQuantized, 6);
  EXPECT_DOUBLE_EQ(st.rangeCollapseRatio, 0.25);
  // The same values in one block: 1.0.. merge with each other, and the two
  // 448s are one value: 7 distinct -> 5 codes.
  st = statsOf(x, 1, 8, Granularity::perTensor());
  EXPECT_EQ(st.distinctInputs, 7);
  EXPECT_EQ(st.distinctQuantized, 5);
}

TEST(QuantStats, RangeCollapseLeavesUnderflowAndZerosOut) {
  // 2^-11 and 2^-12 underflow to 0: counted as underflow, not as a merge.
  std::vector<float> x = {448.0f, 0x1p-11f, 0x1p-12f, 0.0f, 0.0f};
  QuantStats st = statsOf(x, 1, 5, Granularity::perTensor());
  EXPECT_EQ(st.underflow, 2);
  EXPECT_EQ(st.distinctInputs, 1);
  EXPECT_EQ(st.distinctQuantized, 1);
  EXPECT_EQ(st.rangeCollapseRatio, 0.0);
}

TEST(QuantStats, ErrorsOnHandPickedValues) {
  // Scale 1: 1.0625 is a tie between 1.0 and 1.125 and goes to 1.0 (even);
  // 3.3 rounds to 3.25.
  std::vector<float> x = {448.0f, 1.0625f, 3.3f, 0.0f};
  QuantStats st = statsOf(x, 2, 2, Granularity::perTensor());
  double e1 = 0.0625, e2 = std::fabs(double(3.3f) - 3.25);
  EXPECT_DOUBLE_EQ(st.maxAbsError, e1);
  EXPECT_DOUBLE_EQ(st.maxRelError, e1 / 1.0625);
  EXPECT_DOUBLE_EQ(st.meanRelError, (e1 / 1.0625 + e2 / double(3.3f)) / 3.0);
  EXPECT_DOUBLE_EQ(st.rmsError, std::sqrt((e1 * e1 + e2 * e2) / 4.0));
  EXPECT_EQ(st.amax, 448.0);
  EXPECT_EQ(st.elements, 4);
  EXPECT_EQ(st.blocks, 1);
}

TEST(QuantStats, CountDistinctMatchesASetOnLargeInputs) {
  // Above 2^16 keys the radix path runs.
  Rng rng(3);
  std::vector<uint32_t> keys(200000);
  for (uint32_t &k : keys)
    k = uint32_t(rng.next() % 50000) * 2654435761u;
  std::set<uint32_t> ref(keys.begin(), keys.end());
  EXPECT_EQ(countDistinct(keys), int64_t(ref.size()));
  std::vector<uint32_t> small = {5, 1, 5, 3};
  EXPECT_EQ(countDistinct(small), 3);
}

TEST(QuantStats, PerTensorStatsOnALargeTensorAreConsistent) {
  RandomSpec spec;
  spec.dist = Distribution::Outliers;
  spec.outlierFraction = 1e-4;
  spec.outlierScale = 1000;
  std::vector<float> x = randomTensor(512 * 512, spec);
  QuantStats st = statsOf(x, 512, 512, Granularity::perTensor());
  EXPECT_EQ(st.elements, 512 * 512);
  EXPECT_GT(st.distinctInputs, 200000); // nearly all floats differ
  EXPECT_LE(st.distinctQuantized, 254); // at most every finite code
  EXPECT_GT(st.rangeCollapseRatio, 0.99);
  EXPECT_GT(st.underflow, 0); // outliers push the bulk toward subnormals
}
