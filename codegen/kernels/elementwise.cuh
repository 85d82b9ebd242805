//===- elementwise.cuh - Quantize, transpose, elementwise ------*- CUDA -*-===//
//
// Device code of the plan's non-GEMM steps. A generated translation unit
// (codegen/Elementwise.cpp) defines, in namespace fp8k, before including this
// header:
//   struct Prog { static float eval(const EwParams &p, i64 i); };
//     the value of flat element i (the elementwise program, rounded to its
//     result type; for a plain quantize, input 0 widened to float);
//   struct Q { kFormat, kScaleFmt, kBlockRows, kBlockCols (0 = whole),
//              kDelayed, kHistory, kInterval, kMargin, kAlgo };
// and one extern "C" __global__ entry point per kernel that calls a body
// below. Every arithmetic operation is one of fp8_math.h's, so each value,
// amax, scale and code equals the CPU oracle's (docs/pipeline.md, "How the
// GPU matches the oracle").
//
// Plain CUDA C++, no include path, no CUDA header: NVRTC compiles a TU in
// about 0.1 s. Versioned with the kernels: a change here changes every cache
// key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_params.h"

namespace fp8k {

static_assert(sizeof(EwParams) == 128, "must match the host's EwParams");

/// Element `i` of a tensor of element type T, widened to float.
template <int T>
__device__ __forceinline__ float load_elem(const void *p, i64 i) {
  if (T == kBF16)
    return bf16_to_float(static_cast<const u16 *>(p)[i]);
  if (T == kF16)
    return f16_to_float(static_cast<const u16 *>(p)[i]);
  return static_cast<const float *>(p)[i];
}

/// Stores `v` (already rounded to T by the program) as element type T.
template <int T>
__device__ __forceinline__ void store_elem(void *p, i64 i, float v) {
  if (T == kBF16)
    static_cast<u16 *>(p)[i] = float_to_bf16(v);
  else if (T == kF16)
    static_cast<u16 *>(p)[i] = float_to_f16(v);
  else
    static_cast<float *>(p)[i] = v;
}

__device__ __forceinline__ u32 warp_max(u32 v) {
  for (int o = 16; o > 0; o >>= 1) {
    const u32 other = __shfl_xor_sync(0xFFFFFFFFu, v, o);
    v = other > v ? other : v;
  }
  return v;
}

/// Writes scale `i` (f32, or its UE8M0 byte).
template <class Q>
__device__ __forceinline__ void store_scale(void *scales, i64 i, float s,
                                            u8 code) {
  if (Q::kScaleFmt == kScaleUE8M0)
    static_cast<u8 *>(scales)[i] = code;
  else
    static_cast<float *>(scales)[i] = s;
}

/// Writes scale (r, c) of the stacked [batch * scaleRows, scaleCols] grid
/// to the mirror too, when there is one (EwParams::scaleMirror).
// NOTE: the row path knows (r, c): no second 64-bit division there.
template <class Q>
__device__ __forceinline__ void store_scale_mirror(const EwParams &p, i64 r,
                                                   i64 c, float s, u8 code) {
  if (!p.scaleMirror)
    return;
  store_scale<Q>(p.scaleMirror,
                 r * i64(p.mirrorStrideRows) + c * i64(p.mirrorStrideCols), s,
                 code);
}

template <class Q>
__device__ __forceinline__ float load_scale(const void *s, i64 i) {
  if (Q::kScaleFmt == kScaleUE8M0)
    return ue8m0_to_float(static_cast<const u8 *>(s)[i]);
  return static_cast<const float *>(s)[i];
}

//===----------------------------------------------------------------------===//
// Elementwise: out[i] = Prog(i)
//===----------------------------------------------------------------------===//

template <class Prog, int OutT>
__device__ __forceinline__ void elementwise_body(const EwParams &p) {
  const i64 n = p.batch * p.rows * p.cols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    store_elem<OutT>(p.out, i, Prog::eval(p, i));
}

//===----------------------------------------------------------------------===//
// Quantize, row blocks (1 x C, 1 x whole): one warp per block, one pass
//===----------------------------------------------------------------------===//

/// Values a lane keeps in registers: the row path's block columns or the
/// column path's block rows, a thread's share (blocks up to 256 wide or
/// tall); 0: the block is longer, and the program is evaluated twice (it is
/// deterministic: both evaluations give the same bits).
template <int kBlock, int kThreads> struct CachedValues {
  static constexpr int kPer = kBlock > 0 && kBlock <= 256
                                  ? (kBlock + kThreads - 1) / kThreads
                                  : 0;
};

/// One warp per (row, column block): the block's amax (warp max of the
/// |x| bits), its scale, then its codes. Lane l takes columns l, l + 32, ...
/// of the block (each step a contiguous warp access); blocks of up to 256
/// columns are evaluated once, their values kept in registers.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_rows_body(const EwParams &p) {
  constexpr int kPer = CachedValues<int(Q::kBlockCols), 32>::kPer;
  const i64 bc = Q::kBlockCols ? i64(Q::kBlockCols) : p.cols;
  const i64 nbc = p.scaleCols;
  const i64 units = p.batch * p.rows * nbc;
  const int lane = int(threadIdx.x & 31);
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = warp; u < units; u += warps) {
    const i64 row = u / nbc, cb = u - row * nbc;
    const i64 c0 = cb * bc;
    const i64 c1 = c0 + bc < p.cols ? c0 + bc : p.cols;
    const i64 base = row * p.cols;
    u32 m = 0;
    float v[kPer > 0 ? kPer : 1];
    if (kPer > 0) {
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const i64 c = c0 + lane + 32 * j;
        v[j] = c < c1 ? Prog::eval(p, base + c) : 0.0f;
        const u32 b = abs_bits(v[j]);
        m = b > m ? b : m;
      }
    } else {
      for (i64 c = c0 + lane; c < c1; c += 32) {
        const u32 b = abs_bits(Prog::eval(p, base + c));
        m = b > m ? b : m;
      }
    }
    m = warp_max(m);
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (lane == 0) {
      store_scale<Q>(p.scale, u, s, code);
      store_scale_mirror<Q>(p, row, cb, s, code);
    }
    if (kPer > 0) {
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const i64 c = c0 + lane + 32 * j;
        if (c < c1)
          codes[base + c] = quantize_value(v[j], s, Q::kFormat);
      }
    } else {
      for (i64 c = c0 + lane; c < c1; c += 32)
        codes[base + c] =
            quantize_value(Prog::eval(p, base + c), s, Q::kFormat);
    }
  }
}

