//===- FormatsTest.cpp - Our conversions vs NVIDIA's cuda_fp8.h host code -===//
//
// The reference is NVIDIA's own host code path of cuda_fp8.h / cuda_bf16.h /
// cuda_fp16.h (CUDA 13), compiled here by the host compiler. Every bf16 and
// binary16 bit pattern and every FP8/UE8M0 code is checked exhaustively;
// float inputs are checked on more than 10^7 bit patterns: NaNs, infinities,
// float subnormals, every rounding boundary of every target format (the
// midpoints and their float neighbours), uniform random bit patterns and
// random values spread over the FP8 exponent range.
//
//===----------------------------------------------------------------------===//

#include "numerics/Formats.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

using namespace fp8;
using namespace fp8::numerics;

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

uint32_t toBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

/// Adds v, -v and their float neighbours.
void addWithNeighbours(std::vector<float> &out, float v) {
  for (float s : {v, -v}) {
    out.push_back(s);
    out.push_back(std::nextafter(s, std::numeric_limits<float>::infinity()));
    out.push_back(std::nextafter(s, -std::numeric_limits<float>::infinity()));
  }
}

/// Every rounding boundary of a format whose positive finite values are
/// `grid` (ascending, starting at 0): each value, each midpoint and the
/// overflow midpoint beyond the largest value, with float neighbours.
void addBoundaries(std::vector<float> &out, const std::vector<float> &grid,
                   float nextAfterMax) {
  for (size_t i = 0; i < grid.size(); ++i) {
    addWithNeighbours(out, grid[i]);
    float next = i + 1 < grid.size() ? grid[i + 1] : nextAfterMax;
    addWithNeighbours(out, grid[i] + (next - grid[i]) / 2);
  }
  addWithNeighbours(out, nextAfterMax);
}

std::vector<float> positiveFP8Grid(DType fmt) {
  std::vector<float> g;
  for (int c = 0; c <= fp8Format(fmt).maxCode; ++c)
    g.push_back(fp8ToFloat(uint8_t(c), fmt));
  return g;
}

/// The float sample set shared by every float-input test (built once).
const std::vector<float> &floatSamples() {
  static const std::vector<float> samples = [] {
    std::vector<float> s;
    s.reserve(10'400'000);
    const float inf = std::numeric_limits<float>::infinity();
    // Specials: NaNs of both signs with several payloads (quiet and
    // signalling), infinities, zeros, float extremes and subnormals.
    for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA00000u,
                         0x7F812345u, 0x7FC00001u}) {
      s.push_back(fromBits(nan));
      s.push_back(fromBits(nan | 0x80000000u));
    }
    for (float v :
         {inf, std::numeric_limits<float>::max(),
          std::numeric_limits<float>::min(),
          std::numeric_limits<float>::denorm_min(), 0.0f, fromBits(0x007FFFFFu),
          fromBits(0x00400000u), fromBits(0x00400001u), fromBits(0x003FFFFFu)})
      addWithNeighbours(s, v);
    // FP8 grids, including the subnormal range, the zero/min-subnormal
    // midpoint and the overflow midpoints (max + ulp/2: 464 and 61440).
    addBoundaries(s, positiveFP8Grid(DType::E4M3FN), 480.0f);
    addBoundaries(s, positiveFP8Grid(DType::E5M2), 65536.0f);
    // binary16 grid (all 31744 finite values) and the bf16 grid around 1.
    std::vector<float> f16;
    for (uint32_t h = 0; h < 0x7C00; ++h)
      f16.push_back(f16ToFloat(uint16_t(h)));
    addBoundaries(s, f16, 65536.0f);
    std::vector<float> bf;
    for (uint32_t b = 0x3000; b < 0x4800; ++b)
      bf.push_back(bf16ToFloat(uint16_t(b)));
    for (size_t i = 0; i + 1 < bf.size(); ++i)
      addWithNeighbours(s, bf[i] + (bf[i + 1] - bf[i]) / 2);
    // UE8M0 boundaries: every power of two of the float range.
    for (int e = -149; e <= 127; ++e)
      addWithNeighbours(s, std::ldexp(1.0f, e));
    // Uniform random bit patterns (NaNs, infinities and subnormals included
    // in proportion).
    std::mt19937_64 rng(20260101);
    for (int i = 0; i < 5'000'000; ++i)
      s.push_back(fromBits(uint32_t(rng())));
    // Random values spread over and around the FP8 exponent ranges.
    std::uniform_int_distribution<int> exp(-30, 20);
    for (int i = 0; i < 5'000'000; ++i) {
      uint32_t mant = uint32_t(rng()) & 0x007FFFFFu;
      uint32_t sign = uint32_t(rng() & 1u) << 31;
      s.push_back(fromBits(sign | (uint32_t(exp(rng) + 127) << 23) | mant));
    }
    return s;
  }();
  return samples;
}

