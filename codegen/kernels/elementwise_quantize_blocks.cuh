//===- elementwise_quantize_blocks.cuh - Quantize, R x C blocks *- CUDA -*-===//
//
// Quantize of R x C tiles (the tile path) and any other granularity or
// delayed scaling (amax, scales and codes in three entry points; per-tensor
// blocks walk the tensor flat in two, the scale made at the end of pass 1
// with delayed scaling, at the start of the codes pass with current
// scaling: elementwise_quantize_tensor.cuh). R x 1
// blocks: elementwise_quantize_cols.cuh.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"
#include "fp8/elementwise_quantize_tensor.cuh"
#include "fp8/fp8_delayed.h"

namespace fp8k {

//===----------------------------------------------------------------------===//
// Quantize, R x C blocks (tile_path: 128x128): a CTA per block
//===----------------------------------------------------------------------===//

/// The tile path's CTA: 256 threads, kLanes threads a block row (eight
/// columns each), kRowsPerStep rows a step, kSteps steps a block; kSteps
/// up to kMaxSteps keep the block's raw loads in registers (one read).
template <class Q> struct TileShape {
  // (8 when the width has no vector path: the tile path is then never run)
  static constexpr int kLanes = row_vec_lanes(Q::kBlockCols) > 0
                                    ? row_vec_lanes(Q::kBlockCols)
                                    : 8;
  static constexpr int kRowsPerStep = 256 / kLanes;
  static constexpr int kSteps =
      int((Q::kBlockRows + kRowsPerStep - 1) / kRowsPerStep);
  static constexpr int kMaxSteps = 8;
};

/// The tile path with the block in registers: thread t takes the chunk of
/// eight columns (t % kLanes) of the block's rows t / kLanes + kRowsPerStep
/// j, j < kSteps; every load is issued (Prog::load_raw) before the program
/// runs over any, the values are evaluated once for the amax and again
/// (from the registers: the program is deterministic) for the codes, so
/// the block is read once. Needs cols % 8 == 0 and aligned tensors
/// (quantize_tile_body checks); a chunk past the block's rows or the
/// tensor's columns holds nothing.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_tile_cached_body(const EwParams &p) {
  using S = TileShape<Q>;
  constexpr int kJ = S::kSteps;
  __shared__ u32 warpMax[8];
  const int t = int(threadIdx.x);
  const int first = t / S::kLanes;
  const i64 cb = blockIdx.x;
  const i64 c = cb * Q::kBlockCols + (t % S::kLanes) * 8;
  const bool colIn = c < p.cols;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    bool in[kJ];
    typename Prog::template Raw<8> raw[kJ];
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      const int r = first + S::kRowsPerStep * j;
      in[j] = colIn && r < blk.rows;
      if (in[j])
        Prog::template load_raw<8>(p, blk.base + r * p.cols + c, blk.row0 + r,
                                   raw[j]);
    }
    u32 m = 0;
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      float x[8];
      Prog::template eval_raw<8>(raw[j], x);
      if (in[j])
        m = max_abs_bits<8>(x, m);
    }
    m = cta_max(m, warpMax);
    const float s = block_scale<Q>(p, m, t == 0, u * p.scaleCols + cb, u, cb);
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll
    for (int j = 0; j < kJ; ++j)
      if (in[j]) {
        float x[8];
        Prog::template eval_raw<8>(raw[j], x);
        u32 w[2];
        quantize_codes<8>(x, d, Q::kFormat, w);
        store_code_words<8>(
            codes, blk.base + (first + S::kRowsPerStep * j) * p.cols + c, 8,
            true, w);
      }
  }
}

/// The tile path for unaligned tensors, rows of a length not a multiple of
/// 8 and blocks taller than the registers hold: each element read twice, for
/// the block's amax, then for its codes (the second read from the L2: a
/// 128x128 bf16 block is 32 KiB).
template <class Prog, class Q>
__device__ __forceinline__ void quantize_tile_reread_body(const EwParams &p) {
  using S = TileShape<Q>;
  __shared__ u32 warpMax[8];
  const int t = int(threadIdx.x);
  const int part = t % S::kLanes, first = t / S::kLanes;
  const i64 cb = blockIdx.x;
  const i64 c = cb * (Q::kBlockCols > 0 ? Q::kBlockCols : 8) + part * 8;
  const int n = p.cols - c <= 0 ? 0 : (p.cols - c < 8 ? int(p.cols - c) : 8);
  const bool vec =
      p.cols % 8 == 0 && Prog::aligned(p, 16) && is_aligned(p.out, 8) && n == 8;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    u32 m = 0;
#pragma unroll 4
    for (i64 r = first; r < blk.rows; r += S::kRowsPerStep) {
      float v[8];
      Prog::template eval_n<8>(p, blk.base + r * p.cols + c, n, vec, v);
      m = max_abs_bits<8>(v, m);
    }
    m = cta_max(m, warpMax);
    const float s = block_scale<Q>(p, m, t == 0, u * p.scaleCols + cb, u, cb);
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll 4
    for (i64 r = first; r < blk.rows; r += S::kRowsPerStep) {
      const i64 i = blk.base + r * p.cols + c;
      float v[8];
      Prog::template eval_n<8>(p, i, n, vec, v);
      u32 w[2];
      quantize_codes<8>(v, d, Q::kFormat, w);
      store_code_words<8>(codes, i, n, vec, w);
    }
  }
}

