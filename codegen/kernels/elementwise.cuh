//===- elementwise.cuh - Quantize, transpose, elementwise ------*- CUDA -*-===//
//
// Device code of the plan's non-GEMM steps. A generated translation unit
// (codegen/Elementwise.cpp) defines, in namespace fp8k, before including this
// header:
//   struct Prog { static float eval(const EwParams &p, i64 i); };
//     the value of flat element i (the elementwise program, rounded to its
//     result type; for a plain quantize, input 0 widened to float);
//   struct Q { kFormat, kScaleFmt, kBlockRows, kBlockCols (0 = whole),
//              kDelayed, kHistory, kInterval, kMargin, kAlgo,
//              kTransposed (the column path's codes and scales written
//              transposed), kAmaxIn (per-tensor blocks' amax given) };
// and one extern "C" __global__ entry point per kernel that calls a body
// below or in the elementwise_*.cuh included here. Every arithmetic operation
// is one of fp8_math.h's, so each value, amax, scale and code equals the CPU
// oracle's (docs/pipeline.md, "How the GPU matches the oracle").
//
// Plain CUDA C++, no include path, no CUDA header: NVRTC compiles a TU in
// about 0.1 s. Versioned with the kernels: a change here changes every cache
// key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"
#include "fp8/elementwise_moe.cuh"
#include "fp8/elementwise_quantize_blocks.cuh"
#include "fp8/elementwise_quantize_cols.cuh"
#include "fp8/elementwise_quantize_rows.cuh"
#include "fp8/elementwise_table.cuh"
#include "fp8/elementwise_transpose.cuh"

namespace fp8k {

//===----------------------------------------------------------------------===//
// Elementwise: out[i] = Prog(i)
//===----------------------------------------------------------------------===//

/// Eight elements a thread, in 16-byte loads and stores, when the inputs and
/// the output are 16-byte aligned (Prog::aligned); the last n % 8 elements,
/// or every element of unaligned tensors, one a thread.
template <class Prog, int OutT>
__device__ __forceinline__ void elementwise_body(const EwParams &p) {
  const i64 n = p.batch * p.rows * p.cols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  i64 done = 0;
  if (Prog::aligned(p, 16) && is_aligned(p.out, 16)) {
    done = n / 8 * 8;
    for (i64 q = first; q < n / 8; q += stride) {
      float v[8];
      Prog::template eval_vec<8>(p, q * 8, v);
      store_vec<OutT, 8>(p.out, q * 8, v);
    }
  }
  for (i64 i = done + first; i < n; i += stride)
    store_elem<OutT>(p.out, i, Prog::eval(p, i));
}

//===----------------------------------------------------------------------===//
// Reduce: out[r] = the sum of Prog over row r, in f32
//===----------------------------------------------------------------------===//

/// A CTA of kReduceThreads threads per row (striding over the rows): thread
/// t adds the values of the row's chunks t, t + kReduceThreads, ... (of
/// kReduceChunk consecutive columns, 16-byte loads when the row length and
/// the inputs allow) to +0 in column order; cta_row_sum adds the threads'
/// sums in codegen/Elementwise.h's reduceRow order, the oracle's.
template <class Prog>
__device__ __forceinline__ void reduce_rows_body(const EwParams &p) {
  static_assert(kReduceChunk == 8, "eval_n<8> below");
  __shared__ float warp_sum[kReduceThreads / 32];
  const i64 units = p.batch * p.rows;
  const int t = int(threadIdx.x);
  const bool vec = p.cols % 8 == 0 && Prog::aligned(p, 16);
  float *out = static_cast<float *>(p.out);
  for (i64 row = blockIdx.x; row < units; row += gridDim.x) {
    const i64 base = row * p.cols;
    const float acc = thread_row_sum(p.cols, t, [&](i64 c, int n, float *v) {
      Prog::template eval_n<8>(p, base + c, n, vec, v);
    });
    const float total = cta_row_sum(acc, warp_sum);
    if (t == 0)
      out[row] = total;
    __syncthreads();
  }
}

//===----------------------------------------------------------------------===//
// Interleave: the rows of two matrices in alternating blocks
//===----------------------------------------------------------------------===//

/// out [2R, C] from in[0] and in[1] [R, C], elements of kBytes bytes: rows
/// [2kB, 2kB + B) of out are rows [kB, kB + B) of in[0], the B rows after
/// them those of in[1] (B = p.scaleCols, R = p.rows a multiple of B). A
/// thread per 16 bytes when rows are whole 16-byte units and the tensors
/// aligned, else per element.
template <int kBytes>
__device__ __forceinline__ void interleave_rows_body(const EwParams &p) {
  static_assert(kBytes == 2 || kBytes == 4, "bf16, f16 or f32 rows");
  const i64 block = p.scaleCols;
  const i64 rowBytes = p.cols * kBytes;
  const bool vec = rowBytes % 16 == 0 && is_aligned(p.in[0], 16) &&
                   is_aligned(p.in[1], 16) && is_aligned(p.out, 16);
  const i64 unit = vec ? 16 : kBytes;
  const i64 perRow = rowBytes / unit;
  const i64 n = 2 * p.rows * perRow;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 u = i64(blockIdx.x) * blockDim.x + threadIdx.x; u < n; u += stride) {
    const i64 r = u / perRow, c = u - r * perRow;
    const i64 pair = r / (2 * block), within = r - pair * 2 * block;
    const int which = within >= block ? 1 : 0;
    const i64 src = pair * block + within - which * block;
    const u8 *from =
        static_cast<const u8 *>(p.in[which]) + src * rowBytes + c * unit;
    u8 *to = static_cast<u8 *>(p.out) + r * rowBytes + c * unit;
    if (vec)
      *reinterpret_cast<uint4 *>(to) = *reinterpret_cast<const uint4 *>(from);
    else if (kBytes == 4)
      *reinterpret_cast<u32 *>(to) = *reinterpret_cast<const u32 *>(from);
    else
      *reinterpret_cast<u16 *>(to) = *reinterpret_cast<const u16 *>(from);
  }
}

} // namespace fp8k