__nv_fp8_interpretation_t nvInterp(DType fmt) {
  return fmt == DType::E5M2 ? __NV_E5M2 : __NV_E4M3;
}

__nv_saturation_t nvSat(Saturation s) {
  return s == Saturation::SatFinite ? __NV_SATFINITE : __NV_NOSAT;
}

std::string hexBits(float f) {
  std::ostringstream os;
  os << "0x" << std::hex << toBits(f) << " (" << f << ")";
  return os.str();
}

struct FP8Variant {
  DType fmt;
  Saturation sat;
};

std::string variantName(const testing::TestParamInfo<FP8Variant> &info) {
  return std::string(info.param.fmt == DType::E5M2 ? "E5M2" : "E4M3FN") +
         (info.param.sat == Saturation::SatFinite ? "_SatFinite" : "_NoSat");
}

class FP8EncodeVsCuda : public testing::TestWithParam<FP8Variant> {};

} // namespace

TEST(FloatSamples, CoverTheClaimedCases) {
  const auto &s = floatSamples();
  EXPECT_GE(s.size(), 10'000'000u);
  size_t nan = 0, inf = 0, sub = 0, zero = 0;
  for (float f : s) {
    nan += std::isnan(f);
    inf += std::isinf(f);
    sub += std::fpclassify(f) == FP_SUBNORMAL;
    zero += f == 0.0f;
  }
  EXPECT_GT(nan, 1000u);
  EXPECT_GE(inf, 2u);
  EXPECT_GT(sub, 1000u);
  EXPECT_GE(zero, 2u);
}

TEST_P(FP8EncodeVsCuda, FloatSamples) {
  auto [fmt, sat] = GetParam();
  size_t bad = 0;
  for (float f : floatSamples()) {
    uint8_t ours = floatToFP8(f, fmt, sat);
    uint8_t nv = __nv_cvt_float_to_fp8(f, nvSat(sat), nvInterp(fmt));
    if (ours != nv && ++bad <= 5)
      ADD_FAILURE() << "input " << hexBits(f) << ": ours 0x" << std::hex
                    << int(ours) << ", cuda_fp8.h 0x" << int(nv);
  }
  EXPECT_EQ(bad, 0u);
}

TEST_P(FP8EncodeVsCuda, AllBF16Patterns) {
  auto [fmt, sat] = GetParam();
  size_t bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    __nv_bfloat16_raw raw;
    raw.x = uint16_t(b);
    uint8_t ours = bf16ToFP8(uint16_t(b), fmt, sat);
    uint8_t nv = __nv_cvt_bfloat16raw_to_fp8(raw, nvSat(sat), nvInterp(fmt));
    if (ours != nv && ++bad <= 5)
      ADD_FAILURE() << "bf16 0x" << std::hex << b << ": ours 0x" << int(ours)
                    << ", cuda_fp8.h 0x" << int(nv);
  }
  EXPECT_EQ(bad, 0u);
}

TEST_P(FP8EncodeVsCuda, AllF16Patterns) {
  auto [fmt, sat] = GetParam();
  size_t bad = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    __half_raw raw;
    raw.x = uint16_t(h);
    uint8_t ours = f16ToFP8(uint16_t(h), fmt, sat);
    uint8_t nv = __nv_cvt_halfraw_to_fp8(raw, nvSat(sat), nvInterp(fmt));
    if (ours != nv && ++bad <= 5)
      ADD_FAILURE() << "f16 0x" << std::hex << h << ": ours 0x" << int(ours)
                    << ", cuda_fp8.h 0x" << int(nv);
  }
  EXPECT_EQ(bad, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    AllVariants, FP8EncodeVsCuda,
    testing::Values(FP8Variant{DType::E4M3FN, Saturation::SatFinite},
                    FP8Variant{DType::E4M3FN, Saturation::NoSat},
                    FP8Variant{DType::E5M2, Saturation::SatFinite},
                    FP8Variant{DType::E5M2, Saturation::NoSat}),
    variantName);

TEST(FP8DecodeVsCuda, AllCodes) {
  for (DType fmt : {DType::E4M3FN, DType::E5M2}) {
    for (int c = 0; c < 256; ++c) {
      __half_raw nv = __nv_cvt_fp8_to_halfraw(uint8_t(c), nvInterp(fmt));
      EXPECT_EQ(fp8ToF16(uint8_t(c), fmt), nv.x)
          << toString(fmt) << " code " << c;
      float nvf = __half2float(__half(nv));
      float ours = fp8ToFloat(uint8_t(c), fmt);
      if (std::isnan(nvf))
        EXPECT_TRUE(std::isnan(ours) && isFP8NaN(uint8_t(c), fmt)) << c;
      else
        EXPECT_EQ(toBits(ours), toBits(nvf)) << toString(fmt) << " code " << c;
    }
  }
}

