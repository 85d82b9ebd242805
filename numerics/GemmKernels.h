//===- GemmKernels.h - Register-tile kernels of the reference GEMM --------===//
//
// Internal to numerics/: the inner kernels ReferenceGemm.cpp drives.
// Each computes one register tile over the whole K from packed panels, with
// an AVX2+FMA version (selected at run time, never by -march) and a portable
// one that gives bit-identical FP32 results.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_GEMMKERNELS_H
#define FP8_RUNTIME_NUMERICS_GEMMKERNELS_H

#include "numerics/Accumulator.h"

#include <cstdint>

namespace fp8::numerics::detail {

/// The FP32 tile: kTileM rows x kTileN columns of D.
inline constexpr int kTileM = 6;
inline constexpr int kTileN = 16;
/// The FP64 tile.
inline constexpr int kTileM64 = 6;
inline constexpr int kTileN64 = 8;

/// One FP32 tile of the promoted GEMM.
struct TileF32 {
  const float *a = nullptr; ///< packed A panel: a[k * kTileM + i]
  const float *b = nullptr; ///< packed B panel: b[k * kTileN + j]
  int64_t k = 0;
  int64_t interval = 1; ///< K elements per promotion chunk (>= 1)
  /// Scales varying along K: chunk c uses scaleA[c * strideA + i] and
  /// scaleB[c * strideB + j]. Null when the scales are applied after the
  /// loop (the chunks are then added without scaling).
  const float *scaleA = nullptr;
  const float *scaleB = nullptr;
  int64_t strideA = 0, strideB = 0;
  AccumulatorModel model; ///< how each chunk's partial sum is built
  /// Smallest exponents of A's and B's FP8 formats (1 - bias): the
  /// exponent the accumulator model gives their subnormals.
  int minExpA = -6, minExpB = -6;
};

/// Runs `t` into acc[i * kTileN + j] (zero on entry): for each chunk c of
/// `interval` K elements, partial = the chunk's sum of products (sequential
/// FP32 or the accumulator model), then
///   acc = fma(partial, scaleA[c][i] * scaleB[c][j], acc)   (scales given)
///   acc = acc + partial                                    (otherwise).
void runTileF32(const TileF32 &t, float *acc, bool portable);

/// acc[i * kTileN64 + j] = sum_k fma(a[k][i], b[k][j], .) in FP64, from
/// packed panels a[k * kTileM64 + i], b[k * kTileN64 + j].
void runTileF64(const double *a, const double *b, int64_t k, double *acc,
                bool portable);

/// True when the CPU (and OS) run AVX2 and FMA.
bool cpuHasAvx2Fma();

} // namespace fp8::numerics::detail

#endif // FP8_RUNTIME_NUMERICS_GEMMKERNELS_H
