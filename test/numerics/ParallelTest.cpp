//===- ParallelTest.cpp - The thread pool and the random inputs -----------===//

#include "numerics/Parallel.h"

#include "numerics/Formats.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <vector>

using namespace fp8::numerics;

TEST(ParallelFor, CoversEveryIndexOnceInGrainSizedRanges) {
  for (int64_t n : {0, 1, 7, 1000, 100003})
    for (int64_t grain : {1, 3, 64, 1 << 20}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<bool> badRange{false};
      parallelFor(n, grain, [&](int64_t b, int64_t e) {
        if (b % grain != 0 || e - b > grain || e > n)
          badRange = true;
        for (int64_t i = b; i < e; ++i)
          hits[size_t(i)]++;
      });
      EXPECT_FALSE(badRange);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[size_t(i)].load(), 1) << n << " " << grain << " " << i;
    }
  EXPECT_GE(numThreads(), 1);
}

TEST(ParallelFor, NestedCallsRunSeriallyWithoutDeadlock) {
  std::atomic<int64_t> sum{0};
  parallelFor(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      parallelFor(100, 10, [&](int64_t b2, int64_t e2) {
        for (int64_t j = b2; j < e2; ++j)
          sum += j;
      });
  });
  EXPECT_EQ(sum.load(), 8 * 4950);
}

TEST(Random, SameSeedSameTensorAndTheRequestedShape) {
  RandomSpec spec;
  spec.seed = 42;
  std::vector<float> a = randomTensor(10000, spec),
                     b = randomTensor(10000, spec);
  EXPECT_EQ(a, b);
  spec.seed = 43;
  EXPECT_NE(randomTensor(10000, spec), a);
  double mean = 0, var = 0;
  for (float v : a)
    mean += v;
  mean /= 10000;
  for (float v : a)
    var += (v - mean) * (v - mean);
  var /= 10000;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(var, 1.0, 0.05);
  spec.dist = Distribution::Positive;
  for (float v : randomTensor(1000, spec))
    ASSERT_TRUE(v >= 0.0f && v < 1.0f);
  spec.dist = Distribution::Outliers;
  spec.outlierFraction = 0.01;
  spec.outlierScale = 1000;
  int big = 0;
  for (float v : randomTensor(100000, spec))
    big += std::fabs(v) > 50;
  EXPECT_GT(big, 500);
  EXPECT_LT(big, 1500);
  std::vector<uint16_t> bf = randomTensorBF16(100, spec);
  std::vector<float> f = randomTensor(100, spec);
  for (size_t i = 0; i < bf.size(); ++i)
    EXPECT_EQ(bf[i], floatToBF16(f[i]));
}

TEST(Random, CodesAreANormalRoundedToTheFormat) {
  using fp8::DType;
  EXPECT_TRUE(randomCodes(0, DType::E4M3FN, 1).empty());
  EXPECT_EQ(randomCodes(7, DType::E4M3FN, 1).size(), 7u); // not 5 per draw
  EXPECT_EQ(randomCodes(1000, DType::E5M2, 9),
            randomCodes(1000, DType::E5M2, 9));
  EXPECT_NE(randomCodes(1000, DType::E5M2, 9),
            randomCodes(1000, DType::E5M2, 10));
  for (DType f : {DType::E4M3FN, DType::E5M2}) {
    const int64_t n = 200000;
    const std::vector<uint8_t> c = randomCodes(n, f, 42);
    double mean = 0, var = 0;
    int64_t sameAsNext = 0;
    std::vector<int> seen(256);
    for (int64_t i = 0; i < n; ++i) {
      const float v = fp8ToFloat(c[size_t(i)], f);
      ASSERT_TRUE(std::isfinite(v)) << int(c[size_t(i)]);
      mean += v;
      var += double(v) * v;
      seen[c[size_t(i)]] = 1;
      sameAsNext += i + 1 < n && c[size_t(i)] == c[size_t(i + 1)];
    }
    mean /= double(n);
    var = var / double(n) - mean * mean;
    EXPECT_NEAR(mean, 0.0, 0.03);
    EXPECT_NEAR(var, 1.0, 0.06);
    int distinct = 0;
    for (int s : seen)
      distinct += s;
    EXPECT_GT(distinct, f == DType::E4M3FN ? 60 : 30);
    // Independent draws: neighbours repeat about as often as any two codes
    // match (a few percent), not every time the random bits are reused.
    EXPECT_LT(sameAsNext, n / 10);
  }
}