//===----------------------------------------------------------------------===//
// Quantize, column blocks (R x 1): one thread per block, one pass
//===----------------------------------------------------------------------===//

/// Block row `u` of an R x 1 quantize (the stacked [batch * scaleRows]
/// grid): the flat index of its first row's column 0 and its rows (the last
/// block row of a batch may be short).
template <class Q> struct ColumnBlock {
  i64 base, rows;
  __device__ __forceinline__ ColumnBlock(const EwParams &p, i64 u) {
    const i64 b = u / p.scaleRows;
    const i64 r0 = (u - b * p.scaleRows) * Q::kBlockRows;
    rows = p.rows - r0 < Q::kBlockRows ? p.rows - r0 : i64(Q::kBlockRows);
    base = (b * p.rows + r0) * p.cols;
  }
};

/// One block (R rows of one column) per CTA column: the column's amax over
/// the block, its scale, then its codes (the 128x1 activations of the weight
/// gradients: one scale per 128 tokens of a channel). A CTA covers 32
/// consecutive columns (a lane each: every row's loads and stores are
/// contiguous across the warp) of one block row (blockIdx.y walks the block
/// rows of every batch); its 8 warps split the block's rows (warp w takes
/// rows w, w + 8, ...), keep their values in registers (blocks of up to 256
/// rows) and join their maxima in shared memory.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_cached_body(const EwParams &p) {
  constexpr int kPer = CachedValues<int(Q::kBlockRows), kColWarps>::kPer;
  __shared__ u32 partial[kColWarps][kColLanes];
  const int lane = int(threadIdx.x % kColLanes);
  const int w = int(threadIdx.x / kColLanes);
  const i64 c = i64(blockIdx.x) * kColLanes + lane;
  const bool active = c < p.cols;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    const i64 base = blk.base + c;
    float v[kPer > 0 ? kPer : 1];
    u32 m = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const i64 r = w + kColWarps * j;
      v[j] = active && r < blk.rows ? Prog::eval(p, base + r * p.cols) : 0.0f;
      const u32 bits = abs_bits(v[j]);
      m = bits > m ? bits : m;
    }
    partial[w][lane] = m;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kColWarps; ++k)
      m = partial[k][lane] > m ? partial[k][lane] : m;
    __syncthreads(); // `partial` is reused by the next block row
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (active && w == 0) {
      store_scale<Q>(p.scale, u * p.scaleCols + c, s, code);
      store_scale_mirror<Q>(p, u, c, s, code);
    }
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const i64 r = w + kColWarps * j;
      if (active && r < blk.rows)
        codes[base + r * p.cols] = quantize_value(v[j], s, Q::kFormat);
    }
  }
}

