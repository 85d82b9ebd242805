//===- ReferenceGemmTest.cpp - The promoted reference GEMM ----------------===//
//
// Every granularity pair the GPU kernels accept, in every layout: the blocked,
// vectorized, threaded referenceGemm must equal a plain scalar statement of
// the documented formula bit for bit, agree across layouts bit for bit, stay
// close to the FP64 product of the same FP8 values, and close (DeepGEMM's
// similarity) to the unquantized product.
//
//===----------------------------------------------------------------------===//

#include "numerics/ReferenceGemm.h"

#include "core/KernelSpec.h"
#include "core/RecipeRules.h"
#include "numerics/Formats.h"
#include "numerics/Metrics.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace fp8;
using namespace fp8::numerics;

namespace {

/// One operand recipe in the logical frame (A as [M, K], B as [N, K]).
struct Pair {
  const char *name;
  Granularity a, b;
  int64_t interval;
};

std::vector<Pair> allPairs() {
  using G = Granularity;
  return {
      {"per_tensor", G::perTensor(), G::perTensor(), 0},
      {"per_tensor_promoted", G::perTensor(), G::perTensor(), 128},
      {"per_channel", G::perRow(), G::perRow(), 64},
      {"pow2_per_tensor", G::perTensor(ScaleFormat::F32Pow2),
       G::perRow(ScaleFormat::UE8M0), 0},
      {"deepseek_1x128_128x128", G::block(1, 128), G::block(128, 128), 128},
      {"tile_1x128_both", G::block(1, 128), G::block(1, 128), 64},
      {"block_128x128_both", G::block(128, 128), G::block(128, 128), 128},
      {"mx_1x32", G::mx(), G::mx(), 0},
      {"mx_1x32_promoted", G::mx(), G::mx(), 32},
      {"tile_1x128_ue8m0_vs_per_channel", G::block(1, 128, ScaleFormat::UE8M0),
       G::perRow(), 128},
  };
}

/// A logical [rows, k] matrix stored per `layout` ([rows, k] or [k, rows]).
std::vector<float> store(const std::vector<float> &logical, int64_t rows,
                         int64_t k, Layout layout) {
  if (layout == Layout::KMajor)
    return logical;
  std::vector<float> t(logical.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c)
      t[size_t(c * rows + r)] = logical[size_t(r * k + c)];
  return t;
}

struct Operand {
  std::vector<float> stored;
  QuantizedTensor q;
};

Operand makeOperand(const std::vector<float> &logical, int64_t rows, int64_t k,
                    Layout layout, Granularity logicalG,
                    DType fmt = DType::E4M3FN) {
  Operand o;
  o.stored = store(logical, rows, k, layout);
  QuantRecipe r;
  r.format = fmt;
  r.granularity = logicalGranularity(logicalG, layout); // its own inverse
  bool kMajor = layout == Layout::KMajor;
  auto q = quantize(o.stored.data(), kMajor ? rows : k, kMajor ? k : rows, r);
  EXPECT_TRUE(q) << q.message();
  o.q = *q;
  return o;
}

/// The documented formula, element by element, straight from the quantized
/// tensors (no packing, no tiles, no threads).
std::vector<float> naiveGemm(const QuantizedTensor &a, Layout la,
                             const QuantizedTensor &b, Layout lb,
                             const float *c, int64_t interval,
                             const AccumulatorModel &model) {
  bool aK = la == Layout::KMajor, bK = lb == Layout::KMajor;
  int64_t m = aK ? a.rows : a.cols, k = aK ? a.cols : a.rows;
  int64_t n = bK ? b.rows : b.cols;
  const float *ta = fp8DecodeTable(a.format), *tb = fp8DecodeTable(b.format);
  auto av = [&](int64_t i, int64_t kk) {
    return ta[aK ? a.codes[size_t(i * a.cols + kk)]
                 : a.codes[size_t(kk * a.cols + i)]];
  };
  auto bv = [&](int64_t j, int64_t kk) {
    return tb[bK ? b.codes[size_t(j * b.cols + kk)]
                 : b.codes[size_t(kk * b.cols + j)]];
  };
  auto as = [&](int64_t i, int64_t kk) {
    return aK ? a.scaleAt(i, kk) : a.scaleAt(kk, i);
  };
  auto bs = [&](int64_t j, int64_t kk) {
    return bK ? b.scaleAt(j, kk) : b.scaleAt(kk, j);
  };
  bool varying = kBlock(a.granularity, la) != Granularity::kWhole ||
                 kBlock(b.granularity, lb) != Granularity::kWhole;
  int64_t chunk = interval > 0 ? interval
                  : varying    ? 32
                               : std::max<int64_t>(k, 1);
  std::vector<float> d(size_t(m * n));
  std::vector<float> ra(static_cast<size_t>(k)), rb(static_cast<size_t>(k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        ra[size_t(kk)] = av(i, kk);
        rb[size_t(kk)] = bv(j, kk);
      }
      float acc = 0;
      for (int64_t k0 = 0; k0 < k; k0 += chunk) {
        int64_t len = std::min(chunk, k - k0);
        // One chunk with unit scales: emulatedDot with no promotion.
        float p = emulatedDot(&ra[size_t(k0)], &rb[size_t(k0)], len, model, 0,
                              a.format, b.format);
        if (varying)
          acc = std::fma(p, as(i, k0) * bs(j, k0), acc);
        else
          acc = acc + p;
      }
      float out;
      if (varying)
        out = c ? acc + c[i * n + j] : acc;
      else {
        float s = as(i, 0) * bs(j, 0);
        out = c ? std::fma(acc, s, c[i * n + j]) : acc * s;
      }
      d[size_t(i * n + j)] = out;
    }
  return d;
}

void expectBitEqual(const std::vector<float> &x, const std::vector<float> &y,
                    const std::string &what) {
  ASSERT_EQ(x.size(), y.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0 && ++bad <= 3)
      ADD_FAILURE() << what << ": element " << i << ": " << x[i] << " vs "
                    << y[i];
  EXPECT_EQ(bad, 0u) << what;
}

const Layout kLayouts[] = {Layout::KMajor, Layout::MNMajor};

} // namespace