TEST(FP8Decode, EncodeInvertsDecodeOnEveryFiniteCode) {
  for (DType fmt : {DType::E4M3FN, DType::E5M2})
    for (int c = 0; c < 256; ++c) {
      float v = fp8ToFloat(uint8_t(c), fmt);
      if (!std::isnan(v))
        EXPECT_EQ(floatToFP8(v, fmt, Saturation::NoSat), c)
            << toString(fmt) << " code " << c;
    }
}

TEST(FP8Known, HandPickedValues) {
  // Independent of NVIDIA: values worked out by hand from the formats.
  EXPECT_EQ(floatToFP8(448.0f, DType::E4M3FN), 0x7E);
  EXPECT_EQ(floatToFP8(464.0f, DType::E4M3FN, Saturation::NoSat), 0x7E);
  EXPECT_EQ(floatToFP8(464.5f, DType::E4M3FN, Saturation::NoSat), 0x7F);
  EXPECT_EQ(floatToFP8(1e9f, DType::E4M3FN, Saturation::SatFinite), 0x7E);
  EXPECT_EQ(floatToFP8(-1e9f, DType::E4M3FN, Saturation::SatFinite), 0xFE);
  EXPECT_EQ(floatToFP8(0x1p-9f, DType::E4M3FN), 0x01);
  EXPECT_EQ(floatToFP8(0x1p-10f, DType::E4M3FN), 0x00); // tie to even (0)
  EXPECT_EQ(floatToFP8(-0x1p-11f, DType::E4M3FN), 0x80);
  EXPECT_EQ(floatToFP8(1.0f, DType::E4M3FN), 0x38);
  EXPECT_EQ(floatToFP8(1.0625f, DType::E4M3FN), 0x38); // tie, even mantissa
  EXPECT_EQ(floatToFP8(1.1875f, DType::E4M3FN), 0x3A); // tie, odd -> up
  EXPECT_EQ(floatToFP8(57344.0f, DType::E5M2), 0x7B);
  EXPECT_EQ(floatToFP8(61440.0f, DType::E5M2, Saturation::NoSat), 0x7C);
  EXPECT_EQ(floatToFP8(61439.0f, DType::E5M2, Saturation::NoSat), 0x7B);
  EXPECT_EQ(floatToFP8(-INFINITY, DType::E5M2, Saturation::NoSat), 0xFC);
  EXPECT_EQ(floatToFP8(NAN, DType::E5M2), 0x7F);
  EXPECT_EQ(floatToFP8(-NAN, DType::E4M3FN), 0x7F);
  EXPECT_EQ(fp8ToFloat(0x7E, DType::E4M3FN), 448.0f);
  EXPECT_EQ(fp8ToFloat(0x01, DType::E5M2), 0x1p-16f);
  EXPECT_TRUE(std::isinf(fp8ToFloat(0xFC, DType::E5M2)));
  EXPECT_EQ(fp8Ulp(448.0f, DType::E4M3FN), 32.0f);
  EXPECT_EQ(fp8Ulp(1.0f, DType::E4M3FN), 0.125f);
  EXPECT_EQ(fp8Ulp(0.001f, DType::E4M3FN), 0x1p-9f);
  EXPECT_EQ(fp8Ulp(1.0f, DType::E5M2), 0.25f);
}

//===----------------------------------------------------------------------===//
// UE8M0
//===----------------------------------------------------------------------===//

namespace {
struct UE8M0Variant {
  PowerRounding rounding;
  Saturation sat;
};

std::string ue8m0Name(const testing::TestParamInfo<UE8M0Variant> &info) {
  return std::string(info.param.rounding == PowerRounding::Up ? "RoundUp"
                                                              : "RoundZero") +
         (info.param.sat == Saturation::SatFinite ? "_SatFinite" : "_NoSat");
}

cudaRoundMode nvRound(PowerRounding r) {
  return r == PowerRounding::Up ? cudaRoundPosInf : cudaRoundZero;
}

class UE8M0VsCuda : public testing::TestWithParam<UE8M0Variant> {};
} // namespace

TEST_P(UE8M0VsCuda, FloatSamples) {
  auto [r, sat] = GetParam();
  size_t bad = 0;
  for (float f : floatSamples()) {
    uint8_t ours = floatToUE8M0(f, r, sat);
    uint8_t nv = __nv_cvt_float_to_e8m0(f, nvSat(sat), nvRound(r));
    if (ours != nv && ++bad <= 5)
      ADD_FAILURE() << "input " << hexBits(f) << ": ours 0x" << std::hex
                    << int(ours) << ", cuda_fp8.h 0x" << int(nv);
  }
  EXPECT_EQ(bad, 0u);
}

