//===- GroupedGemmOnHostTest.cpp - fp8::groupedGemm on host memory --------===//
//
// fp8::groupedGemmOnHost (runtime/HostOracle.h), the CPU path of
// fp8kit.grouped_gemm, in each of the three forms: every group's rows are
// bit for bit fp8::gemmOnHost of that group alone (its rows of A, or its K
// slab of A and B, its B matrix and its scales at their group stride), on
// ragged shapes with an empty group; D's rows outside every group keep the
// poison written before the call, as the kernel leaves them; group values
// the kernel would clamp are refused, naming the value.
//
//===----------------------------------------------------------------------===//

#include "runtime/HostOracle.h"

#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace fp8;

namespace {

constexpr uint16_t kPoison = 0x7fc1; // a bf16 NaN no result can be

/// Codes and f32 scales of a [rows, cols] matrix of random values.
struct Quantized {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
};

Quantized quantized(const Granularity &g, int64_t rows, int64_t cols,
                    uint64_t seed) {
  numerics::Rng rng(seed);
  std::vector<float> x(size_t(rows * cols));
  for (float &v : x)
    v = float(rng.normal());
  Quantized q;
  q.codes.resize(x.size());
  q.scales.resize(size_t(g.scaleRows(rows) * g.scaleCols(cols)));
  QuantRecipe r;
  r.granularity = g;
  QuantizeTensors t;
  t.x = x.data();
  t.xType = DType::F32;
  t.codes = q.codes.data();
  t.scales = q.scales.data();
  EXPECT_TRUE(quantizeOnHost(r, rows, cols, t).isOk());
  return q;
}

/// The tensors of one call (host pointers).
GroupedGemmTensors tensors(const void *a, const void *scaleA, const void *b,
                           const void *scaleB, void *d, const int32_t *groups) {
  GroupedGemmTensors t;
  t.a = a;
  t.scaleA = scaleA;
  t.b = b;
  t.scaleB = scaleB;
  t.d = d;
  t.groups = groups;
  return t;
}

GemmRecipe deepseek() {
  GemmRecipe r;
  r.a.granularity = Granularity::block(1, 128);
  r.b.granularity = Granularity::block(128, 128);
  return r;
}

/// Rows [begin, end) of two [*, n] bf16 arrays are equal bit for bit.
void expectRows(const std::vector<uint16_t> &got,
                const std::vector<uint16_t> &want, int64_t n, int64_t begin,
                int64_t end, const char *what) {
  for (int64_t i = begin; i < end; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(got[size_t(i * n + j)], want[size_t(i * n + j)])
          << what << ": D[" << i << ", " << j << "]";
}

TEST(GroupedGemmOnHost, ContiguousGroupsAreEachGroupsGemm) {
  const GemmRecipe r = deepseek();
  GroupedGemmShape s;
  s.kind = GemmKind::GroupedContiguous;
  s.groups = 3;
  s.m = 300;
  s.n = 200;
  s.k = 384;
  // An empty group, and rows past the last offset that no group holds.
  const std::vector<int32_t> offsets = {0, 101, 101, 257};
  const Quantized a = quantized(r.a.granularity, s.m, s.k, 1);
  std::vector<Quantized> b;
  std::vector<uint8_t> bCodes;
  std::vector<float> bScales;
  for (int64_t g = 0; g < s.groups; ++g) {
    b.push_back(quantized(r.b.granularity, s.n, s.k, 10 + uint64_t(g)));
    bCodes.insert(bCodes.end(), b.back().codes.begin(), b.back().codes.end());
    bScales.insert(bScales.end(), b.back().scales.begin(),
                   b.back().scales.end());
  }
  std::vector<uint16_t> d(size_t(s.m * s.n), kPoison);
  GroupedGemmTensors t = tensors(a.codes.data(), a.scales.data(), bCodes.data(),
                                 bScales.data(), d.data(), offsets.data());
  Status st = groupedGemmOnHost(r, s, t);
  ASSERT_TRUE(st.isOk()) << st.message();

  std::vector<uint16_t> want(d.size(), kPoison);
  const int64_t sak = r.a.granularity.scaleCols(s.k);
  for (int64_t g = 0; g < s.groups; ++g) {
    const int64_t m = offsets[size_t(g + 1)] - offsets[size_t(g)];
    if (m == 0)
      continue;
    GemmTensors one;
    one.a = a.codes.data() + offsets[size_t(g)] * s.k;
    one.scaleA = a.scales.data() + offsets[size_t(g)] * sak;
    one.b = b[size_t(g)].codes.data();
    one.scaleB = b[size_t(g)].scales.data();
    one.d = want.data() + offsets[size_t(g)] * s.n;
    Status w = gemmOnHost(r, m, s.n, s.k, one);
    ASSERT_TRUE(w.isOk()) << w.message();
  }
  expectRows(d, want, s.n, 0, s.m, "contiguous");
}

TEST(GroupedGemmOnHost, MaskedGroupsWriteTheirValidRowsOnly) {
  const GemmRecipe r = deepseek();
  GroupedGemmShape s;
  s.kind = GemmKind::GroupedMasked;
  s.groups = 3;
  s.m = 72; // max_m
  s.n = 136;
  s.k = 256;
  const std::vector<int32_t> valid = {7, 0, 72};
  const int64_t sam =
      r.a.granularity.scaleRows(s.m) * r.a.granularity.scaleCols(s.k);
  const int64_t sbn =
      r.b.granularity.scaleRows(s.n) * r.b.granularity.scaleCols(s.k);
  std::vector<uint8_t> aCodes, bCodes;
  std::vector<float> aScales, bScales;
  for (int64_t g = 0; g < s.groups; ++g) {
    const Quantized qa = quantized(r.a.granularity, s.m, s.k, 20 + uint64_t(g));
    const Quantized qb = quantized(r.b.granularity, s.n, s.k, 30 + uint64_t(g));
    aCodes.insert(aCodes.end(), qa.codes.begin(), qa.codes.end());
    aScales.insert(aScales.end(), qa.scales.begin(), qa.scales.end());
    bCodes.insert(bCodes.end(), qb.codes.begin(), qb.codes.end());
    bScales.insert(bScales.end(), qb.scales.begin(), qb.scales.end());
  }
  std::vector<uint16_t> d(size_t(s.groups * s.m * s.n), kPoison);
  GroupedGemmTensors t = tensors(aCodes.data(), aScales.data(), bCodes.data(),
                                 bScales.data(), d.data(), valid.data());
  Status st = groupedGemmOnHost(r, s, t);
  ASSERT_TRUE(st.isOk()) << st.message();

  std::vector<uint16_t> want(d.size(), kPoison);
  for (int64_t g = 0; g < s.groups; ++g) {
    if (valid[size_t(g)] == 0)
      continue;
    GemmTensors one;
    one.a = aCodes.data() + g * s.m * s.k;
    one.scaleA = aScales.data() + g * sam;
    one.b = bCodes.data() + g * s.n * s.k;
    one.scaleB = bScales.data() + g * sbn;
    one.d = want.data() + g * s.m * s.n;
    Status w = gemmOnHost(r, valid[size_t(g)], s.n, s.k, one);
    ASSERT_TRUE(w.isOk()) << w.message();
  }
  expectRows(d, want, s.n, 0, s.groups * s.m, "masked");
}

TEST(GroupedGemmOnHost, AlongKEachGroupIsItsSlabAccumulatedIntoC) {
  // Weight gradients: f32 results accumulated into C, one [M, N] a group;
  // an empty group's D is C.
  GemmRecipe r;
  r.a.granularity = Granularity::block(1, 128);
  r.b.granularity = Granularity::block(1, 128);
  r.out = DType::F32;
  r.accumulate = true;
  GroupedGemmShape s;
  s.kind = GemmKind::GroupedK;
  s.groups = 3;
  s.m = 40;
  s.n = 72;
  s.k = 512;
  const std::vector<int32_t> offsets = {0, 128, 128, 512};
  const Quantized a = quantized(r.a.granularity, s.m, s.k, 41);
  const Quantized b = quantized(r.b.granularity, s.n, s.k, 42);
  numerics::Rng rng(43);
  std::vector<float> c(size_t(s.groups * s.m * s.n));
  for (float &v : c)
    v = float(rng.normal());
  std::vector<float> d(c.size(), -1.0f);
  GroupedGemmTensors t =
      tensors(a.codes.data(), a.scales.data(), b.codes.data(), b.scales.data(),
              d.data(), offsets.data());
  t.c = c.data();
  Status st = groupedGemmOnHost(r, s, t);
  ASSERT_TRUE(st.isOk()) << st.message();

  const int64_t blocks = s.k / 128;
  for (int64_t g = 0; g < s.groups; ++g) {
    const int64_t k0 = offsets[size_t(g)], k1 = offsets[size_t(g + 1)];
    const float *cg = c.data() + g * s.m * s.n;
    const float *dg = d.data() + g * s.m * s.n;
    if (k1 == k0) {
      EXPECT_EQ(0, std::memcmp(dg, cg, size_t(s.m * s.n) * 4)) << "group " << g;
      continue;
    }
    std::vector<float> want(size_t(s.m * s.n));
    GemmTensors one;
    one.a = a.codes.data() + k0;
    one.lda = s.k;
    one.scaleA = a.scales.data() + k0 / 128;
    one.scaleALdOuter = blocks;
    one.scaleALdK = 1;
    one.b = b.codes.data() + k0;
    one.ldb = s.k;
    one.scaleB = b.scales.data() + k0 / 128;
    one.scaleBLdOuter = blocks;
    one.scaleBLdK = 1;
    one.c = cg;
    one.d = want.data();
    Status w = gemmOnHost(r, s.m, s.n, k1 - k0, one);
    ASSERT_TRUE(w.isOk()) << w.message();
    EXPECT_EQ(0, std::memcmp(dg, want.data(), want.size() * 4))
        << "group " << g;
  }
}

TEST(GroupedGemmOnHost, RefusesGroupValuesTheKernelWouldClamp) {
  const GemmRecipe r = deepseek();
  GroupedGemmShape s;
  s.kind = GemmKind::GroupedContiguous;
  s.groups = 2;
  s.m = 64;
  s.n = 64;
  s.k = 128;
  const Quantized a = quantized(r.a.granularity, s.m, s.k, 51);
  const Quantized b0 = quantized(r.b.granularity, s.n, s.k, 52);
  std::vector<uint8_t> bCodes(b0.codes);
  bCodes.insert(bCodes.end(), b0.codes.begin(), b0.codes.end());
  std::vector<float> bScales(b0.scales);
  bScales.insert(bScales.end(), b0.scales.begin(), b0.scales.end());
  std::vector<uint16_t> d(size_t(s.m * s.n), kPoison);
  const std::vector<int32_t> past = {0, 40, 65};
  GroupedGemmTensors t = tensors(a.codes.data(), a.scales.data(), bCodes.data(),
                                 bScales.data(), d.data(), past.data());
  Status st = groupedGemmOnHost(r, s, t);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("expected offsets[2] in [40, 64]"),
            std::string::npos)
      << st.message();
  for (uint16_t v : d)
    ASSERT_EQ(v, kPoison) << "a refused call wrote D";
}

} // namespace
