//===- fp8_math.h - FP8 math for the GPU and the CPU ------------*- C++ -*-===//
//
// The arithmetic of the generated quantize, transpose and elementwise kernels,
// written once for both sides: NVRTC compiles it into every such kernel
// (included as "fp8/fp8_math.h"), and the CPU oracle of plans
// (runtime/plan/PlanOracle.cpp) and the unit tests compile the very same
// functions with g++ (included as "codegen/kernels/fp8_math.h"). That is how
// the GPU's quantization is guaranteed to equal the oracle's bit for bit:
//
//   - FP8/UE8M0/BF16/FP16 conversions are integer operations on the float's
//     bit pattern (the algorithm of numerics/Formats.cpp), exact on
//     any machine;
//   - every floating-point operation is a single IEEE operation with round to
//     nearest even: on the device the _rn intrinsics (__fadd_rn, __fmul_rn,
//     __fmaf_rn, __fdiv_rn, __fsqrt_rn), which the compiler never contracts
//     or approximates whatever -fmad/-use_fast_math say; on the host the
//     plain operators and std::fma, compiled with -ffp-contract=off;
//   - exp, tanh and erf are our own polynomial evaluations built from those
//     operations, not the two libraries' (which differ in the last bits):
//     fp8_functions.h; delayed scaling's history step, fp8_delayed.h;
//   - maxima over |x| are taken on the bit patterns (unsigned integers),
//     which order non-negative floats like their values and make any
//     reduction order give the same result.
//
// test/codegen/Fp8MathTest.cpp checks these functions bit for bit against
// numerics/ (floatToFP8, scaleFromAmax, quantize, AmaxHistory).
//
// No include on the device side: NVRTC gets no include path.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_KERNELS_FP8_MATH_H
#define FP8_CODEGEN_KERNELS_FP8_MATH_H

// FP8K_FN: how every function of these headers is declared on each side.
#if defined(__CUDACC__)
#define FP8K_FN __device__ __forceinline__
#else
#include <cmath>
#include <cstring>
#define FP8K_FN inline
#endif

