//===- Accumulator.h - Model of the FP8 tensor-core accumulator -*- C++ -*-===//
//
// Hopper's FP8 MMA does not accumulate in IEEE FP32 (deepseek-v3-fp8.zh.txt:
// "about 14 bits"). The model, per MMA step of `groupK` products (wgmma k32)
// with operands a_j, b_j and the running partial sum acc:
//
//   e_j  = exp(a_j) + exp(b_j)          (FP8 exponent fields, unbiased; emin
//                                        for subnormals; zero operands skip)
//   e    = max(floor(log2 |acc|), e_1, ..., e_n)
//   q    = 2^(e - mantissaBits)                       (the kept grid)
//   S    = trunc(acc / q) + sum_j trunc(a_j b_j / q)  (align, truncate: RZ)
//   acc' = S * q truncated to mantissaBits fraction bits (normalize, RZ)
//
// The alignment uses the exponent sum before the product is normalized (a
// significand product in [2, 4) keeps one more bit than floor(log2 |p|)
// would), and every alignment drops bits toward zero, so long same-sign sums
// are systematically underestimated. With mantissaBits = 13 (an e8m13
// accumulator, 14 significant bits) and k32 steps the model gives the same
// FP32 bits as cuBLASLt's FP8 GEMM on our H100, with fast accumulation
// (promotion 0) and without (promotion 128), on every output we compared
// (docs/numerics.md, "The tensor-core accumulator model").
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_ACCUMULATOR_H
#define FP8_RUNTIME_NUMERICS_ACCUMULATOR_H

#include "core/Recipe.h"

#include <cstdint>

namespace fp8::numerics {

/// Which accumulator the reference GEMM's partial sums use.
struct AccumulatorModel {
  /// 0: IEEE FP32 sums (no emulation). 1..23: the truncating model with this
  /// many fraction bits.
  int mantissaBits = 0;
  /// Products per MMA step (the alignment group): 32 for wgmma m64nNk32.
  int groupK = 32;

  bool emulated() const { return mantissaBits > 0; }
};

/// The model calibrated against the H100 measurements: 13 fraction bits,
/// k32 steps.
inline constexpr AccumulatorModel kHopperFP8Accumulator{13, 32};

/// Largest mantissaBits the emulation supports (FP32's own).
inline constexpr int kMaxAccumulatorBits = 23;

/// One MMA step of the model: `acc` plus the n products a[j] * b[j] of FP8
/// values (formats `fa`, `fb`: they give the subnormal exponent), aligned to
/// the largest exponent and truncated to `mantissaBits` fraction bits. The
/// scalar statement of the model; the GEMM kernels implement it vectorized
/// and are tested against it. 1 <= mantissaBits <= 23.
float emulateMmaStep(float acc, const float *a, const float *b, int n,
                     int mantissaBits, DType fa = DType::E4M3FN,
                     DType fb = DType::E4M3FN);

/// |x| truncated (toward zero) to `bits` fraction bits, sign kept.
float truncateToBits(float x, int bits);

/// sum_k a[k] * b[k] through the model: promotion into an IEEE FP32
/// accumulator every `interval` products (0: never; the partial is then the
/// result), each partial built from MMA steps of model.groupK products (a
/// step never crosses a promotion boundary). With model.mantissaBits == 0
/// the partials are sequential FP32 sums. The 1-row, 1-column case of the
/// reference GEMM with unit scales.
float emulatedDot(const float *a, const float *b, int64_t k,
                  const AccumulatorModel &model, int64_t interval,
                  DType fa = DType::E4M3FN, DType fb = DType::E4M3FN);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_ACCUMULATOR_H
