//===- AccumulatorTest.cpp - The tensor-core accumulator model ------------===//
//
// Hand-worked MMA steps, and the calibration: the model must reproduce the
// loss measured on our H100 (DESIGN.md: cuBLASLt per-tensor FP8, 512x512xK,
// same-sign inputs, FP32 output vs the FP64 product of the same FP8 values).
//
//===----------------------------------------------------------------------===//

#include "numerics/Accumulator.h"

#include "core/KernelSpec.h"
#include "numerics/Metrics.h"
#include "numerics/Npy.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace fp8;
using namespace fp8::numerics;

TEST(AccumulatorModel, AlignmentDropsBitsBelowTheGrid) {
  // Largest exponent 0: with 13 bits the grid is 2^-13, so the product
  // 2^-14 (2^-7 * 2^-7, E4M3 subnormals) vanishes; with 14 bits it is kept.
  float a[2] = {1.0f, 0x1p-7f}, b[2] = {1.0f, 0x1p-7f};
  EXPECT_EQ(emulateMmaStep(0.0f, a, b, 2, 13), 1.0f);
  EXPECT_EQ(emulateMmaStep(0.0f, a, b, 2, 14), 1.0f + 0x1p-14f);
  // Truncation is toward zero for negative terms too.
  float na[2] = {-1.0f, -0x1p-7f};
  EXPECT_EQ(emulateMmaStep(0.0f, na, b, 2, 13), -1.0f);
  // The accumulator is aligned with the products: a large product truncates
  // a small accumulator.
  float big[1] = {32.0f};
  EXPECT_EQ(emulateMmaStep(1.0f + 0x1p-10f, big, big, 1, 10), 1025.0f);
}

TEST(AccumulatorModel, AlignsOnTheUnnormalizedProductExponent) {
  // 1.5 * 1.5 = 2.25 has exponent 0 + 0 = 0 although it lies in [2, 4):
  // with 3 bits the grid is 2^-3, not 2^-2, so the two products 0.140625
  // (0.375^2, exponent -4) survive as one unit each: (18 + 1 + 1) / 8 =
  // 2.5, normalized to 3 fraction bits: 2.5. Aligning on floor(log2 p)
  // would give 2.25. (Measured on the H100: this rule, not that one, makes
  // mixed-sign results bit-identical.)
  float a[3] = {1.5f, 0.375f, 0.375f};
  EXPECT_EQ(emulateMmaStep(0.0f, a, a, 3, 3), 2.5f);
}

TEST(AccumulatorModel, SubnormalsAlignOnTheFormatsMinimumExponent) {
  // E5M2 subnormals 2^-16 and 3 * 2^-16 have exponent -14 (emin): grid
  // 2^-15 with 1 bit, so 2^-16 drops and 3 * 2^-16 keeps one unit.
  float a[2] = {0x1p-16f, 0x3p-16f}, b[2] = {1.0f, 1.0f};
  EXPECT_EQ(emulateMmaStep(0.0f, a, b, 2, 1, DType::E5M2, DType::E4M3FN),
            0x1p-15f);
}

TEST(AccumulatorModel, NormalizationTruncatesTheCarry) {
  // 3 x 1.75 = 5.25 on a 2-bit grid of 1/4: 21 units, 10101b; normalized to
  // 3 significant bits: 10100b = 20 units = 5.0.
  float a[3] = {1.75f, 1.75f, 1.75f}, b[3] = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(emulateMmaStep(0.0f, a, b, 3, 2), 5.0f);
  EXPECT_EQ(truncateToBits(5.25f, 2), 5.0f);
  EXPECT_EQ(truncateToBits(-5.25f, 2), -5.0f);
  EXPECT_EQ(truncateToBits(5.25f, 23), 5.25f);
}