TEST(ReferenceGemm, EveryGranularityAndLayoutFollowsTheFormula) {
  // Ragged: M, N not multiples of the 6x16 tile, K not a multiple of 128.
  const int64_t M = 37, N = 45, K = 320;
  RandomSpec sa, sb;
  sa.seed = 1;
  sb.seed = 2;
  sa.dist = Distribution::Outliers;
  std::vector<float> a = randomTensor(M * K, sa), b = randomTensor(N * K, sb);
  std::vector<float> c = randomTensor(M * N, RandomSpec{});
  auto exact = referenceGemmUnquantized(a.data(), Layout::KMajor, b.data(),
                                        Layout::KMajor, M, N, K, c.data());
  ASSERT_TRUE(exact);
  for (const Pair &p : allPairs()) {
    std::vector<float> first;
    for (Layout la : kLayouts)
      for (Layout lb : kLayouts) {
        std::string what = std::string(p.name) + " " +
                           std::string(toString(la)) + "/" +
                           std::string(toString(lb));
        Operand A = makeOperand(a, M, K, la, p.a);
        Operand B = makeOperand(b, N, K, lb, p.b);
        ReferenceGemmOptions o;
        o.promotionInterval = promotionFromInt(p.interval);
        auto d = referenceGemm(A.q, la, B.q, lb, c.data(), o);
        ASSERT_TRUE(d) << what << ": " << d.message();
        // 1. Exactly the documented formula.
        expectBitEqual(*d,
                       naiveGemm(A.q, la, B.q, lb, c.data(), p.interval, {}),
                       what + " vs the scalar formula");
        // 2. Layout does not change a bit.
        if (first.empty())
          first = *d;
        else
          expectBitEqual(*d, first, what + " vs k_major/k_major");
        // 3. Close to FP64 of the same FP8 values.
        auto d64 = referenceGemmF64(A.q, la, B.q, lb, c.data());
        ASSERT_TRUE(d64);
        ErrorMetrics e = compare(d->data(), d64->data(), M * N);
        EXPECT_LT(e.maxRelError, 1e-5) << what;
        EXPECT_LT(e.similarity, 1e-10) << what;
        // 4. Close to the unquantized product (the GPU tests' criterion).
        ErrorMetrics u = compare(d->data(), exact->data(), M * N);
        EXPECT_LT(u.similarity, 1e-3) << what;
      }
  }
}