TEST_P(UE8M0VsCuda, AllBF16Patterns) {
  auto [r, sat] = GetParam();
  size_t bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    __nv_bfloat16_raw raw;
    raw.x = uint16_t(b);
    uint8_t ours = bf16ToUE8M0(uint16_t(b), r, sat);
    uint8_t nv = __nv_cvt_bfloat16raw_to_e8m0(raw, nvSat(sat), nvRound(r));
    if (ours != nv && ++bad <= 5)
      ADD_FAILURE() << "bf16 0x" << std::hex << b << ": ours 0x" << int(ours)
                    << ", cuda_fp8.h 0x" << int(nv);
  }
  EXPECT_EQ(bad, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    AllVariants, UE8M0VsCuda,
    testing::Values(UE8M0Variant{PowerRounding::Up, Saturation::SatFinite},
                    UE8M0Variant{PowerRounding::Up, Saturation::NoSat},
                    UE8M0Variant{PowerRounding::TowardZero,
                                 Saturation::SatFinite},
                    UE8M0Variant{PowerRounding::TowardZero, Saturation::NoSat}),
    ue8m0Name);

TEST(UE8M0DecodeVsCuda, AllCodes) {
  for (int c = 0; c < 256; ++c) {
    __nv_bfloat16_raw nv = __nv_cvt_e8m0_to_bf16raw(uint8_t(c));
    EXPECT_EQ(ue8m0ToBF16(uint8_t(c)), nv.x) << "code " << c;
    float ours = ue8m0ToFloat(uint8_t(c));
    if (c == 0xFF)
      EXPECT_TRUE(std::isnan(ours));
    else
      EXPECT_EQ(ours, std::ldexp(1.0f, c - 127)) << "code " << c;
  }
}

TEST(UE8M0Known, RoundUpIsTheScaleRule) {
  EXPECT_EQ(floatToUE8M0(1.0f, PowerRounding::Up), 127);
  EXPECT_EQ(floatToUE8M0(1.0000001f, PowerRounding::Up), 128);
  EXPECT_EQ(floatToUE8M0(1.9f, PowerRounding::TowardZero), 127);
  EXPECT_EQ(floatToUE8M0(-3.0f, PowerRounding::Up), 129);
  EXPECT_EQ(floatToUE8M0(0.0f, PowerRounding::Up), 0);
  EXPECT_EQ(floatToUE8M0(INFINITY, PowerRounding::Up, Saturation::NoSat), 0xFF);
  EXPECT_EQ(floatToUE8M0(INFINITY, PowerRounding::Up), 0xFE);
}

//===----------------------------------------------------------------------===//
// BF16 and FP16
//===----------------------------------------------------------------------===//

TEST(BF16VsCuda, FloatSamples) {
  size_t bad = 0;
  for (float f : floatSamples()) {
    __nv_bfloat16_raw nv = __float2bfloat16(f);
    uint16_t ours = floatToBF16(f);
    if (ours != nv.x && ++bad <= 5)
      ADD_FAILURE() << "input " << hexBits(f) << ": ours 0x" << std::hex << ours
                    << ", cuda_bf16.h 0x" << nv.x;
  }
  EXPECT_EQ(bad, 0u);
}

TEST(BF16VsCuda, AllPatternsWiden) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    __nv_bfloat16_raw raw;
    raw.x = uint16_t(b);
    float nv = __bfloat162float(__nv_bfloat16(raw));
    float ours = bf16ToFloat(uint16_t(b));
    ASSERT_EQ(toBits(ours), toBits(nv)) << std::hex << b;
  }
}

TEST(F16VsCuda, FloatSamples) {
  size_t bad = 0;
  for (float f : floatSamples()) {
    __half_raw nv = __float2half(f);
    uint16_t ours = floatToF16(f);
    if (ours != nv.x && ++bad <= 5)
      ADD_FAILURE() << "input " << hexBits(f) << ": ours 0x" << std::hex << ours
                    << ", cuda_fp16.h 0x" << nv.x;
  }
  EXPECT_EQ(bad, 0u);
}

TEST(F16VsCuda, AllPatternsWiden) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    __half_raw raw;
    raw.x = uint16_t(h);
    float nv = __half2float(__half(raw));
    float ours = f16ToFloat(uint16_t(h));
    if (std::isnan(nv))
      ASSERT_TRUE(std::isnan(ours)) << std::hex << h;
    else
      ASSERT_EQ(toBits(ours), toBits(nv)) << std::hex << h;
  }
}