namespace fp8k {

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

/// Element formats, numbered as fp8::DType (core/Recipe.h).
enum : int {
  kE4M3 = 0,
  kE5M2 = 1,
  kBF16 = 2,
  kF16 = 3,
  kF32 = 4,
  kUE8M0 = 5,
};

/// Scale formats, numbered as fp8::ScaleFormat.
enum : int { kScaleF32 = 0, kScaleF32Pow2 = 1, kScaleUE8M0 = 2 };

//===----------------------------------------------------------------------===//
// Bit casts and single IEEE operations
//===----------------------------------------------------------------------===//

FP8K_FN u32 f2u(float x) {
#if defined(__CUDACC__)
  return __float_as_uint(x);
#else
  u32 u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
#endif
}

FP8K_FN float u2f(u32 u) {
#if defined(__CUDACC__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
#endif
}

// NOTE: the device side spells every operation with an _rn intrinsic so that
// nvcc/NVRTC never fuse a multiply and an add into an FMA (-fmad=true is the
// default) or use approximate division: the host computes each one rounded.
FP8K_FN float add(float a, float b) {
#if defined(__CUDACC__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
FP8K_FN float sub(float a, float b) {
#if defined(__CUDACC__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
FP8K_FN float mul(float a, float b) {
#if defined(__CUDACC__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FP8K_FN float div(float a, float b) {
#if defined(__CUDACC__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
FP8K_FN float fma(float a, float b, float c) {
#if defined(__CUDACC__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
FP8K_FN float sqrt(float a) {
#if defined(__CUDACC__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
FP8K_FN bool isnan(float x) { return (f2u(x) & 0x7FFFFFFFu) > 0x7F800000u; }
FP8K_FN float neg(float x) { return u2f(f2u(x) ^ 0x80000000u); }
FP8K_FN float abs(float x) { return u2f(f2u(x) & 0x7FFFFFFFu); }
FP8K_FN float quiet_nan() { return u2f(0x7FC00000u); }
FP8K_FN float infinity() { return u2f(0x7F800000u); }

/// IEEE 754-2019 maximum/minimum (arith.maximumf/minimumf): NaN if either is
/// NaN, -0 < +0.
FP8K_FN float maximum(float a, float b) {
  if (isnan(a) || isnan(b))
    return quiet_nan();
  if (a == b) // +0 and -0: the one without the sign bit
    return u2f(f2u(a) & f2u(b));
  return a > b ? a : b;
}
FP8K_FN float minimum(float a, float b) {
  if (isnan(a) || isnan(b))
    return quiet_nan();
  if (a == b)
    return u2f(f2u(a) | f2u(b));
  return a < b ? a : b;
}
/// maxNum/minNum (arith.maxnumf/minnumf): the number if one is NaN.
FP8K_FN float maxnum(float a, float b) {
  if (isnan(a))
    return b;
  if (isnan(b))
    return a;
  return maximum(a, b);
}
FP8K_FN float minnum(float a, float b) {
  if (isnan(a))
    return b;
  if (isnan(b))
    return a;
  return minimum(a, b);
}

//===----------------------------------------------------------------------===//
// Narrowing conversions (the algorithm of numerics/Formats.cpp)
//===----------------------------------------------------------------------===//

/// Rounds the magnitude bits `a` (sign cleared, finite) to a format with
/// `mant` stored mantissa bits and exponent `bias`, nearest even; the result
/// may exceed the largest finite code (the caller's overflow).
FP8K_FN u32 round_magnitude(u32 a, int mant, int bias) {
  if (a < 0x00800000u) // float zero or subnormal: below any target subnormal
    return 0;
  const int e = int(a >> 23) - 127;
  const u32 sig = (a & 0x007FFFFFu) | 0x00800000u;
  const int eb = e + bias;
  const int shift = 23 - mant + (eb < 1 ? 1 - eb : 0);
  if (shift > 24)
    return 0;
  u32 q = sig >> shift;
  const u32 rem = sig & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;
  return (u32((eb > 1 ? eb : 1) - 1) << mant) + q;
}

/// The FP8 code of `x`, nearest even, saturating finite overflow and
/// infinities to +-max finite; every NaN gives 0x7F. `fmt` is kE4M3 or
/// kE5M2. Equals fp8::numerics::floatToFP8(x, fmt, SatFinite). The integer
/// algorithm, on either side.
FP8K_FN u8 float_to_fp8_bits(float x, int fmt) {
  const u32 u = f2u(x);
  const u8 sign = u8((u >> 24) & 0x80u);
  const u32 a = u & 0x7FFFFFFFu;
  const u8 maxCode = fmt == kE5M2 ? u8(0x7B) : u8(0x7E);
  if (a > 0x7F800000u)
    return 0x7F;
  if (a == 0x7F800000u)
    return u8(sign | maxCode);
  const u32 code =
      fmt == kE5M2 ? round_magnitude(a, 2, 15) : round_magnitude(a, 3, 7);
  if (code > maxCode)
    return u8(sign | maxCode);
  return u8(sign | u8(code));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/// The hardware's codes of lo (low byte) and hi (high byte), for finite or
/// infinite inputs: cvt.rn.satfinite (nearest even, finite overflow and
/// infinities to +-max finite).
__device__ __forceinline__ u32 cvt_fp8x2(float lo, float hi, int fmt) {
  unsigned short pair;
  // NOTE: PTX ISA, "cvt": for .e4m3x2/.e5m2x2 destinations the second
  // source converts into the low byte.
  if (fmt == kE5M2)
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;"
        : "=h"(pair)
        : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
        : "=h"(pair)
        : "f"(hi), "f"(lo));
  return pair;
}
#endif

/// float_to_fp8_bits of two non-NaN values, lo's code in the low byte: one
/// instruction on an sm_89+ device (cvt_fp8x2), the integer algorithm
/// elsewhere.
FP8K_FN u32 fp8x2_bits(float lo, float hi, int fmt) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return cvt_fp8x2(lo, hi, fmt);
#else
  return u32(float_to_fp8_bits(lo, fmt)) |
         (u32(float_to_fp8_bits(hi, fmt)) << 8);
#endif
}

/// float_to_fp8_bits(x, fmt), the same bits. On an sm_89+ device the
/// hardware converts (cvt_fp8x2), a few instructions instead of the integer
/// algorithm's branches; NaN, whose code the hardware gives with its sign,
/// takes the integer path's 0x7F. The GPU test
/// test/runtime/Fp8ConvertGpuTest.cpp compares the two on all 2^32 floats.
FP8K_FN u8 float_to_fp8(float x, int fmt) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if ((f2u(x) & 0x7FFFFFFFu) > 0x7F800000u)
    return 0x7F;
  return u8(cvt_fp8x2(x, 0.0f, fmt) & 0xFFu);
#else
  return float_to_fp8_bits(x, fmt);
#endif
}

/// The value of an FP8 code (exact). NaN codes give NaN, E5M2's infinity
/// codes +-inf.
FP8K_FN float fp8_to_float(u8 c, int fmt) {
  const u32 sign = u32(c & 0x80) << 24;
  if (fmt == kE5M2) {
    // E5M2 is the top byte of binary16: exponent 5 bits, bias 15.
    const u32 e = (c >> 2) & 0x1F, m = c & 0x3;
    if (e == 0x1F)
      return m == 0 ? u2f(sign | 0x7F800000u) : quiet_nan();
    if (e == 0) // m * 2^-16
      return u2f(sign | f2u(float(m) * 0x1p-16f));
    return u2f(sign | ((e + 112u) << 23) | (m << 21));
  }
  const u32 e = (c >> 3) & 0xF, m = c & 0x7;
  if ((c & 0x7F) == 0x7F)
    return quiet_nan();
  if (e == 0) // m * 2^-9
    return u2f(sign | f2u(float(m) * 0x1p-9f));
  return u2f(sign | ((e + 120u) << 23) | (m << 20));
}

/// bf16 bits of `x`, nearest even, overflow to inf, NaN to 0x7FFF.
FP8K_FN u16 float_to_bf16(float x) {
  u32 u = f2u(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)
    return 0x7FFF;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return u16(u >> 16);
}
FP8K_FN float bf16_to_float(u16 b) { return u2f(u32(b) << 16); }

/// binary16 bits of `x`, nearest even, overflow to inf, NaN to 0x7FFF.
FP8K_FN u16 float_to_f16(float x) {
  const u32 u = f2u(x);
  const u16 sign = u16((u >> 16) & 0x8000u);
  const u32 a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u)
    return 0x7FFF;
  if (a == 0x7F800000u)
    return u16(sign | 0x7C00);
  const u32 code = round_magnitude(a, 10, 15);
  if (code >= 0x7C00u)
    return u16(sign | 0x7C00);
  return u16(sign | u16(code));
}
FP8K_FN float f16_to_float(u16 h) {
  const u32 sign = u32(h & 0x8000u) << 16;
  const u32 e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F)
    return u2f(sign | 0x7F800000u | (m << 13));
  if (e == 0) // m * 2^-24, exact
    return u2f(sign | f2u(float(m) * 0x1p-24f));
  return u2f(sign | ((e + 112u) << 23) | (m << 13));
}

/// `x` rounded to the element type `t` (kBF16, kF16) and widened back; kF32
/// returns `x`.
FP8K_FN float round_to(float x, int t) {
  if (t == kBF16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // The hardware's conversion, the same bits as the integer algorithm
    // (NaN to 0x7FFF included; the GPU test
    // test/runtime/Fp8ConvertGpuTest.cpp compares the two on all 2^32
    // floats). The packing form puts x's bf16 in the high half and zero's
    // in the low: the word is the rounded float, one instruction (F2FP),
    // where cvt.rn.bf16.f32 takes the slower conversion unit.
    u32 w;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(x), "f"(0.0f));
    return u2f(w);
#else
    return bf16_to_float(float_to_bf16(x));
#endif
  }
  if (t == kF16)
    return f16_to_float(float_to_f16(x));
  return x;
}

/// UE8M0 code of |x| rounded up to a power of two, clipped to
/// [2^-127, 2^127] (SatFinite: 2^128 and inf give 0xFE); NaN gives 0xFF.
FP8K_FN u8 float_to_ue8m0_up(float x) {
  const u32 a = f2u(x) & 0x7FFFFFFFu;
  if (a > 0x7F800000u)
    return 0xFF;
  if (a == 0x7F800000u)
    return 0xFE;
  u32 e = a >> 23;
  if (e == 0) {
    if (a > 0x00400000u)
      e = 1;
  } else if (a & 0x007FFFFFu) {
    ++e;
  }
  if (e >= 0xFF)
    return 0xFE;
  return u8(e);
}
/// 2^(code - 127); code 0 is the float subnormal 2^-127, 0xFF is NaN.
FP8K_FN float ue8m0_to_float(u8 c) {
  if (c == 0xFF)
    return quiet_nan();
  if (c == 0)
    return u2f(0x00400000u);
  return u2f(u32(c) << 23);
}

//===----------------------------------------------------------------------===//
// Scales and quantization (docs/numerics.md, "Quantization")
//===----------------------------------------------------------------------===//

/// The largest finite value of an FP8 format.
FP8K_FN float fp8_max(int fmt) { return fmt == kE5M2 ? 57344.0f : 448.0f; }

/// |x| as an unsigned integer that orders like the value (NaN and inf above
/// every finite value): the amax reductions take the maximum of these.
FP8K_FN u32 abs_bits(float x) { return f2u(x) & 0x7FFFFFFFu; }
/// True when an amax taken over abs_bits saw a NaN or an infinity.
FP8K_FN bool amax_nonfinite(u32 bits) { return bits >= 0x7F800000u; }

/// 2^e for 0 <= e <= 127, exactly.
FP8K_FN float exp2i(int e) { return u2f(u32(127 + e) << 23); }

/// The scale of a block whose amax is `amax` (fp8::numerics::scaleFromAmax):
/// 1 for an all-zero block (UE8M0 code 127); NaN (code 0xFF) for a
/// non-finite amax; else s = fl32(amax * 2^margin / fmt_max), clamped to
/// [2^-126, 2^127] for f32 scales, rounded up to a power of two for f32_pow2
/// (at least 2^-126) and ue8m0 (at least 2^-127). `code` receives the UE8M0
/// byte of the scale (unused for f32).
FP8K_FN float scale_from_amax(float amax, int fmt, int scaleFmt, int margin,
                              u8 *code) {
  const u32 a = f2u(amax) & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) {
    *code = 0xFF;
    return quiet_nan();
  }
  if (a == 0) {
    *code = 127;
    return 1.0f;
  }
  // margin is in [0, 127] (fp8::checkDelayedScaling): 2^margin is exact and
  // the product rounds (to inf on overflow) exactly like std::ldexp.
  const float s = div(mul(u2f(a), exp2i(margin)), fp8_max(fmt));
  if (scaleFmt == kScaleF32) {
    *code = 0;
    const float lo = 0x1p-126f, hi = 0x1p127f;
    return s < lo ? lo : (s > hi ? hi : s);
  }
  u8 c = float_to_ue8m0_up(s);
  if (scaleFmt == kScaleF32Pow2 && c < 1)
    c = 1; // keep f32 scales normal: 2^-126
  *code = c;
  return ue8m0_to_float(c);
}

