//===- Sm100NumericsTest.cpp - The sm_100a kernels' numerics, on the CPU --===//
//
// The formula the sm_100a kernels implement, stated as scalar code over what
// the kernel reads (FP8 codes, and the UE8M0 bytes of the packed scale
// layout), against the oracle's referenceGemm. For each output (m, n), with
// a, b the decoded FP8 values and kb the 32-element K blocks in order:
//
//   p_kb = sum over the block of a[m][k] * b[n][k]   (one K = 32 MMA step;
//          products exact, FP32 sums)
//   block-scaled (kind::mxf8f6f4): acc = fmaf(p_kb, sA(m,kb) * sB(n,kb), acc)
//                                  D = acc (+ C)
//   epilogue-scaled (kind::f8f6f4): acc = acc + p_kb
//                                  D = acc * (sA * sB), or fmaf(.., C)
//
// i.e. promotion into the FP32 tensor-memory accumulator every 32 elements,
// which is referenceGemm with promotion interval 32 (or 0 for MX). This
// assumes the tensor core sums a K = 32 step like sequential FP32 adds; the
// order and width of the hardware's internal sum are not documented and
// have never been measured here (no Blackwell GPU): docs/blackwell.md.
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm100ScaleLayout.h"
#include "core/KernelSpec.h"
#include "numerics/Formats.h"
#include "numerics/Metrics.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace fp8;
using namespace fp8::numerics;

namespace {

struct Operands {
  std::vector<float> a, b; // unquantized, row-major [M, K] and [N, K]
  QuantizedTensor qa, qb;
};

Operands makeOperands(int64_t m, int64_t n, int64_t k, Granularity ga,
                      Granularity gb, DType fa = DType::E4M3FN,
                      DType fb = DType::E4M3FN) {
  Operands o;
  RandomSpec spec;
  spec.seed = 11;
  o.a = randomTensor(m * k, spec);
  spec.seed = 12;
  spec.dist = Distribution::Outliers;
  o.b = randomTensor(n * k, spec);
  QuantRecipe ra, rb;
  ra.format = fa;
  ra.granularity = ga;
  rb.format = fb;
  rb.granularity = gb;
  auto qa = quantize(o.a.data(), m, k, ra);
  auto qb = quantize(o.b.data(), n, k, rb);
  EXPECT_TRUE(qa.isOk()) << qa.message();
  EXPECT_TRUE(qb.isOk()) << qb.message();
  o.qa = *qa;
  o.qb = *qb;
  return o;
}

/// The block-scaled kernel's formula over packed scales.
std::vector<float> blockScaledKernelModel(const QuantizedTensor &a,
                                          const std::vector<uint8_t> &sfa,
                                          const QuantizedTensor &b,
                                          const std::vector<uint8_t> &sfb,
                                          const float *c) {
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  const float *da = fp8DecodeTable(a.format);
  const float *db = fp8DecodeTable(b.format);
  std::vector<float> d(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t kb = 0; kb * 32 < k; ++kb) {
        float p = 0.0f;
        for (int64_t kk = kb * 32; kk < std::min(k, kb * 32 + 32); ++kk)
          p = p + da[a.codes[i * k + kk]] * db[b.codes[j * k + kk]];
        const float s =
            sm100ScaleAt(sfa, m, i, kb) * sm100ScaleAt(sfb, n, j, kb);
        acc = std::fma(p, s, acc);
      }
      d[i * n + j] = c ? acc + c[i * n + j] : acc;
    }
  return d;
}

/// The epilogue-scaled kernel's formula (scales constant along K).
std::vector<float> epilogueScaledKernelModel(const QuantizedTensor &a,
                                             const QuantizedTensor &b,
                                             const float *c) {
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  const float *da = fp8DecodeTable(a.format);
  const float *db = fp8DecodeTable(b.format);
  std::vector<float> d(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t kb = 0; kb * 32 < k; ++kb) {
        float p = 0.0f;
        for (int64_t kk = kb * 32; kk < std::min(k, kb * 32 + 32); ++kk)
          p = p + da[a.codes[i * k + kk]] * db[b.codes[j * k + kk]];
        acc = acc + p;
      }
      const float s = a.scaleAt(i, 0) * b.scaleAt(j, 0);
      d[i * n + j] = c ? std::fma(acc, s, c[i * n + j]) : acc * s;
    }
  return d;
}

std::vector<uint8_t> packed(const QuantizedTensor &q, const char *name) {
  auto p =
      packSm100Scales({q.scales.data(), q.rows, q.cols, q.granularity}, name);
  EXPECT_TRUE(p.isOk()) << p.message();
  return p.isOk() ? *p : std::vector<uint8_t>();
}

/// Outputs whose bits differ.
int64_t bitDifferences(const std::vector<float> &x,
                       const std::vector<float> &y) {
  EXPECT_EQ(x.size(), y.size());
  int64_t differ = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    differ += std::memcmp(&x[i], &y[i], sizeof(float)) != 0;
  return differ;
}