/// The column path for blocks taller than 256 rows: one thread per (block
/// row, column), the program evaluated twice per element (the second reads
/// come back from the caches). A CTA covers kColsPerCta consecutive columns
/// of one block row.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_long_body(const EwParams &p) {
  const i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.cols) // also p.cols == 0
    return;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    const i64 first = blk.base + c, end = first + blk.rows * p.cols;
    u32 m = 0;
#pragma unroll 8
    for (i64 i = first; i < end; i += p.cols) {
      const u32 bits = abs_bits(Prog::eval(p, i));
      m = bits > m ? bits : m;
    }
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    store_scale<Q>(p.scale, u * p.scaleCols + c, s, code);
    store_scale_mirror<Q>(p, u, c, s, code);
#pragma unroll 8
    for (i64 i = first; i < end; i += p.cols)
      codes[i] = quantize_value(Prog::eval(p, i), s, Q::kFormat);
  }
}

/// The column path: R x 1 blocks, one kernel.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_body(const EwParams &p) {
  if (CachedValues<int(Q::kBlockRows), kColWarps>::kPer > 0)
    quantize_cols_cached_body<Prog, Q>(p);
  else
    quantize_cols_long_body<Prog, Q>(p);
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

/// Pass 2: one thread per block turns its amax into a scale (through the
/// amax history for delayed scaling) and resets the amax for the next call.
template <class Q>
__device__ __forceinline__ void quantize_scales_body(const EwParams &p) {
  const i64 n = p.batch * p.scaleRows * p.scaleCols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const u32 bits = p.amax[i];
    u8 code;
    float s;
    if (Q::kDelayed) {
      // Delayed scaling is per tensor (fp8::checkScalingMode): n == 1.
      AmaxHistoryState *st = static_cast<AmaxHistoryState *>(p.history);
      float *values = reinterpret_cast<float *>(st + 1);
      s = delayed_scale_step(st, values, Q::kHistory, Q::kInterval, Q::kMargin,
                             Q::kAlgo, bits, Q::kFormat, Q::kScaleFmt, &code);
    } else {
      s = scale_from_amax(u2f(bits), Q::kFormat, Q::kScaleFmt, 0, &code);
    }
    store_scale<Q>(p.scale, i, s, code);
    if (p.scaleMirror) {
      const i64 r = i / p.scaleCols;
      store_scale_mirror<Q>(p, r, i - r * p.scaleCols, s, code);
    }
    p.amax[i] = 0;
  }
}

/// Pass 3: the codes, with the scale of each element's block.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_apply_body(const EwParams &p) {
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

//===----------------------------------------------------------------------===//
// Transpose of FP8 codes and their scales (the on-demand transpose)
//===----------------------------------------------------------------------===//