/// The FP8 code of x / scale (an IEEE division, then saturating RNE).
FP8K_FN u8 quantize_value(float x, float scale, int fmt) {
  return float_to_fp8(div(x, scale), fmt);
}

/// A block's scale with its reciprocal, for quantizing the block's values
/// with a multiply and two FMAs instead of a division each
/// (quantize_codes).
struct ScaleDivisor {
  float scale;
  float recip; ///< fl32(1 / scale)
  bool fast;   ///< scale in [2^-100, 2^100] (finite): quantize_codes' range
};

/// The divisor of a scale whose reciprocal fl32(1 / scale) is known.
FP8K_FN ScaleDivisor scale_divisor_from(float scale, float recip) {
  const u32 b = f2u(scale) & 0x7FFFFFFFu;
  return {scale, recip, b >= 0x0D800000u && b <= 0x71800000u};
}

FP8K_FN ScaleDivisor scale_divisor(float scale) {
  return scale_divisor_from(scale, div(1.0f, scale));
}

/// fl32(x / d.scale) without a division, for d.fast and |x| <= the finite
/// amax the scale was made from (current scaling: the quotient is at most
/// fmt_max (1 + 2^-23)). Markstein's theorem: with y = fl32(1 / b) and q0 =
/// fl32(a y) within an ulp of a / b, the residual a - b q0 is exact (one
/// FMA; |b| >= 2^-100 keeps it clear of the subnormals wherever the code
/// can be non-zero) and fl32(q0 + (a - b q0) y) is the correctly rounded
/// a / b. The residual is formed negated, b q0 - a: then a zero x keeps its
/// sign through the sums of zeros.
FP8K_FN float divide_by_scale(float x, const ScaleDivisor &d) {
  // (IEEE negations, exact, which the FMAs take as operand modifiers.)
  const float q0 = mul(x, d.recip);
  const float nr = fma(q0, d.scale, -x);
  return fma(-nr, d.recip, q0);
}