/// A CTA of 256 threads per block (blockIdx.x its column block, blockIdx.y
/// walking the block rows of every batch); one kernel, no atomics, no amax
/// scratch.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_tile_body(const EwParams &p) {
  using S = TileShape<Q>;
  if constexpr (S::kSteps <= S::kMaxSteps) {
    if (p.cols % 8 == 0 && Prog::aligned(p, 16) && is_aligned(p.out, 8))
      quantize_tile_cached_body<Prog, Q>(p);
    else
      quantize_tile_reread_body<Prog, Q>(p);
  } else {
    quantize_tile_reread_body<Prog, Q>(p);
  }
}

//===----------------------------------------------------------------------===//
// Quantize, any granularity: amax per block, scales, codes
//===----------------------------------------------------------------------===//

/// Pass 1: the amax of every block, as atomicMax of the |x| bits. Threads
/// of a warp share a block when column blocks are whole or multiples of 32
/// (a warp reduces first); the whole CTA shares it when they are whole or
/// multiples of the CTA's width (one atomic per CTA and block row). Block
/// boundaries depend on the row only, so every thread of the CTA flushes at
/// the same rows and the reductions are uniform.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_amax_body(const EwParams &p) {
  constexpr bool kWarpUniform = Q::kBlockCols == 0 || Q::kBlockCols % 32 == 0;
  constexpr bool kCtaUniform =
      Q::kBlockCols == 0 || Q::kBlockCols % kColsPerCta == 0;
  __shared__ u32 ctaMax;
  if (Q::kBlockRows == 0 && Q::kBlockCols == 0) {
    quantize_amax_tensor_body<Prog, Q>(p);
    return;
  }
  if (p.cols == 0)
    return;
  const i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = c < p.cols;
  const i64 total = p.batch * p.rows;
  for (i64 chunk = blockIdx.y; chunk * kRowChunk < total; chunk += gridDim.y) {
    const i64 r0 = chunk * kRowChunk;
    const i64 r1 = r0 + kRowChunk < total ? r0 + kRowChunk : total;
    BlockWalk<Q> w(p, r0, c);
    for (i64 r = r0; r < r1;) {
      const i64 blk = w.block();
      u32 m = 0;
      do { // the rows of this block in the chunk
        if (active) {
          const u32 bits = abs_bits(Prog::eval(p, r * p.cols + c));
          m = bits > m ? bits : m;
        }
        w.next();
        ++r;
      } while (r < r1 && !w.startsBlock());
      if (kWarpUniform)
        m = warp_max(m);
      if (kCtaUniform) {
        if (threadIdx.x == 0)
          ctaMax = 0;
        __syncthreads();
        if ((threadIdx.x & 31) == 0 && m)
          atomicMax(&ctaMax, m);
        __syncthreads();
        if (threadIdx.x == 0 && ctaMax)
          atomicMax(&p.amax[blk], ctaMax);
        __syncthreads();
      } else if (kWarpUniform) {
        if ((threadIdx.x & 31) == 0 && m)
          atomicMax(&p.amax[blk], m);
      } else if (active && m) {
        atomicMax(&p.amax[blk], m);
      }
    }
  }
}

/// Pass 2 (not of per-tensor blocks, whose scales pass 1 makes with delayed
/// scaling and the codes pass with current scaling): one thread per block
/// turns its amax into a scale and resets the amax for the next call
/// (make_block_scale).
template <class Q>
__device__ __forceinline__ void quantize_scales_body(const EwParams &p) {
  static_assert(!Q::kDelayed, "delayed scaling is per tensor");
  const i64 n = p.batch * p.scaleRows * p.scaleCols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    make_block_scale<Q>(p, i, p.amax[i], 0.0f);
}

/// Pass 3: the codes, with the scale of each element's block (delayed
/// scaling: only when pass 1's were not made with the step's scale;
/// per-tensor current scaling makes its scales here).
template <class Prog, class Q>
__device__ __forceinline__ void quantize_apply_body(const EwParams &p) {
  if (Q::kDelayed && !static_cast<const AmaxHistoryState *>(p.history)->refit)
    return;
  if (Q::kBlockRows == 0 && Q::kBlockCols == 0) {
    if constexpr (Q::kDelayed) {
      const bool backward = tensor_walks_backward<Prog>(p);
      for (i64 j = 0; j < p.batch; ++j) {
        const i64 b = backward ? p.batch - 1 - j : j;
        tensor_codes<Prog, Q>(p, b, load_scale<Q>(p.scale, b));
      }
    } else {
      tensor_codes_making_scales<Prog, Q>(p);
    }
    return;
  }
  const i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.cols) // also p.cols == 0
    return;
  u8 *codes = static_cast<u8 *>(p.out);
  const i64 total = p.batch * p.rows;
  for (i64 chunk = blockIdx.y; chunk * kRowChunk < total; chunk += gridDim.y) {
    const i64 r0 = chunk * kRowChunk;
    const i64 r1 = r0 + kRowChunk < total ? r0 + kRowChunk : total;
    BlockWalk<Q> w(p, r0, c);
    float s = load_scale<Q>(p.scale, w.block());
    for (i64 r = r0; r < r1; ++r) {
      if (r != r0 && w.startsBlock())
        s = load_scale<Q>(p.scale, w.block());
      const i64 i = r * p.cols + c;
      codes[i] = quantize_value(Prog::eval(p, i), s, Q::kFormat);
      w.next();
    }
  }
}

} // namespace fp8k
