//===- Quantize.h - FP8 quantization at every granularity -------*- C++ -*-===//
//
// Conventions (docs/numerics.md, "Quantization"):
//   x ~= decode(q) * scale, one scale per block of the granularity over the
//   tensor as stored (partial blocks at the edges get their own scale);
//   amax  = max |x| over the block;
//   scale = fl32(amax / fmt_max) for f32 scales (clamped to [2^-126, 2^127]),
//           that value rounded up to a power of two for f32_pow2 (at least
//           2^-126) and ue8m0 (at least 2^-127: code 0);
//   q     = RNE-saturating FP8 of fl32(x / scale) (IEEE division);
//   an all-zero block gets scale 1 (ue8m0 code 127) and zero codes (signed
//   like the input: -0 gives 0x80).
// NaN/inf inputs fail with a Status naming the first one (default) or, with
// NonFinitePolicy::Propagate, give their block a NaN scale (ue8m0 0xFF) and
// NaN codes (0x7F).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_QUANTIZE_H
#define FP8_RUNTIME_NUMERICS_QUANTIZE_H

#include "core/Recipe.h"
#include "core/Status.h"
#include "numerics/DelayedScaling.h"
#include "numerics/Stats.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fp8::numerics {

/// A quantized 2-D tensor as stored (row-major), with its scales.
struct QuantizedTensor {
  DType format = DType::E4M3FN; ///< E4M3FN or E5M2
  int64_t rows = 0;             ///< as stored
  int64_t cols = 0;
  Granularity granularity; ///< over the tensor as stored
  /// rows * cols FP8 codes, row-major.
  std::vector<uint8_t> codes;
  int64_t scaleRows = 0; ///< granularity.scaleRows(rows)
  int64_t scaleCols = 0; ///< granularity.scaleCols(cols)
  /// Decoded scales, row-major [scaleRows, scaleCols].
  std::vector<float> scales;
  /// The UE8M0 bytes of `scales` when granularity.scale is UE8M0, else empty.
  std::vector<uint8_t> scaleCodes;

  /// Rows (columns) of one scale block; the whole extent for kWhole.
  int64_t blockRows() const;
  int64_t blockCols() const;
  /// The scale of element (r, c).
  float scaleAt(int64_t r, int64_t c) const;
  /// decode(code) * scale of element (r, c), in FP32.
  float valueAt(int64_t r, int64_t c) const;
};

/// What quantize() does with NaN and infinite inputs.
enum class NonFinitePolicy : uint8_t {
  /// Fail with "expected finite inputs, found nan at (r, c) ..." naming the
  /// first one in row-major order. A training step would be skipped.
  Error,
  /// Quantize anyway: every block holding one gets a NaN scale (ue8m0 0xFF)
  /// and NaN codes, so the damage is visible downstream; the finite blocks
  /// are unaffected. Delayed scaling records no amax for such a step.
  Propagate,
};

/// Options of quantize() beyond the recipe.
struct QuantizeOptions {
  NonFinitePolicy nonFinite = NonFinitePolicy::Error;
  /// Per-tensor current scaling: the scale is made from this amax, not
  /// from x's (a GEMM epilogue computed it while writing x: the quantize
  /// that follows reads x once). Values it does not bound saturate; a NaN
  /// or infinite amax gives a NaN scale. Refused with any other recipe.
  std::optional<float> givenAmax;
};

/// Quantizes the row-major [rows, cols] tensor `x` as `recipe` says.
/// `stats`, when given, receives the statistics of this call (computing them
/// costs about as much as the quantization). Delayed scaling needs
/// `history` (built with the recipe's DelayedScaling); current scaling
/// rejects one. Errors: non-FP8 format, invalid granularity or
/// delayed-scaling parameters (fp8::RecipeRules), a missing or mismatched
/// history, non-finite inputs under NonFinitePolicy::Error.
Expected<QuantizedTensor> quantize(const float *x, int64_t rows, int64_t cols,
                                   const QuantRecipe &recipe,
                                   QuantStats *stats = nullptr,
                                   AmaxHistory *history = nullptr,
                                   const QuantizeOptions &options = {});

/// As quantize() for bf16 bit patterns (widened exactly to float first).
Expected<QuantizedTensor> quantizeBF16(const uint16_t *x, int64_t rows,
                                       int64_t cols, const QuantRecipe &recipe,
                                       QuantStats *stats = nullptr,
                                       AmaxHistory *history = nullptr,
                                       const QuantizeOptions &options = {});

/// The scale of a block whose amax is `amax` (see the file comment), with
/// the delayed-scaling margin (amax * 2^margin). Writes the UE8M0 byte to
/// `ue8m0Code` when the format is UE8M0 and the pointer is non-null. A
/// non-finite amax gives NaN (code 0xFF).
float scaleFromAmax(float amax, DType format, ScaleFormat scaleFormat,
                    int64_t margin = 0, uint8_t *ue8m0Code = nullptr);

/// x' = decode(q) * scale for every element, row-major [rows, cols].
std::vector<float> dequantize(const QuantizedTensor &q);
/// The same into `out` (rows * cols floats).
void dequantize(const QuantizedTensor &q, float *out);

/// The transposed tensor: [cols, rows] codes and [scaleCols, scaleRows]
/// scales, granularity (g.cols, g.rows). Exact: transpose(quantize(x, g))
/// equals quantize(x^T, transposed g), partial blocks included.
QuantizedTensor transpose(const QuantizedTensor &q);

/// Checks that the fields agree: an FP8 format, codes.size() == rows * cols,
/// the scale shape of the granularity, scaleCodes present exactly for UE8M0.
/// For tensors built by hand (e.g. read back from a GPU quantize kernel).
Status validate(const QuantizedTensor &q, std::string_view name = "tensor");

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_QUANTIZE_H
