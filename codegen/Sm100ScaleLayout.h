//===- Sm100ScaleLayout.h - sm_100a UE8M0 scale layout ----------*- C++ -*-===//
//
// The sm_100a kernels apply every scale that varies along K through the
// block-scaled MMA (one UE8M0 byte per row and 32-element K block), read from
// global memory in the atom layout of codegen/kernels/sm100_scale_layout.cuh
// (the same constexpr functions the kernels use). This header names that
// layout for host code and packs scales into it:
//
//   - MX (1x32, ue8m0) scales are copied byte for byte;
//   - any other granularity with power-of-two scales (f32_pow2 or ue8m0:
//     DeepSeek's 1x128 activations and 128x128 weights, per-row, per-tensor)
//     is replicated to every 32-element K block and every row of its block,
//     which is exact: the block-scaled product equals the product with the
//     original scales;
//   - a scale that is not a power of two (plain f32) has no UE8M0 form and is
//     rejected, naming the element.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_SM100SCALELAYOUT_H
#define FP8_CODEGEN_SM100SCALELAYOUT_H

#include "codegen/kernels/sm100_scale_layout.cuh"
#include "core/Recipe.h"
#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fp8 {

/// Byte offset of the UE8M0 scale of row `r` and 32-element K block `kb` of
/// a K-major operand with `rows` rows (M for A, N for B). The kernel's TMA
/// coordinates and tensor-memory columns are derived from the same function.
inline int64_t sm100ScaleOffset(int64_t rows, int64_t r, int64_t kb) {
  return fp8k::sf::offset(rows, r, kb);
}

/// Bytes of the packed scales of a [rows, k] K-major operand (whole atoms of
/// 128 rows x 128 K elements, 512 bytes each).
inline int64_t sm100ScaleBytes(int64_t rows, int64_t k) {
  return fp8k::sf::total_bytes(rows, k);
}

/// The UE8M0 code of a power-of-two scale: its float exponent field (2^-127,
/// the float subnormal 0x00400000, is code 0); NaN gives 0xFF. Nothing for
/// zero, negative, infinite or non-power-of-two values.
std::optional<uint8_t> ue8m0OfPowerOfTwo(float scale);

/// Scales of one K-major operand as the oracle stores them
/// (numerics::QuantizedTensor: row-major [scaleRows, scaleCols] decoded
/// values over the operand as stored, `granularity` over [rows, k]).
struct ScaleTensorView {
  const float *scales = nullptr;
  int64_t rows = 0; ///< M (A) or N (B)
  int64_t k = 0;
  Granularity granularity;
};

/// Packs `view` into the sm_100a layout: for every row r < rows and K block
/// kb < ceil(k / 32), the byte at sm100ScaleOffset(rows, r, kb) is the UE8M0
/// code of the scale of element (r, 32 kb); padding bytes are 127 (1.0).
/// Fails when a 32-element K block would straddle two scales (a K block that
/// is not a multiple of 32) or a scale is not a power of two; `name` ("A",
/// "B") prefixes the message.
Expected<std::vector<uint8_t>> packSm100Scales(const ScaleTensorView &view,
                                               std::string_view name);

/// The decoded scale the kernel applies to row `r`, K block `kb` of packed
/// scales (2^(code - 127); NaN for 0xFF): the inverse of packSm100Scales for
/// the tests and for reading scales back.
float sm100ScaleAt(const std::vector<uint8_t> &packed, int64_t rows, int64_t r,
                   int64_t kb);

} // namespace fp8

#endif // FP8_CODEGEN_SM100SCALELAYOUT_H