TEST(AccumulatorModel, ExactWhenNothingIsDropped) {
  float a[4] = {1.0f, 2.0f, 0.5f, 0.25f}, b[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  EXPECT_EQ(emulateMmaStep(8.0f, a, b, 4, 13), 11.75f);
  EXPECT_EQ(emulateMmaStep(0.0f, a, b, 0, 13), 0.0f);
  float ones[64];
  for (float &v : ones)
    v = 1.0f;
  AccumulatorModel m{13, 32};
  EXPECT_EQ(emulatedDot(ones, ones, 64, m, 0), 64.0f);
}

namespace {
/// Mean relative loss (ref - d) / ref of a per-tensor E4M3 GEMM of uniform
/// positive inputs, as measured on the H100.
double measuredLikeLoss(int64_t k, int64_t interval, AccumulatorModel model) {
  const int64_t m = 16, n = 16;
  std::vector<float> a = randomTensor(m * k, {Distribution::Positive, 1, 21});
  std::vector<float> b = randomTensor(n * k, {Distribution::Positive, 1, 22});
  QuantRecipe r;
  r.granularity = Granularity::perTensor();
  auto qa = quantize(a.data(), m, k, r);
  auto qb = quantize(b.data(), n, k, r);
  ReferenceGemmOptions o;
  o.promotionInterval = promotionFromInt(interval);
  o.accumulator = model;
  auto d = referenceGemm(*qa, Layout::KMajor, *qb, Layout::KMajor, nullptr, o);
  auto ref = referenceGemmF64(*qa, Layout::KMajor, *qb, Layout::KMajor);
  double loss = 0;
  for (int64_t i = 0; i < m * n; ++i)
    loss += ((*ref)[size_t(i)] - (*d)[size_t(i)]) / (*ref)[size_t(i)];
  return loss / double(m * n);
}
} // namespace

TEST(AccumulatorModel, ReproducesTheH100Curve) {
  // DESIGN.md: 0.6% at K=512, 3.4% at 2048, 10.9% at 7168, 21.7% at 16384,
  // 53% at 65536. The model gives 0.57, 3.5, 12.6, 25.1, 58.3 on uniform
  // inputs (within 16% of each figure); we require 20%. Measured again on
  // our H100 with uniform [0, 1) inputs (docs/numerics.md): 0.579, 3.484,
  // 12.607, 25.079, 58.356 -- the model is that curve to sampling noise (we
  // require 3%); DESIGN.md's inputs were distributed differently.
  struct Point {
    int64_t k;
    double design, h100Uniform;
  } points[] = {{512, 0.006, 0.005786},
                {2048, 0.034, 0.034839},
                {7168, 0.109, 0.126070},
                {16384, 0.217, 0.250790},
                {65536, 0.53, 0.583561}};
  double previous = 0;
  for (const Point &p : points) {
    double loss = measuredLikeLoss(p.k, 0, kHopperFP8Accumulator);
    RecordProperty("loss_k" + std::to_string(p.k), std::to_string(loss));
    EXPECT_NEAR(loss / p.design, 1.0, 0.20)
        << "K=" << p.k << ": model " << loss << ", DESIGN.md " << p.design;
    EXPECT_NEAR(loss / p.h100Uniform, 1.0, 0.03)
        << "K=" << p.k << ": model " << loss << ", H100 " << p.h100Uniform;
    EXPECT_GT(loss, previous) << "the loss grows with K";
    previous = loss;
  }
}

TEST(AccumulatorModel, PromotionEvery128MatchesTheH100) {
  // DESIGN.md: promoted to FP32 the loss stays at 0.06%; the model gives
  // 0.055% at any K.
  for (int64_t k : {2048, 16384}) {
    double loss = measuredLikeLoss(k, 128, kHopperFP8Accumulator);
    EXPECT_GT(loss, 0.0004) << k;
    EXPECT_LT(loss, 0.0008) << k;
  }
  // An IEEE FP32 accumulator loses nothing measurable.
  EXPECT_LT(std::fabs(measuredLikeLoss(16384, 0, {})), 1e-5);
}

TEST(AccumulatorModel, MoreBitsLoseLess) {
  double prev = 1;
  for (int bits : {10, 12, 13, 14, 16, 20}) {
    double loss = measuredLikeLoss(4096, 0, {bits, 32});
    EXPECT_LT(loss, prev) << bits;
    prev = loss;
  }
}

namespace {
QuantizedTensor loadCodes(const std::string &path) {
  auto a = readNpy(path);
  EXPECT_TRUE(a) << a.message();
  QuantizedTensor q;
  q.format = DType::E4M3FN;
  q.rows = a->shape[0];
  q.cols = a->shape[1];
  q.codes = *npyToBytes(*a);
  q.scaleRows = q.scaleCols = 1;
  q.scales = {1.0f};
  return q;
}

double bitEqualShare(const std::vector<float> &x, const std::vector<float> &y) {
  size_t same = 0;
  for (size_t i = 0; i < x.size(); ++i)
    same += std::memcmp(&x[i], &y[i], sizeof(float)) == 0;
  return double(same) / double(x.size());
}
} // namespace

TEST(AccumulatorModel, H100RecordedOutputsBitForBit) {
  // Inputs/record_h100.py: cuBLASLt on the H100 (torch._scaled_mm), E4M3
  // per-tensor 32x32x1024, same-sign (uniform) and mixed-sign (normal)
  // inputs, with fast accumulation (no promotion) and without (cuBLASLt
  // promotes every 128). The model must give the same FP32 bits.
  const std::string dir = FP8_NUMERICS_TEST_INPUTS;
  for (const char *dist : {"uniform", "normal"}) {
    std::string base = dir + "/h100_" + dist + "_";
    QuantizedTensor a = loadCodes(base + "a.npy"),
                    b = loadCodes(base + "b.npy");
    auto fast = npyToFloat(*readNpy(base + "fast.npy"));
    auto promoted = npyToFloat(*readNpy(base + "promoted.npy"));
    ASSERT_TRUE(fast && promoted);
    for (int bits : {12, 13, 14}) {
      ReferenceGemmOptions o;
      o.accumulator = {bits, 32};
      o.promotionInterval = std::nullopt;
      auto d0 = referenceGemm(a, Layout::KMajor, b, Layout::KMajor, nullptr, o);
      o.promotionInterval = 128;
      auto d128 =
          referenceGemm(a, Layout::KMajor, b, Layout::KMajor, nullptr, o);
      ASSERT_TRUE(d0 && d128);
      double share0 = bitEqualShare(*d0, *fast);
      double share128 = bitEqualShare(*d128, *promoted);
      if (bits == 13) {
        EXPECT_EQ(share0, 1.0) << dist << ", fast accumulation";
        EXPECT_EQ(share128, 1.0) << dist << ", promoted every 128";
      } else {
        // Another width is another machine: it must not match.
        EXPECT_LT(share0, 0.5) << dist << " with " << bits << " bits";
      }
    }
  }
}
