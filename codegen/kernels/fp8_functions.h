//===- fp8_functions.h - exp, tanh, erf, both sides -------------*- C++ -*-===//
//
// The transcendental functions of the expression programs
// (codegen/Elementwise.h), our own evaluations built from fp8_math.h's
// single IEEE operations so that the device (NVRTC, "fp8/fp8_functions.h")
// and the host (g++, "codegen/kernels/fp8_functions.h") compute the same
// bits.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_KERNELS_FP8_FUNCTIONS_H
#define FP8_CODEGEN_KERNELS_FP8_FUNCTIONS_H

#if defined(__CUDACC_RTC__)
#include "fp8/fp8_math.h"
#else
#include "codegen/kernels/fp8_math.h"
#endif

namespace fp8k {

/// e^x to about 1 ulp: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, the
/// constant split in two), a degree-7 Taylor polynomial for e^r (truncation
/// below 2^-27 relative), scaled by 2^n in two exact steps.
/// Straight-line code: x is clamped to the range where the polynomial and
/// the scaling apply, and NaN, overflow and underflow select their results
/// at the end (three branches an element cost more issue slots than the
/// selects).
FP8K_FN float exp(float x) {
  const float hi = 0x1.62e43p+6f, lo = -0x1.9fe36ap+6f;
  const float xi = x;
  x = x > hi ? hi : x;
  x = x < lo ? lo : x;
  // n = rint(x log2(e)), |n| <= 150: the product rounded, then rounded to
  // an integer (ties to even) by adding 1.5 * 2^23, whose sum has a unit
  // last place; its low bits are n. The same n as rint, without the
  // conversion unit's two instructions (a round and a float-to-int).
  const float t = add(mul(x, 0x1.715476p+0f), 0x1.8p+23f);
  const float n = sub(t, 0x1.8p+23f);
  float r = fma(neg(n), 0x1.62e4p-1f, x); // ln2, high part (exact times n)
  r = fma(neg(n), 0x1.7f7d1cp-20f, r);    // ln2, low part
  float p = 0x1.a01a02p-13f;
  p = fma(p, r, 0x1.6c16c2p-10f);
  p = fma(p, r, 0x1.111112p-7f);
  p = fma(p, r, 0x1.555556p-5f);
  p = fma(p, r, 0x1.555556p-3f);
  p = fma(p, r, 0.5f);
  p = fma(p, r, 1.0f);
  p = fma(p, r, 1.0f);
  // 2^n with n in [-150, 128]: two factors that are normal floats (so the
  // first product is exact and the second rounds once).
  // (A NaN x gives a meaningless ni, whose result is not selected.)
  const int ni = int(f2u(t)) - int(f2u(0x1.8p+23f));
  const int n1 = ni >> 1, n2 = ni - n1;
  const float e =
      mul(mul(p, u2f(u32(127 + n1) << 23)), u2f(u32(127 + n2) << 23));
  return isnan(xi) ? xi : (xi > hi ? infinity() : (xi < lo ? 0.0f : e));
}

/// tanh(x) = sign(x) (1 - 2 / (e^(2|x|) + 1)); x itself below 2^-12 (where
/// tanh(x) = x to within an ulp). Absolute error about 1e-7.
FP8K_FN float tanh(float x) {
  if (isnan(x))
    return x;
  const float ax = abs(x);
  if (ax < 0x1p-12f)
    return x;
  if (ax > 9.0f) // tanh(9) = 1 - 3e-8: 1 in float
    return u2f((f2u(x) & 0x80000000u) | 0x3F800000u);
  const float e = exp(add(ax, ax));
  const float t = sub(1.0f, div(2.0f, add(e, 1.0f)));
  return u2f((f2u(x) & 0x80000000u) | f2u(t));
}

/// erf(x) from the complementary error function's Chebyshev fit (fractional
/// error below 1.2e-7 for erfc): erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 +
/// z/2). Absolute error about 1.2e-7.
FP8K_FN float erf(float x) {
  if (isnan(x))
    return x;
  const float z = abs(x);
  const float t = div(1.0f, fma(0.5f, z, 1.0f));
  float p = 0x1.5df28ap-3f;
  p = fma(p, t, -0x1.a4f124p-1f);
  p = fma(p, t, 0x1.7d0f6p+0f);
  p = fma(p, t, -0x1.229cbap+0f);
  p = fma(p, t, 0x1.1d8f98p-2f);
  p = fma(p, t, -0x1.7d8498p-3f);
  p = fma(p, t, 0x1.8c6d92p-4f);
  p = fma(p, t, 0x1.7f11f6p-2f);
  p = fma(p, t, 0x1.00018ep+0f);
  p = fma(p, t, -0x1.43f89cp+0f);
  const float erfc = mul(t, exp(sub(p, mul(z, z))));
  const float r = sub(1.0f, erfc);
  return u2f((f2u(x) & 0x80000000u) | f2u(r));
}

/// 1 / sqrt(x), two roundings.
FP8K_FN float rsqrt(float x) { return div(1.0f, sqrt(x)); }

} // namespace fp8k

#endif // FP8_CODEGEN_KERNELS_FP8_FUNCTIONS_H
