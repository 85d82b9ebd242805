//===- Sm100ScaleLayoutTest.cpp - Packed UE8M0 scales vs the CPU oracle ---===//
//
// The scale layout the sm_100a kernels read (codegen/kernels/
// sm100_scale_layout.cuh, the function their TMA coordinates are computed
// with) against the oracle's quantization (numerics/): every UE8M0
// byte of an MX-quantized tensor lands where the layout function says, the
// DeepSeek recipe's power-of-two scales are replicated to every 32-element K
// block and every row of their block, and nothing else is written.
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm100ScaleLayout.h"
#include "numerics/Formats.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace fp8;
using namespace fp8::numerics;

namespace {

QuantizedTensor quantizeRandom(int64_t rows, int64_t cols, Granularity g,
                               uint64_t seed, DType format = DType::E4M3FN) {
  RandomSpec spec;
  spec.dist = Distribution::Outliers; // scales spread over many binades
  spec.seed = seed;
  std::vector<float> x = randomTensor(rows * cols, spec);
  QuantRecipe r;
  r.format = format;
  r.granularity = g;
  auto q = quantize(x.data(), rows, cols, r);
  EXPECT_TRUE(q.isOk()) << q.message();
  return *q;
}

Expected<std::vector<uint8_t>> pack(const QuantizedTensor &q,
                                    std::string_view name) {
  return packSm100Scales({q.scales.data(), q.rows, q.cols, q.granularity},
                         name);
}

TEST(Sm100ScaleLayout, IsABijectionOntoWholeAtoms) {
  // Ragged in both directions: 300 rows (3 row tiles, the last partial),
  // K = 2080 (65 K blocks: 17 k-tiles, the last holding one block).
  const int64_t rows = 300, k = 2080;
  const int64_t kBlocks = (k + 31) / 32;
  const int64_t bytes = sm100ScaleBytes(rows, k);
  EXPECT_EQ(bytes, 3 * 17 * 512);
  std::set<int64_t> seen;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < kBlocks; ++kb) {
      const int64_t o = sm100ScaleOffset(rows, r, kb);
      ASSERT_GE(o, 0);
      ASSERT_LT(o, bytes);
      ASSERT_TRUE(seen.insert(o).second) << r << ", " << kb;
      // The atom the kernel's TMA load of (row tile, k-tile) fetches, at
      // atom_index * 32 lines of 16 bytes.
      EXPECT_EQ(o / 512, fp8k::sf::atom_index(rows, r / 128, kb / 4));
      // Inside: line r % 32 (tensor-memory lane), word r % 128 / 32 (column),
      // byte kb % 4 (the MMA's scale-factor ID).
      EXPECT_EQ(o % 512 / 16, r % 32);
      EXPECT_EQ(o % 16 / 4, r % 128 / 32);
      EXPECT_EQ(o % 4, kb % 4);
    }
}

TEST(Sm100ScaleLayout, MXScalesLandWhereTheLayoutSays) {
  for (auto [rows, k, format] :
       {std::tuple{300, 2080, DType::E4M3FN}, std::tuple{128, 128, DType::E5M2},
        std::tuple{7, 64, DType::E4M3FN}}) {
    QuantizedTensor q = quantizeRandom(rows, k, Granularity::mx(), 7, format);
    ASSERT_EQ(q.scaleCodes.size(), size_t(q.scaleRows * q.scaleCols));
    auto packed = pack(q, "A");
    ASSERT_TRUE(packed.isOk()) << packed.message();
    ASSERT_EQ(int64_t(packed->size()), sm100ScaleBytes(rows, k));
    std::vector<bool> written(packed->size(), false);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t kb = 0; kb < q.scaleCols; ++kb) {
        const int64_t o = sm100ScaleOffset(rows, r, kb);
        ASSERT_EQ((*packed)[o], q.scaleCodes[r * q.scaleCols + kb])
            << "row " << r << ", K block " << kb;
        EXPECT_EQ(sm100ScaleAt(*packed, rows, r, kb),
                  q.scales[r * q.scaleCols + kb]);
        written[o] = true;
      }
    for (size_t i = 0; i < packed->size(); ++i)
      if (!written[i])
        ASSERT_EQ((*packed)[i], 127) << "padding byte " << i << " (1.0)";
  }
}