TEST(ReferenceGemm, MixedFormatsAndE5M2) {
  const int64_t M = 20, N = 33, K = 256;
  std::vector<float> a = randomTensor(M * K, {Distribution::Normal, 1, 4});
  std::vector<float> b = randomTensor(N * K, {Distribution::Normal, 1, 5});
  Operand A = makeOperand(a, M, K, Layout::KMajor, Granularity::block(1, 128),
                          DType::E4M3FN);
  Operand B = makeOperand(b, N, K, Layout::MNMajor,
                          Granularity::block(128, 128), DType::E5M2);
  auto d = referenceGemm(A.q, Layout::KMajor, B.q, Layout::MNMajor);
  ASSERT_TRUE(d) << d.message();
  expectBitEqual(
      *d,
      naiveGemm(A.q, Layout::KMajor, B.q, Layout::MNMajor, nullptr, 128, {}),
      "e4m3 x e5m2");
  // The accumulator model with E5M2 subnormal exponents, both kernels.
  for (bool portable : {false, true}) {
    ReferenceGemmOptions o;
    o.accumulator = kHopperFP8Accumulator;
    o.portableKernels = portable;
    auto e =
        referenceGemm(A.q, Layout::KMajor, B.q, Layout::MNMajor, nullptr, o);
    ASSERT_TRUE(e) << e.message();
    expectBitEqual(*e,
                   naiveGemm(A.q, Layout::KMajor, B.q, Layout::MNMajor, nullptr,
                             128, o.accumulator),
                   "e4m3 x e5m2, emulated");
  }
  auto exact = referenceGemmUnquantized(a.data(), Layout::KMajor, b.data(),
                                        Layout::KMajor, M, N, K);
  // E5M2 keeps 2 mantissa bits: DeepGEMM's 1e-3 is an E4M3 criterion.
  EXPECT_LT(compare(d->data(), exact->data(), M * N).similarity, 5e-3);
}

TEST(ReferenceGemm, CIsAddedAsDocumented) {
  const int64_t M = 13, N = 17, K = 256;
  std::vector<float> a = randomTensor(M * K, {Distribution::Normal, 1, 6});
  std::vector<float> b = randomTensor(N * K, {Distribution::Normal, 1, 7});
  std::vector<float> c = randomTensor(M * N, {Distribution::Normal, 100, 8});
  for (const Pair &p : {allPairs()[0], allPairs()[4]}) {
    Operand A = makeOperand(a, M, K, Layout::KMajor, p.a);
    Operand B = makeOperand(b, N, K, Layout::KMajor, p.b);
    ReferenceGemmOptions o;
    o.promotionInterval = promotionFromInt(p.interval);
    auto with =
        referenceGemm(A.q, Layout::KMajor, B.q, Layout::KMajor, c.data(), o);
    auto without =
        referenceGemm(A.q, Layout::KMajor, B.q, Layout::KMajor, nullptr, o);
    ASSERT_TRUE(with && without);
    for (int64_t i = 0; i < M * N; ++i) {
      float x = (*without)[size_t(i)] + c[size_t(i)];
      // At most a rounding of each term away from D + C.
      double tol =
          (std::fabs((*without)[size_t(i)]) + std::fabs(c[size_t(i)])) *
          0x1p-22;
      EXPECT_NEAR((*with)[size_t(i)], x, tol) << i;
    }
    auto d64 =
        referenceGemmF64(A.q, Layout::KMajor, B.q, Layout::KMajor, c.data());
    EXPECT_LT(compare(with->data(), d64->data(), M * N).maxRelError, 1e-5);
  }
}