/// [batch, rows, cols] codes -> [batch, cols, rows], through a 32 x 32 tile
/// in shared memory; blocks of 32 x 8 threads, grid (cols/32, rows/32,
/// batch).
__device__ __forceinline__ void transpose_codes_body(const EwParams &p) {
  __shared__ u8 tile[32][33];
  const u8 *in = static_cast<const u8 *>(p.in[0]);
  u8 *out = static_cast<u8 *>(p.out);
  const i64 plane = p.rows * p.cols;
  for (i64 b = blockIdx.z; b < p.batch; b += gridDim.z) {
    for (i64 ty = blockIdx.y; ty * 32 < p.rows; ty += gridDim.y) {
      for (i64 tx = blockIdx.x; tx * 32 < p.cols; tx += gridDim.x) {
        const i64 c = tx * 32 + threadIdx.x;
        for (int j = threadIdx.y; j < 32; j += 8) {
          const i64 r = ty * 32 + j;
          if (r < p.rows && c < p.cols)
            tile[j][threadIdx.x] = in[b * plane + r * p.cols + c];
        }
        __syncthreads();
        const i64 r = ty * 32 + threadIdx.x; // output column
        for (int j = threadIdx.y; j < 32; j += 8) {
          const i64 oc = tx * 32 + j; // output row
          if (r < p.rows && oc < p.cols)
            out[b * plane + oc * p.rows + r] = tile[threadIdx.x][j];
        }
        __syncthreads();
      }
    }
  }
}

/// [batch, scaleRows, scaleCols] scales -> [batch, scaleCols, scaleRows].
template <int kScaleBytes>
__device__ __forceinline__ void transpose_scales_body(const EwParams &p) {
  const i64 sr = p.scaleRows, sc = p.scaleCols;
  const i64 n = p.batch * sr * sc;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const i64 b = i / (sr * sc), rem = i - b * sr * sc;
    const i64 r = rem / sc, c = rem - r * sc;
    const i64 o = b * sr * sc + c * sr + r;
    if (kScaleBytes == 1)
      static_cast<u8 *>(p.scale)[o] = static_cast<const u8 *>(p.scaleIn)[i];
    else
      static_cast<float *>(p.scale)[o] =
          static_cast<const float *>(p.scaleIn)[i];
  }
}

//===----------------------------------------------------------------------===//
// MoE routing: permute (route, then gather + quantize), unpermute
//===----------------------------------------------------------------------===//

/// Threads of the routing kernel's CTA (one CTA per expert).
enum : int { kRouteThreads = 256 };

