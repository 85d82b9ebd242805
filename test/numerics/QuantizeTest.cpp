//===- QuantizeTest.cpp - Quantization at every granularity ---------------===//

#include "numerics/Quantize.h"

#include "numerics/Formats.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace fp8;
using namespace fp8::numerics;

namespace {

/// Granularities of the dialect, with each scale format where it applies.
std::vector<Granularity> allGranularities() {
  std::vector<Granularity> gs;
  for (ScaleFormat f :
       {ScaleFormat::F32, ScaleFormat::F32Pow2, ScaleFormat::UE8M0}) {
    gs.push_back(Granularity::perTensor(f));
    gs.push_back(Granularity::perRow(f));
    gs.push_back(Granularity::perColumn(f));
    gs.push_back(Granularity::block(1, 128, f));
    gs.push_back(Granularity::block(128, 128, f));
    gs.push_back(Granularity::block(1, 32, f));
    gs.push_back(Granularity::block(7, 48, f)); // odd blocks, both ragged
  }
  return gs;
}

/// Values over several decades, with outliers, so that per-tensor scaling
/// underflows and blocks differ.
std::vector<float> spreadInput(int64_t rows, int64_t cols, uint64_t seed) {
  RandomSpec spec;
  spec.dist = Distribution::Outliers;
  spec.seed = seed;
  spec.outlierFraction = 0.01;
  spec.outlierScale = 300.0f;
  std::vector<float> x = randomTensor(rows * cols, spec);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x[size_t(r * cols + c)] *=
          std::ldexp(1.0f, int((r * 7 + c / 50) % 24) - 12);
  return x;
}

QuantRecipe recipe(Granularity g, DType fmt = DType::E4M3FN) {
  QuantRecipe r;
  r.format = fmt;
  r.granularity = g;
  return r;
}

/// The amax of every element's block, by brute force over the block
/// geometry (independent of the library's partitioning).
std::vector<float> blockAmaxPerElement(const std::vector<float> &x,
                                       int64_t rows, int64_t cols,
                                       const Granularity &g) {
  int64_t br = Granularity::extent(g.rows, rows);
  int64_t bc = Granularity::extent(g.cols, cols);
  std::vector<float> out(x.size());
  for (int64_t r0 = 0; r0 < rows; r0 += br)
    for (int64_t c0 = 0; c0 < cols; c0 += bc) {
      int64_t r1 = std::min(rows, r0 + br), c1 = std::min(cols, c0 + bc);
      float m = 0;
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = c0; j < c1; ++j)
          m = std::max(m, std::fabs(x[size_t(i * cols + j)]));
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = c0; j < c1; ++j)
          out[size_t(i * cols + j)] = m;
    }
  return out;
}

std::string name(const Granularity &g, DType fmt) {
  return toString(g) + " " + std::string(toString(fmt));
}

} // namespace

TEST(Quantize, ScaleShapesFollowTheCeilDivRule) {
  std::vector<float> x(129 * 200, 1.0f);
  struct Case {
    Granularity g;
    int64_t sr, sc;
  } cases[] = {{Granularity::perTensor(), 1, 1},
               {Granularity::perRow(), 129, 1},
               {Granularity::perColumn(), 1, 200},
               {Granularity::block(1, 128), 129, 2},
               {Granularity::block(128, 128), 2, 2},
               {Granularity::mx(), 129, 7}};
  for (const Case &c : cases) {
    auto q = quantize(x.data(), 129, 200, recipe(c.g));
    ASSERT_TRUE(q) << q.message();
    EXPECT_EQ(q->scaleRows, c.sr) << toString(c.g);
    EXPECT_EQ(q->scaleCols, c.sc) << toString(c.g);
    EXPECT_EQ(q->scales.size(), size_t(c.sr * c.sc));
    EXPECT_EQ(q->scaleCodes.size(),
              c.g.scale == ScaleFormat::UE8M0 ? size_t(c.sr * c.sc) : 0u);
    EXPECT_TRUE(validate(*q).isOk());
  }
}