TEST(Sm100ScaleLayout, DeepSeekPowerOfTwoScalesAreReplicated) {
  const int64_t m = 200, n = 300, k = 384;
  for (ScaleFormat f : {ScaleFormat::F32Pow2, ScaleFormat::UE8M0}) {
    QuantizedTensor a = quantizeRandom(m, k, Granularity::block(1, 128, f), 3);
    QuantizedTensor b =
        quantizeRandom(n, k, Granularity::block(128, 128, f), 4);
    auto pa = pack(a, "A");
    auto pb = pack(b, "B");
    ASSERT_TRUE(pa.isOk()) << pa.message();
    ASSERT_TRUE(pb.isOk()) << pb.message();
    for (int64_t kb = 0; kb < k / 32; ++kb) {
      for (int64_t r = 0; r < m; ++r) {
        // One 1x128 scale covers K blocks 4c .. 4c + 3 of its row.
        const float s = a.scales[r * a.scaleCols + kb / 4];
        EXPECT_EQ((*pa)[sm100ScaleOffset(m, r, kb)], *ue8m0OfPowerOfTwo(s));
        EXPECT_EQ(sm100ScaleAt(*pa, m, r, kb), s);
      }
      for (int64_t r = 0; r < n; ++r) {
        // One 128x128 scale covers 128 rows x 4 K blocks.
        const float s = b.scales[(r / 128) * b.scaleCols + kb / 4];
        EXPECT_EQ(sm100ScaleAt(*pb, n, r, kb), s) << r << ", " << kb;
      }
    }
    // Dequantizing with the replicated scales gives the same values as the
    // original recipe, bit for bit (what makes the conversion exact).
    for (int64_t r = 0; r < n; r += 37)
      for (int64_t c = 0; c < k; c += 29)
        EXPECT_EQ(b.valueAt(r, c), fp8ToFloat(b.codes[r * k + c], b.format) *
                                       sm100ScaleAt(*pb, n, r, c / 32));
  }
}

TEST(Sm100ScaleLayout, RejectsWhatUE8M0CannotHold) {
  QuantizedTensor a =
      quantizeRandom(64, 256, Granularity::block(1, 128, ScaleFormat::F32), 5);
  auto packed = pack(a, "A");
  ASSERT_FALSE(packed.isOk());
  EXPECT_NE(packed.message().find("expected power-of-two scales for A"),
            std::string::npos)
      << packed.message();
  EXPECT_NE(packed.message().find("f32_pow2 or ue8m0"), std::string::npos);
  std::vector<float> ones(4, 1.0f);
  auto odd =
      packSm100Scales({ones.data(), 1, 192, Granularity::block(1, 48)}, "B");
  ASSERT_FALSE(odd.isOk());
  EXPECT_NE(odd.message().find("multiple of 32"), std::string::npos)
      << odd.message();

  EXPECT_EQ(ue8m0OfPowerOfTwo(1.0f), uint8_t(127));
  EXPECT_EQ(ue8m0OfPowerOfTwo(std::ldexp(1.0f, 127)), uint8_t(254));
  EXPECT_EQ(ue8m0OfPowerOfTwo(std::ldexp(1.0f, -127)), uint8_t(0));
  EXPECT_EQ(ue8m0OfPowerOfTwo(std::nanf("")), uint8_t(0xFF));
  EXPECT_FALSE(ue8m0OfPowerOfTwo(0.75f));
  EXPECT_FALSE(ue8m0OfPowerOfTwo(-2.0f));
  EXPECT_FALSE(ue8m0OfPowerOfTwo(0.0f));
  EXPECT_FALSE(ue8m0OfPowerOfTwo(INFINITY));
  EXPECT_FALSE(ue8m0OfPowerOfTwo(std::ldexp(1.0f, -130)));
}

} // namespace