/// The routing of a permute step (EwParams, "MoE steps"): CTA e counts
/// every expert's tokens (a shared-memory histogram), takes its group's
/// padded offset from the counts before it, and writes the rows of its
/// tokens in token order: positions[i] for each routing slot i = t * topK +
/// j with ids[i] == e, and source[row] = t. It also writes its group's
/// padding rows, whole: source -1, the codes and scales of zeros; CTA 0
/// writes the offsets, the rows after the last group alike and the
/// positions of ids outside [0, E) (such a slot is dropped). Every row and
/// slot is written, so the step needs no clearing between runs; the
/// gather-quantize that follows writes the tokens' rows.
template <class Q>
__device__ __forceinline__ void moe_route_body(const EwParams &p) {
  u8 zeroCode;
  const float zeroScale =
      scale_from_amax(0.0f, Q::kFormat, Q::kScaleFmt, 0, &zeroCode);
  const u8 zero = quantize_value(0.0f, zeroScale, Q::kFormat);
  u8 *codes = static_cast<u8 *>(p.out);
  __shared__ int hist[kMaxMoeExperts];
  __shared__ int scan[kRouteThreads];
  __shared__ i64 groupStart, groupCount;
  const int *ids = static_cast<const int *>(p.in[1]);
  int *offsets = reinterpret_cast<int *>(p.amax);
  int *positions = static_cast<int *>(p.history);
  int *source = static_cast<int *>(p.scaleMirror);
  const i64 topK = p.mirrorStrideRows, experts = p.scaleRows;
  const i64 align = p.mirrorStrideCols, n = p.batch * topK;
  const int t = int(threadIdx.x);
  // This thread's run of routing slots: contiguous, so that ranks follow
  // token order.
  const i64 per = (n + kRouteThreads - 1) / kRouteThreads;
  const i64 i0 = t * per < n ? t * per : n;
  const i64 i1 = i0 + per < n ? i0 + per : n;
  for (i64 e = blockIdx.x; e < experts; e += gridDim.x) {
    for (i64 g = t; g < experts; g += kRouteThreads)
      hist[g] = 0;
    __syncthreads();
    for (i64 i = t; i < n; i += kRouteThreads) {
      const int id = ids[i];
      if (id >= 0 && id < experts)
        atomicAdd(&hist[id], 1);
    }
    __syncthreads();
    if (t == 0) {
      i64 off = 0;
      for (i64 g = 0; g < experts; ++g) {
        if (e == 0)
          offsets[g] = int(off);
        if (g == e) {
          groupStart = off;
          groupCount = hist[g];
        }
        off += (hist[g] + align - 1) / align * align;
      }
      if (e == 0)
        offsets[experts] = int(off);
      hist[0] = int(off); // the total, after every read of the counts
    }
    __syncthreads();
    const i64 start = groupStart, count = groupCount, total = hist[0];
    const i64 padEnd = start + (count + align - 1) / align * align;
    // Padding rows [r0, r1): source -1, codes and scales of zeros.
    auto pad = [&](i64 r0, i64 r1) {
      r1 = r1 < p.rows ? r1 : p.rows;
      for (i64 r = r0 + t; r < r1; r += kRouteThreads)
        source[r] = -1;
      for (i64 i = r0 * p.cols + t; i < r1 * p.cols; i += kRouteThreads)
        codes[i] = zero;
      for (i64 i = r0 * p.scaleCols + t; i < r1 * p.scaleCols;
           i += kRouteThreads)
        store_scale<Q>(p.scale, i, zeroScale, zeroCode);
    };
    pad(start + count, padEnd);
    if (e == 0)
      pad(total, p.rows);
    int mine = 0;
    for (i64 i = i0; i < i1; ++i)
      mine += ids[i] == e;
    scan[t] = mine;
    __syncthreads();
    for (int d = 1; d < kRouteThreads; d <<= 1) {
      const int v = t >= d ? scan[t - d] : 0;
      __syncthreads();
      scan[t] += v;
      __syncthreads();
    }
    i64 row = start + scan[t] - mine;
    for (i64 i = i0; i < i1; ++i) {
      const int id = ids[i];
      if (id == e) {
        positions[i] = row < p.rows ? int(row) : -1;
        if (row < p.rows)
          source[row] = int(i / topK);
        ++row;
      } else if (e == 0 && (id < 0 || id >= experts)) {
        positions[i] = -1;
      }
    }
    __syncthreads();
  }
}

/// Four consecutive elements i .. i + 3 of a tensor of element type T
/// (i a multiple of 4), widened to float, in one 8-byte (bf16, f16) or
/// 16-byte (f32) load.
template <int T>
__device__ __forceinline__ void load4(const void *p, i64 i, float v[4]) {
  if (T == kF32) {
    const float4 q =
        *reinterpret_cast<const float4 *>(static_cast<const float *>(p) + i);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
    return;
  }
  const uint2 q =
      *reinterpret_cast<const uint2 *>(static_cast<const u16 *>(p) + i);
  const u16 h[4] = {u16(q.x & 0xFFFFu), u16(q.x >> 16), u16(q.y & 0xFFFFu),
                    u16(q.y >> 16)};
  for (int k = 0; k < 4; ++k)
    v[k] = T == kBF16 ? bf16_to_float(h[k]) : f16_to_float(h[k]);
}

