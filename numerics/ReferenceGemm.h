//===- ReferenceGemm.h - The CPU oracle for scaled FP8 GEMMs ----*- C++ -*-===//
//
// D = dequant(A) * dequant(B)^T (+ C), A logically [M, K], B [N, K]
// (k_major: A stored [M, K], B [N, K]; mn_major: A stored [K, M], B [K, N]).
//
// referenceGemm computes it in FP32 with the promotion structure of the GPU
// kernels, so that a kernel implementing the same order matches it to the
// last bit up to the order of the partial sums (docs/numerics.md,
// "Reference GEMM"). With I the promotion interval, a[m][k] and b[n][k]
// the decoded FP8 values (no scales), and for each output (m, n):
//
//   acc = 0                                               (FP32)
//   for each chunk c = [c*I, min((c+1)*I, K)):
//     p = sum over the chunk of a[m][k] * b[n][k]        (products exact;
//         sequential FP32 adds, or the tensor-core model of Accumulator.h)
//     scales vary along K:  acc = fmaf(p, sA(m, c) * sB(n, c), acc)
//     otherwise:            acc = acc + p
//   scales vary along K:  D = C ? acc + C[m][n] : acc
//   otherwise:            D = C ? fmaf(acc, sA(m) * sB(n), C[m][n])
//                               : acc * (sA(m) * sB(n))
//
// sA(m, c) is A's scale at logical (m, c*I), sA * sB is rounded to FP32
// before it is used, and "vary along K" means either operand's granularity
// has a K block (core/RecipeRules.h, kBlock). I = 0 (KernelSpec's "tensor-
// core accumulation only") makes the whole K one chunk, or, for MX operands
// (which need no promotion interval), one chunk per 32-element K block.
//
// referenceGemmF64 is the same product with FP64 sums (no promotion
// structure), referenceGemmUnquantized the product of the original float
// inputs in FP64: the two references every GPU test compares against.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_REFERENCEGEMM_H
#define FP8_RUNTIME_NUMERICS_REFERENCEGEMM_H

#include "core/Recipe.h"
#include "core/Status.h"
#include "numerics/Accumulator.h"
#include "numerics/Quantize.h"

#include <cstdint>
#include <vector>

namespace fp8::numerics {

/// M, N, K of a GEMM.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

/// How referenceGemm sums.
struct ReferenceGemmOptions {
  /// K elements between promotions of the partial sums into the FP32
  /// accumulator (KernelSpec::promotionInterval): a positive multiple of 32
  /// dividing the K block of scales that vary along K, or nullopt for
  /// tensor-core accumulation only (fp8::checkPromotionInterval has the
  /// rules).
  std::optional<int64_t> promotionInterval = 128;
  /// How each chunk's partial sum is built: FP32 (default) or the truncating
  /// tensor-core model (kHopperFP8Accumulator for an H100).
  AccumulatorModel accumulator;
  /// Use the portable kernels even where AVX2/FMA exist (for tests: both give
  /// bit-identical results).
  bool portableKernels = false;
};

/// M, N, K of A (stored per `layoutA`) times B^T; fails unless both K agree.
Expected<GemmShape> gemmShape(int64_t aRows, int64_t aCols, Layout layoutA,
                              int64_t bRows, int64_t bCols, Layout layoutB);

/// D[M, N] (row-major) with the promotion structure in the file comment.
/// `c`, when given, is a row-major [M, N] FP32 tensor added to the product.
/// Fails on malformed tensors (validate()), a K mismatch, a recipe the GPU
/// kernels do not accept (fp8::checkGemmRecipe: K blocks, MX pairing, the
/// promotion interval) or an accumulator model out of range.
Expected<std::vector<float>>
referenceGemm(const QuantizedTensor &a, Layout layoutA,
              const QuantizedTensor &b, Layout layoutB,
              const float *c = nullptr,
              const ReferenceGemmOptions &options = {});

/// D[M, N] = sum_k dequant(A)[m][k] * dequant(B)[n][k] (+ C) in FP64
/// (dequantized values are exact in FP64; sequential fused multiply-adds).
/// Any granularity (no recipe rules: this is the mathematical product).
Expected<std::vector<double>> referenceGemmF64(const QuantizedTensor &a,
                                               Layout layoutA,
                                               const QuantizedTensor &b,
                                               Layout layoutB,
                                               const float *c = nullptr);

/// The unquantized product in FP64: `a` row-major [M, K] (k_major) or
/// [K, M] (mn_major), `b` [N, K] or [K, N], optional `c` [M, N].
Expected<std::vector<double>>
referenceGemmUnquantized(const float *a, Layout layoutA, const float *b,
                         Layout layoutB, int64_t m, int64_t n, int64_t k,
                         const float *c = nullptr);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_REFERENCEGEMM_H
