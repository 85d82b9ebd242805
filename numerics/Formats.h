//===- Formats.h - Bit-exact FP8, UE8M0, BF16 and FP16 conversions --------===//
//
// Our own implementation of the conversions the GPU performs, bit-identical to
// the host code path of NVIDIA's cuda_fp8.h / cuda_bf16.h / cuda_fp16.h
// (CUDA 13), which the format tests check exhaustively. Nothing here includes
// a CUDA header: the runtime, the tools and the GPU machine link it as plain
// C++. docs/numerics.md states every rule (NaN, saturation, rounding).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_FORMATS_H
#define FP8_RUNTIME_NUMERICS_FORMATS_H

#include "core/Recipe.h"

#include <cstdint>

namespace fp8::numerics {

/// What a narrowing conversion does with finite values beyond the format's
/// largest finite value and with infinities. NaN always stays NaN.
enum class Saturation : uint8_t {
  SatFinite, ///< clamp to +-max finite, inf included (__NV_SATFINITE)
  NoSat,     ///< overflow to inf (E5M2) or NaN (E4M3FN, UE8M0) (__NV_NOSAT)
};

/// How a magnitude is rounded to a power of two (UE8M0 scales).
enum class PowerRounding : uint8_t {
  TowardZero, ///< 2^floor(log2|x|) (cudaRoundZero)
  Up,         ///< 2^ceil(log2|x|) (cudaRoundPosInf applied to |x|)
};

/// Bit-level description of an FP8 element format.
struct FP8Format {
  DType type;
  int exponentBits;
  int mantissaBits;
  int bias;
  float maxFinite;    ///< 448 (E4M3FN) or 57344 (E5M2)
  float minNormal;    ///< 2^-6 or 2^-14
  float minSubnormal; ///< 2^-9 or 2^-16
  bool hasInf;        ///< E5M2 only
  uint8_t maxCode;    ///< code of +maxFinite (0x7E or 0x7B)
  uint8_t nanCode;    ///< the NaN our encoders produce (0x7F for both)
};

/// The description of `t`, which must be DType::E4M3FN or DType::E5M2.
const FP8Format &fp8Format(DType t);

//===----------------------------------------------------------------------===//
// FP8 element formats
//===----------------------------------------------------------------------===//

/// Rounds `x` to the FP8 format `fmt` (nearest, ties to even). NaN of either
/// sign becomes 0x7F (NVIDIA canonicalizes float NaNs), values below half the
/// smallest subnormal become a zero of x's sign. Bit-identical to
/// __nv_cvt_float_to_fp8(x, sat, fmt).
uint8_t floatToFP8(float x, DType fmt, Saturation sat = Saturation::SatFinite);
/// As floatToFP8 for a bf16 bit pattern (exact widening first);
/// bit-identical to __nv_cvt_bfloat16raw_to_fp8.
uint8_t bf16ToFP8(uint16_t bits, DType fmt,
                  Saturation sat = Saturation::SatFinite);
/// As floatToFP8 for an IEEE binary16 bit pattern; bit-identical to
/// __nv_cvt_halfraw_to_fp8.
uint8_t f16ToFP8(uint16_t bits, DType fmt,
                 Saturation sat = Saturation::SatFinite);

/// The value of an FP8 code (exact). NaN codes give a quiet NaN, E5M2's
/// infinity codes +-inf.
float fp8ToFloat(uint8_t code, DType fmt);
/// The binary16 bit pattern of an FP8 code; NaN codes give 0x7FFF.
/// Bit-identical to __nv_cvt_fp8_to_halfraw.
uint16_t fp8ToF16(uint8_t code, DType fmt);
/// The 256-entry decode table of `fmt` (fp8ToFloat for every code).
const float *fp8DecodeTable(DType fmt);
/// True when `code` is a NaN of `fmt`.
bool isFP8NaN(uint8_t code, DType fmt);

/// Spacing of the FP8 grid of `fmt` at magnitude |x| (one unit in the last
/// place): 2^(floor(log2|x|) - mantissaBits) for normal magnitudes, the
/// smallest subnormal below the normal range. RNE is exact to half of it.
float fp8Ulp(float x, DType fmt);

//===----------------------------------------------------------------------===//
// UE8M0 (exponent-only scale bytes): code e means 2^(e - 127), 0xFF is NaN
//===----------------------------------------------------------------------===//

/// Rounds |x| to a power of two in the direction `r`, clipping to
/// [2^-127, 2^127]. Zero and magnitudes below 2^-127 give code 0 (2^-127),
/// NaN gives 0xFF, overflow (2^128 and inf) gives 0xFE with SatFinite and
/// 0xFF with NoSat. Bit-identical to __nv_cvt_float_to_e8m0(x, sat, r).
uint8_t floatToUE8M0(float x, PowerRounding r,
                     Saturation sat = Saturation::SatFinite);
/// As floatToUE8M0 for a bf16 bit pattern (__nv_cvt_bfloat16raw_to_e8m0).
uint8_t bf16ToUE8M0(uint16_t bits, PowerRounding r,
                    Saturation sat = Saturation::SatFinite);
/// 2^(code - 127) (code 0 is the float subnormal 2^-127); 0xFF gives NaN.
float ue8m0ToFloat(uint8_t code);
/// The bf16 bit pattern of a UE8M0 code; 0xFF gives 0x7FFF
/// (__nv_cvt_e8m0_to_bf16raw).
uint16_t ue8m0ToBF16(uint8_t code);

//===----------------------------------------------------------------------===//
// BF16 and FP16
//===----------------------------------------------------------------------===//

/// Rounds to bf16 (nearest, ties to even; overflow to inf); NaN gives 0x7FFF.
/// Bit-identical to __float2bfloat16.
uint16_t floatToBF16(float x);
/// The exact value of a bf16 bit pattern.
float bf16ToFloat(uint16_t bits);
/// Rounds to IEEE binary16 (nearest, ties to even; overflow to inf); NaN
/// gives 0x7FFF. Bit-identical to __float2half.
uint16_t floatToF16(float x);
/// The exact value of a binary16 bit pattern.
float f16ToFloat(uint16_t bits);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_FORMATS_H