/// The permuted rows quantized (row blocks, as quantize_rows_body), token by
/// token: a warp reads one block of token t's row once, quantizes it, and
/// writes its codes and scale to each of the token's rows (positions[t, j];
/// a dropped slot, -1, is skipped). The copies of a token are equal, so the
/// input is read once and each block quantized once. Blocks of 128 columns
/// in rows of whole blocks take the vector path: four elements per lane in
/// one 8- or 16-byte load (element type InT; the program is the identity),
/// codes stored four at a time.
template <class Prog, class Q, int InT>
__device__ __forceinline__ void moe_permute_quantize_body(const EwParams &p) {
  const i64 bc = Q::kBlockCols ? i64(Q::kBlockCols) : p.cols;
  const i64 nbc = p.scaleCols, topK = p.mirrorStrideRows;
  const i64 units = p.batch * nbc; // tokens x column blocks
  const int lane = int(threadIdx.x & 31);
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  const int *positions = static_cast<const int *>(p.history);
  u8 *codes = static_cast<u8 *>(p.out);
  const bool vec = Q::kBlockCols == 128 && p.cols % 128 == 0;
  for (i64 u = warp; u < units; u += warps) {
    const i64 t = u / nbc, cb = u - t * nbc;
    const i64 c0 = cb * bc;
    const i64 c1 = c0 + bc < p.cols ? c0 + bc : p.cols;
    u32 m = 0;
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (vec) {
      load4<InT>(p.in[0], t * p.cols + c0 + lane * 4, v);
      for (int k = 0; k < 4; ++k) {
        const u32 b = abs_bits(v[k]);
        m = b > m ? b : m;
      }
    } else {
      for (i64 c = c0 + lane; c < c1; c += 32) {
        const u32 b = abs_bits(Prog::eval(p, t * p.cols + c));
        m = b > m ? b : m;
      }
    }
    m = warp_max(m);
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    u32 packed = 0;
    if (vec)
      for (int k = 0; k < 4; ++k)
        packed |= u32(quantize_value(v[k], s, Q::kFormat)) << (8 * k);
    for (i64 j = 0; j < topK; ++j) {
      const i64 row = positions[t * topK + j];
      if (row < 0 || row >= p.rows)
        continue;
      if (lane == 0)
        store_scale<Q>(p.scale, row * nbc + cb, s, code);
      if (vec) {
        *reinterpret_cast<u32 *>(codes + row * p.cols + c0 + lane * 4) = packed;
      } else {
        for (i64 c = c0 + lane; c < c1; c += 32)
          codes[row * p.cols + c] =
              quantize_value(Prog::eval(p, t * p.cols + c), s, Q::kFormat);
      }
    }
  }
}

/// out[t, h] = sum over j of weights[t, j] * y[positions[t, j], h], in FP32
/// in j order (a dropped slot, position -1, adds nothing), rounded to OutT;
/// y of element type InT (the program is the identity). Rows of a multiple
/// of 4 elements take four per thread, each row of y read in one 8- or
/// 16-byte load.
template <class Prog, int InT, int OutT>
__device__ __forceinline__ void moe_unpermute_body(const EwParams &p) {
  const i64 topK = p.mirrorStrideRows;
  const int *positions = static_cast<const int *>(p.in[1]);
  const float *weights = static_cast<const float *>(p.in[2]);
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p.cols % 4 == 0) {
    const i64 n = p.rows * p.cols / 4;
    for (i64 q = first; q < n; q += stride) {
      const i64 i = q * 4, t = i / p.cols, h = i - t * p.cols;
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (i64 j = 0; j < topK; ++j) {
        const i64 r = positions[t * topK + j];
        if (r < 0 || r >= p.scaleRows)
          continue;
        const float w = weights[t * topK + j];
        float v[4];
        load4<InT>(p.in[0], r * p.cols + h, v);
        for (int k = 0; k < 4; ++k)
          acc[k] = add(acc[k], mul(w, v[k]));
      }
      for (int k = 0; k < 4; ++k)
        store_elem<OutT>(p.out, i + k, acc[k]);
    }
    return;
  }
  const i64 n = p.rows * p.cols;
  for (i64 i = first; i < n; i += stride) {
    const i64 t = i / p.cols, h = i - t * p.cols;
    float acc = 0.0f;
    for (i64 j = 0; j < topK; ++j) {
      const i64 r = positions[t * topK + j];
      if (r >= 0 && r < p.scaleRows)
        acc =
            add(acc, mul(weights[t * topK + j], Prog::eval(p, r * p.cols + h)));
    }
    store_elem<OutT>(p.out, i, acc);
  }
}

} // namespace fp8k
