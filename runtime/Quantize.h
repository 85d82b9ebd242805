//===- Quantize.h - FP8 quantize and transpose on the GPU -------*- C++ -*-===//
//
// What a framework calls to quantize a tensor on the GPU at any granularity
// of the recipe vocabulary (core/Recipe.h): per tensor, per row or column,
// 1 x C and R x C blocks, MX; current or delayed scaling. The kernels are
// the plan's quantize kernels (codegen/Elementwise.h, generated and
// JIT-compiled on first use, bit-identical to the CPU oracle's
// numerics::quantize); every argument is checked before anything reaches the
// GPU.
//
//   fp8::QuantizeTensors t{.x = X, .codes = Q, .scales = S};
//   fp8::QuantRecipe r;                     // E4M3, 1x128 tiles (DeepSeek)
//   r.granularity = fp8::Granularity::block(1, 128);
//   if (fp8::Status s = fp8::quantize(r, rows, cols, t, stream); !s)
//     std::cerr << s.message() << "\n";
//
// Layouts: x, codes row-major [batch, rows, cols], contiguous; scales
// row-major [batch, ceil(rows / r), ceil(cols / c)] for r x c blocks of
// each matrix (f32, or UE8M0 bytes) — the layout fp8::gemm reads by
// default. Delayed scaling (per tensor, one matrix) keeps its amax history
// in a device state buffer of amaxHistoryBytes(length) bytes, zeroed before
// its first use and passed unchanged to every later call.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_QUANTIZE_H
#define FP8_RUNTIME_QUANTIZE_H

#include "core/Recipe.h"
#include "core/Status.h"

#include <cuda.h>

#include <cstdint>

namespace fp8 {

/// Device pointers of one quantize.
struct QuantizeTensors {
  const void *x = nullptr; ///< the input, of type `xType`
  DType xType = DType::BF16;
  void *codes = nullptr;  ///< FP8 codes, x's shape
  void *scales = nullptr; ///< the scales (layout above)
  /// Delayed scaling: the amax history state (zeroed before the first call).
  void *history = nullptr;
  int64_t batch = 1; ///< matrices stacked along a leading dimension
  /// Codes and scales written transposed, [batch, cols, rows] and [batch,
  /// ceil(cols / c), ceil(rows / r)]: the quantize and the FP8 transpose of
  /// its result in one pass (x read once, the codes written once), for R x
  /// 1 blocks with current scaling (a 1 x R granularity on the transposed
  /// codes: the weight gradient's tokens, K-major for the GEMM).
  bool transposed = false;
  /// Per-tensor current scaling: the amax of each matrix, [batch] f32 on
  /// the device, already known (the GEMM that wrote x computed it:
  /// GemmTensors::amaxD), so that x is read once, not twice. The scales are
  /// made from it as from x's own; values it does not bound saturate.
  const float *amax = nullptr;
};

/// Bytes of the state of a delayed-scaling history of `length` amaxes.
int64_t amaxHistoryBytes(int64_t length);

/// True where quantize() can write the codes and scales of `recipe`
/// transposed in one pass (QuantizeTensors::transposed): the kernels'
/// column path, R x 1 blocks with R > 1 and current scaling. The one rule
/// checkQuantizeArgs applies and callers choosing between a transposed
/// quantize and quantize-then-transpose ask; touches no GPU.
bool quantizeWritesTransposed(const QuantRecipe &recipe);

/// Checks the arguments without touching the GPU: the recipe
/// (checkQuantRecipe), the shape (rows, cols >= 0, batch >= 1, below 2^40
/// elements each way), the pointers and their alignment (x to its element
/// size, f32 scales to 4 bytes), a history exactly for delayed scaling (of
/// one matrix), `transposed` only where the kernels write it
/// (quantizeWritesTransposed), a given amax only with per-tensor current
/// scaling, 4-byte aligned. Errors name the argument. An empty matrix
/// (no rows or no columns) has nothing to write and null pointers are
/// accepted, unless a scale would cover no elements (per-tensor, per-row
/// of no columns, per-column of no rows): refused.
Status checkQuantizeArgs(const QuantRecipe &recipe, int64_t rows, int64_t cols,
                         const QuantizeTensors &t);

/// Quantizes `batch` [rows, cols] matrices on `stream` (asynchronous, like a
/// kernel launch) on the runtime's device, after checkQuantizeArgs. A
/// machine without a GPU gets the driver's message at this first GPU call.
Status quantize(const QuantRecipe &recipe, int64_t rows, int64_t cols,
                const QuantizeTensors &t, CUstream stream);

/// Device pointers of an FP8 transpose.
struct TransposeTensors {
  const void *codes = nullptr;  ///< FP8 codes, [batch, rows, cols]
  const void *scales = nullptr; ///< their scales (granularity g, as above)
  void *outCodes = nullptr;     ///< [batch, cols, rows]
  /// [batch, g.scaleCols(cols), g.scaleRows(rows)]: the scales of the
  /// transposed codes, granularity (g.cols, g.rows).
  void *outScales = nullptr;
  int64_t batch = 1;
};

/// Checks the arguments of transpose() without touching the GPU: an FP8
/// format, the granularity, the shape (as checkQuantizeArgs), the pointers,
/// f32 scales 4-byte aligned. Errors name the argument.
Status checkTransposeArgs(DType format, const Granularity &g, int64_t rows,
                          int64_t cols, const TransposeTensors &t);

/// The FP8 transpose of quantized tensors (codes and scales, exact: what
/// quantizing the transposed input with the transposed granularity gives),
/// on `stream`: the on-demand transpose of an operand that a K-major-only
/// FP8 GEMM needs the other way round (a weight's for the input gradient).
Status transpose(DType format, const Granularity &g, int64_t rows, int64_t cols,
                 const TransposeTensors &t, CUstream stream);

} // namespace fp8

#endif // FP8_RUNTIME_QUANTIZE_H