TEST(Quantize, BlocksLargerThanTheTensorCoverItWhole) {
  // A block of 2^31 rows on 300 rows is the whole column: the same scales
  // and codes as per-column, and no per-block bookkeeping sized by the
  // block (2^31 rows once made blockAmax allocate ~2^23 tasks per block
  // column).
  RandomSpec spec;
  std::vector<float> x = randomTensor(300 * 256, spec);
  auto huge = quantize(x.data(), 300, 256,
                       recipe(Granularity::block(int64_t(1) << 31, 1)));
  auto column = quantize(x.data(), 300, 256, recipe(Granularity::perColumn()));
  ASSERT_TRUE(huge && column) << huge.message() << column.message();
  EXPECT_EQ(huge->scaleRows, 1);
  EXPECT_EQ(huge->scaleCols, 256);
  EXPECT_EQ(huge->scales, column->scales);
  EXPECT_EQ(huge->codes, column->codes);
  EXPECT_EQ(huge->blockRows(), 300);
  EXPECT_TRUE(validate(*huge).isOk());
  auto wide =
      quantize(x.data(), 300, 256, recipe(Granularity::block(1, INT64_MAX)));
  auto row = quantize(x.data(), 300, 256, recipe(Granularity::perRow()));
  ASSERT_TRUE(wide && row);
  EXPECT_EQ(wide->scales, row->scales);
  EXPECT_EQ(wide->codes, row->codes);
}

TEST(Quantize, ScalesAndCodesFollowTheDocumentedRule) {
  const int64_t rows = 129, cols = 200; // ragged for every block size
  std::vector<float> x = spreadInput(rows, cols, 3);
  for (DType fmt : {DType::E4M3FN, DType::E5M2})
    for (const Granularity &g : allGranularities()) {
      auto q = quantize(x.data(), rows, cols, recipe(g, fmt));
      ASSERT_TRUE(q) << q.message();
      float fmax = fp8Format(fmt).maxFinite;
      std::vector<float> amaxes = blockAmaxPerElement(x, rows, cols, g);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          float amax = amaxes[size_t(r * cols + c)];
          float s = q->scaleAt(r, c);
          float exact = amax / fmax;
          if (g.scale == ScaleFormat::F32) {
            ASSERT_EQ(s, exact) << name(g, fmt) << " at " << r << "," << c;
          } else {
            // A power of two, the smallest not below amax / fmt_max.
            int e;
            ASSERT_EQ(std::frexp(s, &e), 0.5f) << name(g, fmt);
            ASSERT_GE(s, exact) << name(g, fmt);
            ASSERT_LT(s / 2, exact) << name(g, fmt);
          }
          float v = x[size_t(r * cols + c)] / s;
          ASSERT_EQ(q->codes[size_t(r * cols + c)], floatToFP8(v, fmt))
              << name(g, fmt) << " at " << r << "," << c;
        }
      if (g.scale == ScaleFormat::UE8M0)
        for (size_t i = 0; i < q->scales.size(); ++i)
          ASSERT_EQ(q->scales[i], ue8m0ToFloat(q->scaleCodes[i]));
    }
}

TEST(Quantize, RoundTripWithinHalfAnUlpOfTheBlockScale) {
  // |x - dequant(quant(x))| <= ulp_fp8(x / s) * s / 2, plus the two FP32
  // roundings of x / s and q * s (below 2^-22 |x| together).
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{129, 200}, {64, 96}, {1, 33}, {300, 31}}) {
    std::vector<float> x = spreadInput(rows, cols, uint64_t(rows * cols));
    for (DType fmt : {DType::E4M3FN, DType::E5M2})
      for (const Granularity &g : allGranularities()) {
        QuantStats st;
        auto q = quantize(x.data(), rows, cols, recipe(g, fmt), &st);
        ASSERT_TRUE(q) << q.message();
        std::vector<float> back = dequantize(*q);
        double worst = 0;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            size_t i = size_t(r * cols + c);
            float s = q->scaleAt(r, c);
            double bound =
                0.5 * double(fp8Ulp(x[i] / s, fmt)) * s * (1 + 0x1p-20) +
                0x1p-22 * std::fabs(double(x[i]));
            double err = std::fabs(double(x[i]) - double(back[i]));
            ASSERT_LE(err, bound)
                << name(g, fmt) << " [" << rows << "x" << cols << "] at " << r
                << "," << c << ": x " << x[i] << ", back " << back[i];
            worst = std::max(worst, err);
          }
        EXPECT_EQ(st.maxAbsError, worst) << name(g, fmt);
        EXPECT_EQ(st.overflow, 0) << name(g, fmt);
      }
  }
}

