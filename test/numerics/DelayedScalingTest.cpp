//===- DelayedScalingTest.cpp - The amax history of delayed scaling -------===//

#include "numerics/DelayedScaling.h"

#include "numerics/Formats.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fp8;
using namespace fp8::numerics;

namespace {

QuantRecipe delayed(DelayedScaling d, ScaleFormat f = ScaleFormat::F32) {
  QuantRecipe r;
  r.granularity = Granularity::perTensor(f);
  r.mode = ScalingMode::Delayed;
  r.delayed = d;
  return r;
}

/// A tensor whose amax is exactly `amax` (element 0), the rest below it.
std::vector<float> tensorWithAmax(float amax, int64_t n, uint64_t seed) {
  RandomSpec spec;
  spec.dist = Distribution::Uniform;
  spec.seed = seed;
  std::vector<float> x = randomTensor(n, spec);
  for (float &v : x)
    v *= amax * 0.99f;
  x[0] = amax;
  return x;
}

} // namespace

TEST(DelayedScaling, FirstStepFallsBackToCurrentScaling) {
  DelayedScaling d;
  d.margin = 2;
  AmaxHistory h(d);
  std::vector<float> x = tensorWithAmax(10.0f, 256, 1);
  QuantStats st;
  auto q = quantize(x.data(), 16, 16, delayed(d), &st, &h);
  ASSERT_TRUE(q) << q.message();
  EXPECT_FALSE(st.usedHistory);
  EXPECT_EQ(q->scales[0], 10.0f / 448.0f); // current scaling, no margin
  EXPECT_EQ(st.overflow, 0);
  EXPECT_EQ(h.steps(), 1);
  ASSERT_EQ(h.values().size(), 1u);
  EXPECT_EQ(h.values()[0], 10.0f);
}

TEST(DelayedScaling, LaterStepsUseTheHistoryWithMargin) {
  DelayedScaling d;
  d.margin = 1;
  AmaxHistory h(d);
  std::vector<float> x0 = tensorWithAmax(10.0f, 256, 1);
  ASSERT_TRUE(quantize(x0.data(), 16, 16, delayed(d), nullptr, &h));
  // Step 1: amax grew 1.5x; the margin (x2 headroom) absorbs it.
  std::vector<float> x1 = tensorWithAmax(15.0f, 256, 2);
  QuantStats st;
  auto q = quantize(x1.data(), 16, 16, delayed(d), &st, &h);
  ASSERT_TRUE(q);
  EXPECT_TRUE(st.usedHistory);
  EXPECT_EQ(st.scaleAmax, 10.0);
  EXPECT_EQ(q->scales[0], 20.0f / 448.0f); // 10 * 2^1 / 448
  EXPECT_EQ(st.overflow, 0);
}

TEST(DelayedScaling, OverflowSaturatesAndIsCounted) {
  DelayedScaling d; // margin 0
  AmaxHistory h(d);
  std::vector<float> x0 = tensorWithAmax(1.0f, 1024, 3);
  ASSERT_TRUE(quantize(x0.data(), 32, 32, delayed(d), nullptr, &h));
  // Step 1: 4x larger; the scale from the history is 1/448.
  std::vector<float> x1 = tensorWithAmax(4.0f, 1024, 4);
  QuantStats st;
  auto q = quantize(x1.data(), 32, 32, delayed(d), &st, &h);
  ASSERT_TRUE(q);
  float s = q->scales[0];
  ASSERT_EQ(s, 1.0f / 448.0f);
  int64_t expected = 0;
  for (size_t i = 0; i < x1.size(); ++i) {
    float v = x1[i] / s;
    if (std::fabs(v) > 464.0f) { // beyond 448 + ulp/2: saturated
      ++expected;
      EXPECT_EQ(q->codes[i] & 0x7F, 0x7E) << i;
    }
  }
  EXPECT_GT(expected, 100);
  EXPECT_EQ(st.overflow, expected);
  EXPECT_DOUBLE_EQ(st.overflowRatio, double(expected) / 1024.0);
  // The true amax was still measured and recorded.
  EXPECT_EQ(h.values().back(), 4.0f);
}

