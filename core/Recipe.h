//===- Recipe.h - The FP8 recipe vocabulary ---------------------*- C++ -*-===//
//
// The plain-C++ twin of the `fp8` dialect's attributes: element and scale
// formats, quantization granularity, scaling mode. Every layer speaks it: the
// dialect's attributes map one-to-one onto these types, codegen turns them
// into kernels, the runtime's numerics quantize with them.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_RECIPE_H
#define FP8_CODEGEN_RECIPE_H

#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8 {

/// Element types of tensors the toolkit reads and writes.
enum class DType : uint8_t {
  E4M3FN, ///< FP8 E4M3, finite-only (max 448), NaN = S.1111.111
  E5M2,   ///< FP8 E5M2, IEEE-like (max 57344, inf, NaN)
  BF16,
  F16,
  F32,
  UE8M0, ///< exponent-only scale byte: 2^(e-127), 0xFF = NaN
  I32,   ///< 32-bit integers: MoE routing ids, group offsets, row maps
};

/// How a scale factor is stored and rounded.
enum class ScaleFormat : uint8_t {
  F32,     ///< any FP32 value: amax / format max
  F32Pow2, ///< FP32 rounded up to a power of two (exact rescaling)
  UE8M0,   ///< one byte, power of two (the MX scale format)
};

/// Current or delayed scaling (hifloat8-training.zh.txt, section 1.2).
enum class ScalingMode : uint8_t {
  Current, ///< amax of the block now
  Delayed, ///< amax predicted from a history of earlier steps
};

/// How a delayed-scaling amax is read off the history.
enum class AmaxAlgo : uint8_t {
  Max,        ///< the largest amax in the history
  MostRecent, ///< the last amax recorded
};

/// Physical layout of a GEMM operand. A is logically [M, K], B [N, K]
/// (D = A * B^T). K-major means K is the contiguous dimension: A stored as
/// [M, K], B stored as [N, K]. MN-major means A stored [K, M], B [K, N].
enum class Layout : uint8_t { KMajor, MNMajor };

/// Target GPU architectures.
enum class Arch : uint8_t { SM90a, SM100a };

/// One scale factor per block of `rows` x `cols` elements of a 2-D tensor as
/// it is stored (rows = dim 0, cols = dim 1). kWhole spans the whole
/// dimension, so per-tensor is (kWhole, kWhole), per-row (1, kWhole),
/// per-column (kWhole, 1), DeepSeek's activation tiles (1, 128), its weight
/// blocks (128, 128), MX (1, 32) with UE8M0 scales. Partial blocks at the
/// edges get their own scale (the ceil-div rule).
struct Granularity {
  static constexpr int64_t kWhole = 0;

  int64_t rows = kWhole;
  int64_t cols = kWhole;
  ScaleFormat scale = ScaleFormat::F32;

  static Granularity perTensor(ScaleFormat f = ScaleFormat::F32) {
    return {kWhole, kWhole, f};
  }
  static Granularity perRow(ScaleFormat f = ScaleFormat::F32) {
    return {1, kWhole, f};
  }
  static Granularity perColumn(ScaleFormat f = ScaleFormat::F32) {
    return {kWhole, 1, f};
  }
  static Granularity block(int64_t r, int64_t c,
                           ScaleFormat f = ScaleFormat::F32) {
    return {r, c, f};
  }
  static Granularity mx() { return {1, 32, ScaleFormat::UE8M0}; }

  bool isPerTensor() const { return rows == kWhole && cols == kWhole; }

  /// Block extent along a dimension of `size` elements.
  static int64_t extent(int64_t block, int64_t size) {
    return block == kWhole ? size : block;
  }
  /// Number of scales along a dimension of `size` elements (ceil-div rule,
  /// without overflow for sizes near INT64_MAX).
  static int64_t count(int64_t block, int64_t size) {
    if (block == kWhole)
      return 1;
    return size / block + (size % block != 0);
  }
  /// Scale tensor shape for a [r, c] tensor.
  int64_t scaleRows(int64_t r) const { return count(rows, r); }
  int64_t scaleCols(int64_t c) const { return count(cols, c); }