TEST(Quantize, FinerGranularityNeverLosesMoreThanPerTensor) {
  std::vector<float> x = spreadInput(256, 256, 9);
  QuantStats perTensor, tile, block, mx;
  ASSERT_TRUE(quantize(x.data(), 256, 256, recipe(Granularity::perTensor()),
                       &perTensor));
  ASSERT_TRUE(
      quantize(x.data(), 256, 256, recipe(Granularity::block(1, 128)), &tile));
  ASSERT_TRUE(quantize(x.data(), 256, 256, recipe(Granularity::block(128, 128)),
                       &block));
  ASSERT_TRUE(quantize(x.data(), 256, 256, recipe(Granularity::mx()), &mx));
  EXPECT_GT(perTensor.underflowRatio, 0.01); // the spread input underflows
  EXPECT_LT(tile.underflowRatio, perTensor.underflowRatio);
  EXPECT_LT(tile.meanRelError, perTensor.meanRelError);
  EXPECT_LE(block.underflowRatio, perTensor.underflowRatio);
  EXPECT_LT(mx.underflowRatio, perTensor.underflowRatio);
}

TEST(Quantize, TransposeMatchesQuantizingTheTranspose) {
  const int64_t rows = 129, cols = 200;
  std::vector<float> x = spreadInput(rows, cols, 5);
  std::vector<float> xt(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      xt[size_t(c * rows + r)] = x[size_t(r * cols + c)];
  for (const Granularity &g : allGranularities()) {
    auto q = quantize(x.data(), rows, cols, recipe(g));
    Granularity gt = Granularity::block(g.cols, g.rows, g.scale);
    auto qt = quantize(xt.data(), cols, rows, recipe(gt));
    ASSERT_TRUE(q && qt);
    QuantizedTensor t = transpose(*q);
    EXPECT_EQ(t.rows, qt->rows);
    EXPECT_EQ(t.granularity, qt->granularity) << toString(g);
    EXPECT_EQ(t.codes, qt->codes) << toString(g);
    EXPECT_EQ(t.scales, qt->scales) << toString(g);
    EXPECT_EQ(t.scaleCodes, qt->scaleCodes) << toString(g);
    EXPECT_TRUE(validate(t).isOk());
  }
}

TEST(Quantize, AllZeroBlockGetsUnitScaleAndSignedZeroCodes) {
  // 2 x 256 with 1x128 blocks: block (0, 1) is all zero, with a -0.
  std::vector<float> x(512, 1.5f);
  for (int c = 128; c < 256; ++c)
    x[size_t(c)] = 0.0f;
  x[130] = -0.0f;
  for (ScaleFormat f :
       {ScaleFormat::F32, ScaleFormat::F32Pow2, ScaleFormat::UE8M0}) {
    QuantStats st;
    auto q =
        quantize(x.data(), 2, 256, recipe(Granularity::block(1, 128, f)), &st);
    ASSERT_TRUE(q) << q.message();
    EXPECT_EQ(q->scales[1], 1.0f);
    if (f == ScaleFormat::UE8M0)
      EXPECT_EQ(q->scaleCodes[1], 127);
    EXPECT_EQ(q->codes[128], 0x00);
    EXPECT_EQ(q->codes[130], 0x80); // -0 keeps its sign
    EXPECT_EQ(st.zeroBlocks, 1);
    EXPECT_EQ(st.underflow, 0);
    std::vector<float> back = dequantize(*q);
    EXPECT_EQ(back[128], 0.0f);
    EXPECT_TRUE(std::signbit(back[130]));
  }
}

TEST(Quantize, NonFiniteInputIsAnErrorNamingTheFirstOne) {
  std::vector<float> x(6 * 40, 1.0f);
  x[3 * 40 + 7] = std::numeric_limits<float>::quiet_NaN();
  x[5 * 40 + 1] = std::numeric_limits<float>::infinity();
  auto q = quantize(x.data(), 6, 40, recipe(Granularity::block(1, 32)));
  ASSERT_FALSE(q);
  EXPECT_EQ(q.message(),
            "expected finite inputs, found nan at (3, 7) (flat index 127)");
  x[3 * 40 + 7] = 1.0f;
  q = quantize(x.data(), 6, 40, recipe(Granularity::perTensor()));
  ASSERT_FALSE(q);
  EXPECT_EQ(q.message(),
            "expected finite inputs, found inf at (5, 1) (flat index 201)");
}

TEST(Quantize, NonFinitePropagatePoisonsOnlyItsBlock) {
  std::vector<float> x(2 * 64, 2.0f);
  x[70] = -std::numeric_limits<float>::infinity(); // row 1, block (1, 0)
  QuantizeOptions opts;
  opts.nonFinite = NonFinitePolicy::Propagate;
  QuantStats st;
  auto q =
      quantize(x.data(), 2, 64, recipe(Granularity::mx()), &st, nullptr, opts);
  ASSERT_TRUE(q) << q.message();
  // Blocks: (0,0) (0,1) (1,0) (1,1); only (1,0) holds the inf.
  EXPECT_EQ(q->scaleCodes[2], 0xFF);
  EXPECT_TRUE(std::isnan(q->scales[2]));
  for (int c = 64; c < 96; ++c)
    EXPECT_EQ(q->codes[size_t(c)], 0x7F) << c;
  EXPECT_EQ(q->scaleCodes[3], floatToUE8M0(2.0f / 448, PowerRounding::Up));
  EXPECT_EQ(q->codes[100], floatToFP8(2.0f / q->scales[3], DType::E4M3FN));
  EXPECT_EQ(st.nonFinite, 1);
  EXPECT_TRUE(std::isnan(dequantize(*q)[64]));
}

TEST(Quantize, BF16InputMatchesTheWidenedFloats) {
  RandomSpec spec;
  spec.seed = 17;
  std::vector<uint16_t> xb = randomTensorBF16(100 * 130, spec);
  std::vector<float> xf(xb.size());
  for (size_t i = 0; i < xb.size(); ++i)
    xf[i] = bf16ToFloat(xb[i]);
  for (const Granularity &g :
       {Granularity::block(1, 128), Granularity::mx(), Granularity::perRow()}) {
    auto a = quantizeBF16(xb.data(), 100, 130, recipe(g));
    auto b = quantize(xf.data(), 100, 130, recipe(g));
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->codes, b->codes);
    EXPECT_EQ(a->scales, b->scales);
  }
}