TEST(DelayedScaling, UpdateIntervalMeasuresEveryNthStep) {
  DelayedScaling d;
  d.updateInterval = 3;
  d.historyLength = 2;
  d.algo = AmaxAlgo::MostRecent;
  AmaxHistory h(d);
  std::vector<float> used;
  for (int step = 0; step < 7; ++step) {
    std::vector<float> x = tensorWithAmax(float(step + 1), 64, uint64_t(step));
    QuantStats st;
    ASSERT_TRUE(quantize(x.data(), 8, 8, delayed(d), &st, &h));
    used.push_back(float(st.scaleAmax));
  }
  // Measured at steps 0, 3, 6 (amax 1, 4, 7); the history keeps 2 values.
  EXPECT_EQ(h.values(), (std::vector<float>{4.0f, 7.0f}));
  EXPECT_EQ(h.steps(), 7);
  // Step 0: current (1); steps 1-3 reuse step 0; steps 4-6 reuse step 3.
  EXPECT_EQ(used, (std::vector<float>{1, 1, 1, 1, 4, 4, 4}));
}

TEST(DelayedScaling, MaxAlgoTakesTheLargestOfTheHistory) {
  DelayedScaling d;
  d.historyLength = 3;
  d.algo = AmaxAlgo::Max;
  AmaxHistory h(d);
  std::vector<float> used;
  for (float a : {5.0f, 2.0f, 1.0f, 1.0f, 1.0f}) {
    std::vector<float> x = tensorWithAmax(a, 64, 9);
    QuantStats st;
    ASSERT_TRUE(quantize(x.data(), 8, 8, delayed(d), &st, &h));
    used.push_back(float(st.scaleAmax));
  }
  // The 5 leaves the 3-long history after three more measurements.
  EXPECT_EQ(used, (std::vector<float>{5, 5, 5, 5, 2}));
  EXPECT_EQ(h.predict(), 1.0f);
  h.reset();
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.steps(), 0);
}

TEST(DelayedScaling, PowerOfTwoScalesFromTheHistory) {
  DelayedScaling d;
  AmaxHistory h(d);
  std::vector<float> x = tensorWithAmax(3.0f, 64, 5);
  ASSERT_TRUE(
      quantize(x.data(), 8, 8, delayed(d, ScaleFormat::UE8M0), nullptr, &h));
  auto q =
      quantize(x.data(), 8, 8, delayed(d, ScaleFormat::UE8M0), nullptr, &h);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->scaleCodes[0], floatToUE8M0(3.0f / 448.0f, PowerRounding::Up));
}

TEST(DelayedScaling, NonFiniteStepRecordsNothing) {
  DelayedScaling d;
  AmaxHistory h(d);
  std::vector<float> x = tensorWithAmax(2.0f, 64, 5);
  ASSERT_TRUE(quantize(x.data(), 8, 8, delayed(d), nullptr, &h));
  x[5] = NAN;
  // Error policy: nothing changes, not even the step count.
  EXPECT_FALSE(quantize(x.data(), 8, 8, delayed(d), nullptr, &h));
  EXPECT_EQ(h.steps(), 1);
  QuantizeOptions opts;
  opts.nonFinite = NonFinitePolicy::Propagate;
  auto q = quantize(x.data(), 8, 8, delayed(d), nullptr, &h, opts);
  ASSERT_TRUE(q);
  EXPECT_TRUE(std::isnan(q->scales[0]));
  EXPECT_EQ(h.steps(), 2);
  EXPECT_EQ(h.values(), (std::vector<float>{2.0f}));
}

TEST(DelayedScaling, RejectsMismatchedOrInvalidParameters) {
  DelayedScaling d;
  AmaxHistory h(d);
  DelayedScaling other = d;
  other.historyLength = 4;
  float x[4] = {1, 2, 3, 4};
  auto q = quantize(x, 2, 2, delayed(other), nullptr, &h);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.message(),
            "expected the amax history to be built for the recipe's delayed "
            "scaling (length 4, interval 1, margin 0, max), found length 16, "
            "interval 1, margin 0, max");
  DelayedScaling bad = d;
  bad.updateInterval = 0;
  AmaxHistory hb(bad);
  EXPECT_EQ(
      quantize(x, 2, 2, delayed(bad), nullptr, &hb).message(),
      "expected the amax update interval to be in [1, 2147483647], found 0");
}
