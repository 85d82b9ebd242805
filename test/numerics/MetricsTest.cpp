//===- MetricsTest.cpp - Similarity and error metrics ---------------------===//

#include "numerics/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace fp8::numerics;

TEST(Metrics, SimilarityOnKnownVectors) {
  std::vector<float> x = {1, 2, 3};
  std::vector<float> y = {1, 2, 4};
  // 1 - 2 * 17 / (14 + 21) = 1/35.
  EXPECT_DOUBLE_EQ(similarity(x.data(), y.data(), 3), 1.0 / 35.0);
  EXPECT_EQ(similarity(x.data(), x.data(), 3), 0.0);
  std::vector<float> neg = {-1, -2, -3};
  EXPECT_DOUBLE_EQ(similarity(x.data(), neg.data(), 3), 2.0);
  std::vector<float> e1 = {1, 0}, e2 = {0, 1};
  EXPECT_DOUBLE_EQ(similarity(e1.data(), e2.data(), 2), 1.0);
  std::vector<float> zero = {0, 0};
  EXPECT_EQ(similarity(zero.data(), zero.data(), 2), 0.0);
  // A uniform 1% relative perturbation costs ~ (0.01)^2 / 2.
  std::vector<double> ref(1000);
  std::vector<float> per(1000);
  for (int i = 0; i < 1000; ++i) {
    ref[size_t(i)] = std::sin(i + 1.0);
    per[size_t(i)] = float(ref[size_t(i)] * 1.01);
  }
  EXPECT_NEAR(similarity(per.data(), ref.data(), 1000), 0.5e-4, 0.01e-4);
}

TEST(Metrics, RelativeErrorUsesTheFloor) {
  std::vector<float> x = {1001.0f, 0.002f, 5.0f};
  std::vector<double> y = {1000.0, 0.001, 5.0};
  ErrorMetrics e = compare(x.data(), y.data(), 3);
  // Floor 1e-3 * 1000 = 1: the tiny element's error is 0.001 / 1.
  EXPECT_DOUBLE_EQ(e.maxAbsError, 1.0);
  EXPECT_NEAR(e.maxRelError, 1e-3, 1e-9);
  EXPECT_NEAR(e.meanRelError, (1e-3 + 1e-3 + 0) / 3, 1e-9);
  EXPECT_EQ(e.refMaxAbs, 1000.0);
  EXPECT_EQ(e.count, 3);
  // Without a floor the tiny element dominates.
  ErrorMetrics raw = compare(x.data(), y.data(), 3, 0.0);
  EXPECT_NEAR(raw.maxRelError, 1.0, 1e-6);
  EXPECT_EQ(raw.worstIndex, 1);
}

TEST(Metrics, NonFiniteValuesPoisonEveryMetric) {
  std::vector<float> x = {1.0f, NAN};
  std::vector<float> y = {1.0f, 2.0f};
  ErrorMetrics e = compare(x.data(), y.data(), 2);
  EXPECT_EQ(e.nonFinite, 1);
  EXPECT_TRUE(std::isnan(e.similarity));
  EXPECT_TRUE(std::isnan(e.maxRelError));
}