TEST(Quantize, ScaleFromAmaxEdges) {
  EXPECT_EQ(scaleFromAmax(448.0f, DType::E4M3FN, ScaleFormat::F32), 1.0f);
  EXPECT_EQ(scaleFromAmax(57344.0f, DType::E5M2, ScaleFormat::F32), 1.0f);
  EXPECT_EQ(scaleFromAmax(449.0f, DType::E4M3FN, ScaleFormat::F32Pow2), 2.0f);
  EXPECT_EQ(scaleFromAmax(448.0f, DType::E4M3FN, ScaleFormat::F32Pow2), 1.0f);
  uint8_t code = 0;
  EXPECT_EQ(scaleFromAmax(449.0f, DType::E4M3FN, ScaleFormat::UE8M0, 0, &code),
            2.0f);
  EXPECT_EQ(code, 128);
  EXPECT_EQ(scaleFromAmax(0.0f, DType::E4M3FN, ScaleFormat::UE8M0, 0, &code),
            1.0f);
  EXPECT_EQ(code, 127);
  // Tiny amax: f32 scales stay normal (2^-126); ue8m0 goes down to 2^-127.
  float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(scaleFromAmax(tiny, DType::E4M3FN, ScaleFormat::F32), 0x1p-126f);
  EXPECT_EQ(scaleFromAmax(tiny, DType::E4M3FN, ScaleFormat::F32Pow2),
            0x1p-126f);
  EXPECT_EQ(scaleFromAmax(tiny, DType::E4M3FN, ScaleFormat::UE8M0, 0, &code),
            0x1p-127f);
  EXPECT_EQ(code, 0);
  // Margin: amax * 2^margin.
  EXPECT_EQ(scaleFromAmax(448.0f, DType::E4M3FN, ScaleFormat::F32, 3), 8.0f);
  EXPECT_TRUE(std::isnan(
      scaleFromAmax(INFINITY, DType::E4M3FN, ScaleFormat::UE8M0, 0, &code)));
  EXPECT_EQ(code, 0xFF);
}

