//===- Formats.cpp - Bit-exact FP8, UE8M0, BF16 and FP16 conversions ------===//
//
// Every narrowing conversion works on the float's bit pattern with integer
// arithmetic: the significand (with its hidden bit) is shifted right by the
// number of bits the target cannot hold, and the shifted-out bits decide the
// round-to-nearest-even increment. Subnormal targets simply shift further.
// Adding the rounded significand to the (exponent - 1) field lets a carry out
// of the mantissa bump the exponent for free.
//
//===----------------------------------------------------------------------===//

#include "numerics/Formats.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace fp8::numerics {

namespace {

uint32_t floatBits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

float bitsToFloat(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

constexpr FP8Format kE4M3{DType::E4M3FN,    4,       3,       7,
                          448.0f,           0x1p-6f, 0x1p-9f,
                          /*hasInf=*/false, 0x7E,    0x7F};
constexpr FP8Format kE5M2{DType::E5M2,     5,        2,        15,
                          57344.0f,        0x1p-14f, 0x1p-16f,
                          /*hasInf=*/true, 0x7B,     0x7F};

/// Rounds the magnitude bits `a` (sign cleared, finite, not NaN) to the
/// target format with `mant` stored mantissa bits and exponent bias `bias`.
/// Returns the unsigned code; it may exceed the largest finite code, which
/// the caller treats as overflow.
uint32_t roundMagnitude(uint32_t a, int mant, int bias) {
  if (a < 0x00800000u) // float zero or subnormal: far below any FP8 subnormal
    return 0;
  int e = int(a >> 23) - 127;
  uint32_t sig = (a & 0x007FFFFFu) | 0x00800000u;
  int eb = e + bias; // biased target exponent when normal
  int shift = 23 - mant + (eb < 1 ? 1 - eb : 0);
  if (shift > 24) // below half the smallest subnormal (sig < 2^24)
    return 0;
  uint32_t q = sig >> shift;
  uint32_t rem = sig & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;
  // Normal: ((eb - 1) << mant) + (1.m as integer) == (eb << mant) | m, and a
  // rounding carry into bit `mant + 1` moves to the next binade. Subnormal:
  // the code is the shifted significand itself.
  return (uint32_t(std::max(eb, 1) - 1) << mant) + q;
}

uint8_t encodeBits(uint32_t u, const FP8Format &f, Saturation sat) {
  uint8_t sign = uint8_t((u >> 24) & 0x80u);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u)
    return f.nanCode; // NaN: sign dropped, as NVIDIA canonicalizes
  uint8_t overflow = sat == Saturation::SatFinite ? f.maxCode
                     : f.hasInf                   ? uint8_t(0x7C)
                                                  : uint8_t(0x7F);
  if (a == 0x7F800000u)
    return sign | overflow;
  uint32_t code = roundMagnitude(a, f.mantissaBits, f.bias);
  if (code > f.maxCode)
    return sign | overflow;
  return sign | uint8_t(code);
}

float decodeE4M3(uint8_t c) {
  float sign = (c & 0x80) ? -1.0f : 1.0f;
  int e = (c >> 3) & 0xF;
  int m = c & 0x7;
  if ((c & 0x7F) == 0x7F)
    return std::numeric_limits<float>::quiet_NaN();
  if (e == 0)
    return sign * std::ldexp(float(m), -9);
  return sign * std::ldexp(float(8 + m), e - 10);
}

float decodeE5M2(uint8_t c) {
  float sign = (c & 0x80) ? -1.0f : 1.0f;
  int e = (c >> 2) & 0x1F;
  int m = c & 0x3;
  if (e == 0x1F)
    return m == 0 ? sign * std::numeric_limits<float>::infinity()
                  : std::numeric_limits<float>::quiet_NaN();
  if (e == 0)
    return sign * std::ldexp(float(m), -16);
  return sign * std::ldexp(float(4 + m), e - 17);
}

struct DecodeTables {
  std::array<float, 256> e4m3;
  std::array<float, 256> e5m2;
  DecodeTables() {
    for (int c = 0; c < 256; ++c) {
      e4m3[c] = decodeE4M3(uint8_t(c));
      e5m2[c] = decodeE5M2(uint8_t(c));
    }
  }
};

const DecodeTables &tables() {
  static const DecodeTables t;
  return t;
}

} // namespace

const FP8Format &fp8Format(DType t) {
  assert(isFP8(t) && "fp8Format expects E4M3FN or E5M2");
  return t == DType::E5M2 ? kE5M2 : kE4M3;
}