  bool operator==(const Granularity &o) const {
    return rows == o.rows && cols == o.cols && scale == o.scale;
  }
  bool operator!=(const Granularity &o) const { return !(*this == o); }
};

/// Delayed-scaling parameters (ignored for current scaling).
struct DelayedScaling {
  int64_t historyLength = 16; ///< amax values kept
  int64_t updateInterval = 1; ///< steps between amax measurements
  /// Headroom: scale = amax * 2^margin / format max (x ~= q * scale), so the
  /// quantized magnitudes stay below format max / 2^margin.
  int64_t margin = 0;
  AmaxAlgo algo = AmaxAlgo::Max;
};

/// How one tensor is quantized.
struct QuantRecipe {
  DType format = DType::E4M3FN;
  Granularity granularity;
  ScalingMode mode = ScalingMode::Current;
  DelayedScaling delayed;
};

/// The recipe of one GEMM D = A * B^T as `#fp8.recipe` states it on a
/// matmul: how A ([M, K]) and B ([N, K]) are quantized, in that logical
/// frame; the promotion interval (nullopt: tensor-core accumulation only);
/// the result type (bf16 or f32).
struct MatmulRecipe {
  QuantRecipe a, b;
  std::optional<int64_t> promotionInterval = 128;
  DType out = DType::BF16;
};

//===----------------------------------------------------------------------===//
// Names, as the dialect and the JSON plans spell them.
//===----------------------------------------------------------------------===//

/// "e4m3fn", "e5m2", "bf16", "f16", "f32", "ue8m0".
std::string_view toString(DType t);
/// The short spelling in kernel names: "e4m3", "e5m2", "bf16", "f16",
/// "f32", "e8m0".
std::string_view tagOf(DType t);
/// MLIR's spelling of the element type: "f8E4M3FN", "f8E5M2", "bf16",
/// "f16", "f32", "f8E8M0FNU".
std::string_view mlirNameOf(DType t);
/// "f32", "f32_pow2", "ue8m0".
std::string_view toString(ScaleFormat f);
/// "current", "delayed".
std::string_view toString(ScalingMode m);
/// "max", "most_recent".
std::string_view toString(AmaxAlgo a);
/// "k_major", "mn_major".
std::string_view toString(Layout l);
/// "sm_90a", "sm_100a".
std::string_view toString(Arch a);
/// "per_tensor", "per_row", "per_column", "1x128", "128x128", "1x32" (and
/// "<rows>x<cols>" in general), with ":<scale format>" appended unless f32.
std::string toString(const Granularity &g);

/// Any spelling of toString, tagOf or mlirNameOf.
std::optional<DType> parseDType(std::string_view s);
std::optional<ScaleFormat> parseScaleFormat(std::string_view s);
std::optional<ScalingMode> parseScalingMode(std::string_view s);
std::optional<AmaxAlgo> parseAmaxAlgo(std::string_view s);
std::optional<Layout> parseLayout(std::string_view s);
std::optional<Arch> parseArch(std::string_view s);
/// Inverse of toString(Granularity); also accepts "mx" for 1x32:ue8m0.
Expected<Granularity> parseGranularity(std::string_view s);

/// Bytes per element.
int64_t sizeOf(DType t);
/// True for the two FP8 element formats.
inline bool isFP8(DType t) { return t == DType::E4M3FN || t == DType::E5M2; }
/// True for the high-precision element types: bf16, f16 and f32.
inline bool isWide(DType t) {
  return t == DType::BF16 || t == DType::F16 || t == DType::F32;
}
/// Largest finite value of an FP8 element format (448 or 57344).
float fp8MaxFinite(DType t);

} // namespace fp8

#endif // FP8_CODEGEN_RECIPE_H