// A given amax (QuantizeOptions::givenAmax, a GEMM epilogue's): x's own
// gives the ordinary per-tensor result; a smaller one saturates what it does
// not bound, a larger one scales everything down; a NaN gives NaN codes;
// any other recipe is refused.
TEST(Quantize, AGivenAmaxMakesThePerTensorScale) {
  std::vector<float> x = {1.0f, -3.0f, 0.5f, 896.0f, -0.0f, 2.0f};
  const QuantRecipe r = recipe(Granularity::perTensor());
  auto own = quantize(x.data(), 2, 3, r);
  ASSERT_TRUE(own) << own.message();
  QuantizeOptions given;
  given.givenAmax = 896.0f;
  auto same = quantize(x.data(), 2, 3, r, nullptr, nullptr, given);
  ASSERT_TRUE(same) << same.message();
  EXPECT_EQ(same->scales, own->scales);
  EXPECT_EQ(same->codes, own->codes);
  given.givenAmax = -448.0f; // its magnitude: scale 1
  auto small = quantize(x.data(), 2, 3, r, nullptr, nullptr, given);
  ASSERT_TRUE(small) << small.message();
  EXPECT_EQ(small->scales[0], 1.0f);
  EXPECT_EQ(small->codes[3], 0x7E); // 896 saturates to 448
  EXPECT_EQ(small->codes[1], floatToFP8(-3.0f, DType::E4M3FN));
  EXPECT_EQ(small->codes[4], 0x80);
  given.givenAmax = 1792.0f;
  auto large = quantize(x.data(), 2, 3, r, nullptr, nullptr, given);
  ASSERT_TRUE(large) << large.message();
  EXPECT_EQ(large->scales[0], 4.0f);
  EXPECT_EQ(large->codes[3], floatToFP8(224.0f, DType::E4M3FN));
  given.givenAmax = std::numeric_limits<float>::quiet_NaN();
  auto nan = quantize(x.data(), 2, 3, r, nullptr, nullptr, given);
  ASSERT_TRUE(nan) << nan.message();
  EXPECT_TRUE(std::isnan(nan->scales[0]));
  EXPECT_EQ(nan->codes[0] & 0x7F, 0x7F);
  given.givenAmax = 1.0f;
  EXPECT_EQ(quantize(x.data(), 2, 3, recipe(Granularity::block(1, 128)),
                     nullptr, nullptr, given)
                .message(),
            "expected per-tensor current scaling with a given amax, found "
            "1x128");
}

TEST(Quantize, EmptyAndTinyShapes) {
  auto q = quantize(nullptr, 0, 0, recipe(Granularity::block(1, 128)));
  ASSERT_TRUE(q) << q.message();
  EXPECT_TRUE(q->codes.empty());
  float one = -3.0f;
  q = quantize(&one, 1, 1, recipe(Granularity::block(128, 128)));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->scales[0], 3.0f / 448.0f);
  EXPECT_EQ(q->codes[0], 0xFE); // -448
}

TEST(Quantize, RejectsBadRecipesWithClearMessages) {
  float x[4] = {1, 2, 3, 4};
  QuantRecipe r = recipe(Granularity::perTensor(), DType::BF16);
  EXPECT_EQ(quantize(x, 2, 2, r).message(),
            "expected an FP8 format (e4m3fn or e5m2) to quantize to, found "
            "bf16");
  r = recipe(Granularity::block(-2, 4));
  EXPECT_NE(
      quantize(x, 2, 2, r)
          .message()
          .find("block rows of the tensor's granularity to be positive or "
                "whole, found -2"),
      std::string::npos);
  r = recipe(Granularity::block(1, 128));
  r.mode = ScalingMode::Delayed;
  EXPECT_NE(quantize(x, 2, 2, r).message().find("per_tensor granularity"),
            std::string::npos);
  r = recipe(Granularity::perTensor());
  r.mode = ScalingMode::Delayed;
  EXPECT_EQ(quantize(x, 2, 2, r).message(),
            "expected an amax history for delayed scaling, found none");
  AmaxHistory h;
  EXPECT_NE(quantize(x, 2, 2, recipe(Granularity::perTensor()), nullptr, &h)
                .message()
                .find("expected no amax history with current scaling"),
            std::string::npos);
  EXPECT_NE(quantize(nullptr, 2, 2, recipe(Granularity::perTensor()))
                .message()
                .find("null pointer"),
            std::string::npos);
}

TEST(Quantize, ValidateCatchesInconsistentTensors) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto q = quantize(x, 2, 4, recipe(Granularity::block(1, 2)));
  ASSERT_TRUE(q);
  QuantizedTensor t = *q;
  t.scales.pop_back();
  EXPECT_EQ(validate(t, "A").message(), "expected A to hold 4 scales, found 3");
  t = *q;
  t.scaleCols = 3;
  EXPECT_EQ(validate(t, "A").message(),
            "expected the scales of A to have shape [2, 2] for 1x2 "
            "granularity, found [2, 3]");
  t = *q;
  t.codes.push_back(0);
  EXPECT_EQ(validate(t, "A").message(),
            "expected A to hold 8 codes ([2, 4]), found 9");
  auto m =
      quantize(x, 2, 4, recipe(Granularity::block(1, 2, ScaleFormat::UE8M0)));
  ASSERT_TRUE(m);
  t = *m;
  t.scales[0] *= 2;
  EXPECT_NE(validate(t, "B").message().find("to decode its ue8m0 byte"),
            std::string::npos);
}