uint8_t floatToFP8(float x, DType fmt, Saturation sat) {
  return encodeBits(floatBits(x), fp8Format(fmt), sat);
}

uint8_t bf16ToFP8(uint16_t bits, DType fmt, Saturation sat) {
  return encodeBits(uint32_t(bits) << 16, fp8Format(fmt), sat);
}

uint8_t f16ToFP8(uint16_t bits, DType fmt, Saturation sat) {
  return floatToFP8(f16ToFloat(bits), fmt, sat);
}

float fp8ToFloat(uint8_t code, DType fmt) { return fp8DecodeTable(fmt)[code]; }

const float *fp8DecodeTable(DType fmt) {
  return fmt == DType::E5M2 ? tables().e5m2.data() : tables().e4m3.data();
}

bool isFP8NaN(uint8_t code, DType fmt) {
  if (fmt == DType::E5M2)
    return (code & 0x7F) > 0x7C;
  return (code & 0x7F) == 0x7F;
}

uint16_t fp8ToF16(uint8_t code, DType fmt) {
  if (isFP8NaN(code, fmt))
    return 0x7FFF;
  if (fmt == DType::E5M2) // E5M2 is the top byte of binary16
    return uint16_t(code) << 8;
  return floatToF16(fp8ToFloat(code, fmt)); // exact: binary16 holds E4M3
}

float fp8Ulp(float x, DType fmt) {
  const FP8Format &f = fp8Format(fmt);
  float a = std::fabs(x);
  if (!(a >= f.minNormal)) // subnormal range (and NaN)
    return f.minSubnormal;
  int e = std::ilogb(a);
  return std::ldexp(1.0f, e - f.mantissaBits);
}

//===----------------------------------------------------------------------===//
// UE8M0
//===----------------------------------------------------------------------===//

uint8_t floatToUE8M0(float x, PowerRounding r, Saturation sat) {
  uint32_t a = floatBits(x) & 0x7FFFFFFFu;
  if (a > 0x7F800000u)
    return 0xFF;
  uint8_t overflow = sat == Saturation::SatFinite ? 0xFE : 0xFF;
  if (a == 0x7F800000u)
    return overflow;
  uint32_t e = a >> 23; // biased exponent: |x| in [2^(e-127), 2^(e-126))
  if (r == PowerRounding::Up) {
    if (e == 0) {
      // Zero or a float subnormal; 2^-127 is the subnormal 0x00400000.
      if (a > 0x00400000u)
        e = 1;
    } else if (a & 0x007FFFFFu) {
      ++e;
    }
  }
  // TowardZero: subnormals (and zero) clip up to code 0 = 2^-127.
  if (e >= 0xFF)
    return overflow;
  return uint8_t(e);
}

uint8_t bf16ToUE8M0(uint16_t bits, PowerRounding r, Saturation sat) {
  return floatToUE8M0(bitsToFloat(uint32_t(bits) << 16), r, sat);
}

float ue8m0ToFloat(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<float>::quiet_NaN();
  if (code == 0)
    return bitsToFloat(0x00400000u); // 2^-127, a float subnormal
  return bitsToFloat(uint32_t(code) << 23);
}

uint16_t ue8m0ToBF16(uint8_t code) {
  if (code == 0xFF)
    return 0x7FFF;
  if (code == 0)
    return 0x0040;
  return uint16_t(uint16_t(code) << 7);
}

//===----------------------------------------------------------------------===//
// BF16 and FP16
//===----------------------------------------------------------------------===//

uint16_t floatToBF16(float x) {
  uint32_t u = floatBits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)
    return 0x7FFF;
  // Nearest-even on the low 16 bits; a carry walks into the exponent and
  // past the largest finite value into inf, as IEEE rounding does.
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

float bf16ToFloat(uint16_t bits) { return bitsToFloat(uint32_t(bits) << 16); }

uint16_t floatToF16(float x) {
  uint32_t u = floatBits(x);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u)
    return 0x7FFF;
  if (a == 0x7F800000u)
    return sign | 0x7C00;
  // Same scheme as FP8: 10 stored mantissa bits, bias 15; codes >= 0x7C00
  // are infinity (IEEE overflow rounds to inf).
  uint32_t code = roundMagnitude(a, 10, 15);
  if (code >= 0x7C00u)
    return sign | 0x7C00;
  return sign | uint16_t(code);
}

float f16ToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t e = (bits >> 10) & 0x1Fu;
  uint32_t m = bits & 0x3FFu;
  if (e == 0x1F)
    return bitsToFloat(sign | 0x7F800000u | (m << 13));
  if (e == 0) {
    float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

} // namespace fp8::numerics