TEST(ReferenceGemm, PortableKernelsAreBitIdentical) {
  const int64_t M = 31, N = 50, K = 1000;
  std::vector<float> a = randomTensor(M * K, {Distribution::Normal, 1, 9});
  std::vector<float> b = randomTensor(N * K, {Distribution::Positive, 1, 10});
  for (const Pair &p : {allPairs()[1], allPairs()[4], allPairs()[8]})
    for (int bits : {0, 7, 13, 23}) {
      Operand A = makeOperand(a, M, K, Layout::KMajor, p.a);
      Operand B = makeOperand(b, N, K, Layout::KMajor, p.b);
      ReferenceGemmOptions o;
      o.promotionInterval = promotionFromInt(p.interval);
      o.accumulator.mantissaBits = bits;
      auto fast =
          referenceGemm(A.q, Layout::KMajor, B.q, Layout::KMajor, nullptr, o);
      o.portableKernels = true;
      auto portable =
          referenceGemm(A.q, Layout::KMajor, B.q, Layout::KMajor, nullptr, o);
      ASSERT_TRUE(fast && portable);
      std::string what = std::string(p.name) + " bits " + std::to_string(bits);
      expectBitEqual(*fast, *portable, what);
      if (bits)
        expectBitEqual(*fast,
                       naiveGemm(A.q, Layout::KMajor, B.q, Layout::KMajor,
                                 nullptr, p.interval, o.accumulator),
                       what + " vs the scalar model");
    }
}

TEST(ReferenceGemm, PromotionIntervalMattersOnlyWithTheTruncatingAccumulator) {
  // Same-sign inputs, per-tensor: the H100's worst case.
  const int64_t M = 16, N = 16, K = 8192;
  std::vector<float> a = randomTensor(M * K, {Distribution::Positive, 1, 11});
  std::vector<float> b = randomTensor(N * K, {Distribution::Positive, 1, 12});
  Operand A = makeOperand(a, M, K, Layout::KMajor, Granularity::perTensor());
  Operand B = makeOperand(b, N, K, Layout::KMajor, Granularity::perTensor());
  auto d64 = referenceGemmF64(A.q, Layout::KMajor, B.q, Layout::KMajor);
  auto run = [&](int64_t interval, AccumulatorModel model) {
    ReferenceGemmOptions o;
    o.promotionInterval = promotionFromInt(interval);
    o.accumulator = model;
    auto d =
        referenceGemm(A.q, Layout::KMajor, B.q, Layout::KMajor, nullptr, o);
    EXPECT_TRUE(d) << d.message();
    return compare(d->data(), d64->data(), M * N).meanRelError;
  };
  double fp32None = run(0, {}), fp32Promoted = run(128, {});
  double tcNone = run(0, kHopperFP8Accumulator);
  double tcPromoted = run(128, kHopperFP8Accumulator);
  EXPECT_LT(fp32None, 1e-4);
  EXPECT_LT(fp32Promoted, 1e-5);
  EXPECT_GT(tcNone, 0.05);     // ~13% lost
  EXPECT_LT(tcPromoted, 2e-3); // ~0.06%
  EXPECT_GT(tcNone, 50 * tcPromoted);
}