void expectBitIdentical(const std::vector<float> &x,
                        const std::vector<float> &y, const char *what) {
  const int64_t differ = bitDifferences(x, y);
  EXPECT_EQ(differ, 0) << what << ": " << differ << " of " << x.size()
                       << " outputs differ";
}

TEST(Sm100Numerics, MXKernelFormulaIsTheOracle) {
  // Ragged M, N and K (K = 336: ten full K blocks and a partial one).
  const int64_t m = 37, n = 45, k = 336;
  for (auto [fa, fb] : {std::pair{DType::E4M3FN, DType::E4M3FN},
                        std::pair{DType::E5M2, DType::E4M3FN},
                        std::pair{DType::E4M3FN, DType::E5M2}}) {
    Operands o =
        makeOperands(m, n, k, Granularity::mx(), Granularity::mx(), fa, fb);
    std::vector<float> c(size_t(m * n));
    RandomSpec cs;
    cs.seed = 13;
    c = randomTensor(m * n, cs);
    for (const float *cp : {static_cast<const float *>(nullptr),
                            static_cast<const float *>(c.data())}) {
      std::vector<float> model = blockScaledKernelModel(
          o.qa, packed(o.qa, "A"), o.qb, packed(o.qb, "B"), cp);
      for (int64_t interval : {0, 32}) {
        ReferenceGemmOptions opt;
        opt.promotionInterval = promotionFromInt(interval);
        auto ref =
            referenceGemm(o.qa, Layout::KMajor, o.qb, Layout::KMajor, cp, opt);
        ASSERT_TRUE(ref.isOk()) << ref.message();
        expectBitIdentical(model, *ref, "MX vs referenceGemm");
      }
      // And it is the product: close to FP64 of the same FP8 values.
      auto f64 =
          referenceGemmF64(o.qa, Layout::KMajor, o.qb, Layout::KMajor, cp);
      ASSERT_TRUE(f64.isOk()) << f64.message();
      EXPECT_LT(compare(model.data(), f64->data(), m * n).maxRelError, 1e-5);
    }
  }
}

TEST(Sm100Numerics, DeepSeekPow2ThroughBlockScalesIsTheOracle) {
  const int64_t m = 40, n = 136, k = 384;
  for (ScaleFormat f : {ScaleFormat::F32Pow2, ScaleFormat::UE8M0}) {
    Operands o = makeOperands(m, n, k, Granularity::block(1, 128, f),
                              Granularity::block(128, 128, f));
    // The kernel sees the replicated UE8M0 bytes; the oracle the original
    // 1x128 / 128x128 scales with promotion every 32 elements.
    std::vector<float> model = blockScaledKernelModel(
        o.qa, packed(o.qa, "A"), o.qb, packed(o.qb, "B"), nullptr);
    ReferenceGemmOptions opt;
    opt.promotionInterval = 32;
    auto ref =
        referenceGemm(o.qa, Layout::KMajor, o.qb, Layout::KMajor, nullptr, opt);
    ASSERT_TRUE(ref.isOk()) << ref.message();
    expectBitIdentical(model, *ref, "DeepSeek pow2 vs referenceGemm");
    // The comparison can tell the promotion structures apart: Hopper's
    // (every 128 elements) rounds differently.
    opt.promotionInterval = 128;
    auto hopper =
        referenceGemm(o.qa, Layout::KMajor, o.qb, Layout::KMajor, nullptr, opt);
    ASSERT_TRUE(hopper.isOk()) << hopper.message();
    EXPECT_GT(bitDifferences(model, *hopper), 0);
    // Against the unquantized product: DeepGEMM's similarity bound.
    auto exact = referenceGemmUnquantized(o.a.data(), Layout::KMajor,
                                          o.b.data(), Layout::KMajor, m, n, k);
    ASSERT_TRUE(exact.isOk()) << exact.message();
    EXPECT_LT(similarity(model.data(), exact->data(), m * n), 1e-3);
  }
}

TEST(Sm100Numerics, EpilogueScaledKernelFormulaIsTheOracle) {
  const int64_t m = 33, n = 70, k = 512;
  for (auto [ga, gb] :
       {std::pair{Granularity::perTensor(), Granularity::perTensor()},
        std::pair{Granularity::perRow(), Granularity::perRow()}}) {
    Operands o = makeOperands(m, n, k, ga, gb);
    RandomSpec cs;
    cs.seed = 14;
    std::vector<float> c = randomTensor(m * n, cs);
    for (const float *cp : {static_cast<const float *>(nullptr),
                            static_cast<const float *>(c.data())}) {
      std::vector<float> model = epilogueScaledKernelModel(o.qa, o.qb, cp);
      ReferenceGemmOptions opt;
      opt.promotionInterval = 32;
      auto ref =
          referenceGemm(o.qa, Layout::KMajor, o.qb, Layout::KMajor, cp, opt);
      ASSERT_TRUE(ref.isOk()) << ref.message();
      expectBitIdentical(model, *ref, "epilogue-scaled vs referenceGemm");
    }
  }
}

} // namespace