/// The FP8 codes of lo and hi in a block of scale d.scale, lo's in the low
/// byte: quantize_value's codes. Both |lo| and |hi| must be at most the
/// block's amax, and that amax finite when d.fast (current scaling): then
/// no NaN can occur, the quotients come from divide_by_scale and the device
/// converts the two in one instruction; otherwise each takes
/// quantize_value. This form takes a scale each (lo and hi in two blocks,
/// as along a row of R x 1 blocks), each value bounded by its own block's
/// amax.
FP8K_FN u32 quantize_pair(float lo, const ScaleDivisor &dl, float hi,
                          const ScaleDivisor &dh, int fmt) {
  if (!dl.fast || !dh.fast)
    return u32(quantize_value(lo, dl.scale, fmt)) |
           (u32(quantize_value(hi, dh.scale, fmt)) << 8);
  return fp8x2_bits(divide_by_scale(lo, dl), divide_by_scale(hi, dh), fmt);
}

/// Both in one block.
FP8K_FN u32 quantize_pair(float lo, float hi, const ScaleDivisor &d, int fmt) {
  return quantize_pair(lo, d, hi, d, fmt);
}

/// quantize_pair over x[0 .. N) (N a multiple of 4), four codes to a word
/// (code k in byte k % 4 of word k / 4).
/// The test of d.fast is made once for the N values (a branch per pair
/// made the compiler recompute d.recip in every pair's branch).
template <int N>
FP8K_FN void quantize_codes(const float *x, const ScaleDivisor &d, int fmt,
                            u32 *words) {
  static_assert(N % 4 == 0, "whole words");
  if (!d.fast) {
#pragma unroll
    for (int w = 0; w < N / 4; ++w) {
      words[w] = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        words[w] |= u32(quantize_value(x[4 * w + k], d.scale, fmt)) << (8 * k);
    }
    return;
  }
  float q[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    q[k] = divide_by_scale(x[k], d);
#pragma unroll
  for (int w = 0; w < N / 4; ++w)
    words[w] = fp8x2_bits(q[4 * w], q[4 * w + 1], fmt) |
               (fp8x2_bits(q[4 * w + 2], q[4 * w + 3], fmt) << 16);
}

/// quantize_codes for values the scale does not bound (delayed scaling's,
/// made before the step's amax is known): when d.fast and every |x[k]| <=
/// d.scale * 2^16, the quotients are at most 2^16 (finite, and past either
/// format's largest finite value only where both forms saturate), so
/// quantize_codes' Markstein quotients are the division's; otherwise (a
/// larger value, an infinity, a NaN) each value takes quantize_value.
template <int N>
FP8K_FN void quantize_codes_unbounded(const float *x, const ScaleDivisor &d,
                                      int fmt, u32 *words) {
  // (scale * 2^16 is exact and finite: d.fast bounds the scale by 2^100.)
  const u32 bound = f2u(mul(d.scale, 65536.0f)) & 0x7FFFFFFFu;
  u32 m = 0; // the largest |x[k]| bits (a NaN's exceed every bound)
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const u32 b = f2u(x[k]) & 0x7FFFFFFFu;
    m = b > m ? b : m;
  }
  if (d.fast && m <= bound) {
    quantize_codes<N>(x, d, fmt, words);
    return;
  }
  const ScaleDivisor slow = {d.scale, d.recip, false};
  quantize_codes<N>(x, slow, fmt, words);
}

} // namespace fp8k

#endif // FP8_CODEGEN_KERNELS_FP8_MATH_H