TEST(ReferenceGemm, EmptyShapes) {
  float cval[6] = {1, 2, 3, 4, 5, 6};
  QuantRecipe r;
  auto a = quantize(nullptr, 2, 0, r); // K = 0
  auto b = quantize(nullptr, 3, 0, r);
  ASSERT_TRUE(a && b);
  auto d = referenceGemm(*a, Layout::KMajor, *b, Layout::KMajor, cval);
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(*d, (std::vector<float>{1, 2, 3, 4, 5, 6})); // D = 0 * s + C
  auto m0 = quantize(nullptr, 0, 64, r);
  auto n4 = quantize(std::vector<float>(256, 1.0f).data(), 4, 64, r);
  d = referenceGemm(*m0, Layout::KMajor, *n4, Layout::KMajor);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->empty());
}

TEST(ReferenceGemm, RejectsWhatTheKernelsRejectWithTheirMessages) {
  std::vector<float> x(64 * 256, 1.0f);
  auto q = [&](int64_t rows, int64_t cols, Granularity g) {
    QuantRecipe r;
    r.granularity = g;
    return *quantize(x.data(), rows, cols, r);
  };
  QuantizedTensor a = q(64, 256, Granularity::block(1, 128));
  QuantizedTensor b = q(64, 256, Granularity::block(128, 128));
  ReferenceGemmOptions o;
  o.promotionInterval = std::nullopt;
  EXPECT_NE(referenceGemm(a, Layout::KMajor, b, Layout::KMajor, nullptr, o)
                .message()
                .find("expected a promotion_interval"),
            std::string::npos);
  o.promotionInterval = 96;
  EXPECT_NE(referenceGemm(a, Layout::KMajor, b, Layout::KMajor, nullptr, o)
                .message()
                .find("to divide the K block"),
            std::string::npos);
  o.promotionInterval = 128;
  o.accumulator.mantissaBits = 30;
  EXPECT_EQ(
      referenceGemm(a, Layout::KMajor, b, Layout::KMajor, nullptr, o).message(),
      "expected the accumulator mantissa bits to be in [0, 23] (0: FP32 "
      "sums), found 30");
  QuantizedTensor shortK = q(64, 128, Granularity::perTensor());
  EXPECT_EQ(referenceGemm(a, Layout::KMajor, shortK, Layout::KMajor).message(),
            "expected K of B (128) to equal K of A (256): A is [64, 256] "
            "k_major, B is [64, 128] k_major");
  QuantizedTensor mx = q(64, 256, Granularity::mx());
  EXPECT_NE(referenceGemm(mx, Layout::KMajor, b, Layout::KMajor)
                .message()
                .find("to have MX granularity like A"),
            std::string::npos);
  QuantizedTensor bad = a;
  bad.codes.pop_back();
  EXPECT_NE(referenceGemm(bad, Layout::KMajor, b, Layout::KMajor)
                .message()
                .find("expected A to hold"),
            std::string::npos);
  // The FP64 references take any granularity: they are the plain product.
  QuantizedTensor kcol = q(64, 256, Granularity::perColumn());
  EXPECT_TRUE(referenceGemmF64(kcol, Layout::KMajor, b, Layout::KMajor));
}

TEST(ReferenceGemm, UnquantizedReferenceHonoursLayouts) {
  const int64_t M = 7, N = 9, K = 11;
  std::vector<float> a = randomTensor(M * K, {Distribution::Normal, 1, 13});
  std::vector<float> b = randomTensor(N * K, {Distribution::Normal, 1, 14});
  auto ref = referenceGemmUnquantized(a.data(), Layout::KMajor, b.data(),
                                      Layout::KMajor, M, N, K);
  ASSERT_TRUE(ref);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(a[size_t(i * K + k)]) * double(b[size_t(j * K + k)]);
      EXPECT_NEAR((*ref)[size_t(i * N + j)], s, 1e-12);
    }
  std::vector<float> at = store(a, M, K, Layout::MNMajor);
  std::vector<float> bt = store(b, N, K, Layout::MNMajor);
  auto t = referenceGemmUnquantized(at.data(), Layout::MNMajor, bt.data(),
                                    Layout::MNMajor, M, N, K);
  EXPECT_EQ(*t, *ref);
}
