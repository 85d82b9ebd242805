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

/// The N * sizeof(T) bytes at element i of a tensor of element type T as
/// 32-bit words, in the widest loads that fit (16, 8 or 4 bytes; i a
/// multiple of N, the tensor aligned to the load).
template <int T, int N>
__device__ __forceinline__ void load_words(const void *p, i64 i,
                                           u32 w[N * (T == kF32 ? 4 : 2) / 4]) {
  constexpr int kBytes = N * (T == kF32 ? 4 : 2);
  static_assert(kBytes % 4 == 0 && kBytes <= 32, "2 to 8 elements");
  const u8 *at = static_cast<const u8 *>(p) + i * (T == kF32 ? 4 : 2);
  if (kBytes >= 16) {
#pragma unroll
    for (int h = 0; h < kBytes / 16; ++h) {
      const uint4 q = reinterpret_cast<const uint4 *>(at)[h];
      w[(4 * h) % (kBytes / 4)] = q.x;
      w[(4 * h + 1) % (kBytes / 4)] = q.y;
      w[(4 * h + 2) % (kBytes / 4)] = q.z;
      w[(4 * h + 3) % (kBytes / 4)] = q.w;
    }
  } else if (kBytes == 8) {
    const uint2 q = *reinterpret_cast<const uint2 *>(at);
    w[0] = q.x;
    w[1 % (kBytes / 4)] = q.y;
  } else {
    w[0] = *reinterpret_cast<const u32 *>(at);
  }
}

/// Words a vector of N elements of type T takes (load_words).
template <int T, int N> struct VecWords {
  static constexpr int kCount = N * (T == kF32 ? 4 : 2) / 4;
};

/// The N elements of type T in `w` (load_words), widened to float.
template <int T, int N>
__device__ __forceinline__ void unpack_words(const u32 *w, float v[N]) {
  constexpr int kW = VecWords<T, N>::kCount;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (T == kF32) {
      v[k] = u2f(w[k % kW]);
    } else {
      const u32 word = w[(k / 2) % kW];
      const u16 h = u16(k % 2 ? word >> 16 : word & 0xFFFFu);
      v[k] = T == kBF16 ? bf16_to_float(h) : f16_to_float(h);
    }
  }
}

/// Elements i .. i + N - 1 (N 2, 4 or 8, i a multiple of N, the tensor
/// aligned to N elements or 16 bytes) of a tensor of element type T,
/// widened to float, in one or two loads (load_words).
template <int T, int N>
__device__ __forceinline__ void load_vec(const void *p, i64 i, float v[N]) {
  u32 w[VecWords<T, N>::kCount];
  load_words<T, N>(p, i, w);
  unpack_words<T, N>(w, v);
}

/// Elements i .. i + n - 1 (n <= N) one by one, any alignment; zeros past
/// them.
template <int T, int N>
__device__ __forceinline__ void load_some(const void *p, i64 i, int n,
                                          float v[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k)
    v[k] = k < n ? load_elem<T>(p, i + k) : 0.0f;
}

/// Stores v[0 .. N) (rounded to T by the program) as elements i .. i + N - 1
/// of a tensor of element type T, in 16-byte stores (alignment as load_vec).
template <int T, int N>
__device__ __forceinline__ void store_vec(void *p, i64 i, const float v[N]) {
  if (T == kF32) {
#pragma unroll
    for (int h = 0; h < N / 4; ++h)
      *reinterpret_cast<float4 *>(static_cast<float *>(p) + i + 4 * h) =
          float4{v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]};
    return;
  }
  u32 w[N / 2];
#pragma unroll
  for (int k = 0; k < N / 2; ++k) {
    const u32 lo =
        T == kBF16 ? float_to_bf16(v[2 * k]) : float_to_f16(v[2 * k]);
    const u32 hi =
        T == kBF16 ? float_to_bf16(v[2 * k + 1]) : float_to_f16(v[2 * k + 1]);
    w[k] = lo | (hi << 16);
  }
  if (N == 8)
    *reinterpret_cast<uint4 *>(static_cast<u16 *>(p) + i) =
        uint4{w[0], w[1], w[N > 4 ? 2 : 0], w[N > 4 ? 3 : 1]};
  else
    *reinterpret_cast<uint2 *>(static_cast<u16 *>(p) + i) = uint2{w[0], w[1]};
}

/// Codes i .. i + N - 1 (N 2, 4 or 8, i a multiple of N) in one store.
template <int N>
__device__ __forceinline__ void store_codes(u8 *codes, i64 i, const u8 q[N]) {
  static_assert(N == 2 || N == 4 || N == 8, "2, 4 or 8 codes");
  u32 lo = 0, hi = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (k < 4)
      lo |= u32(q[k]) << (8 * k);
    else
      hi |= u32(q[k]) << (8 * (k - 4));
  }
  if (N == 8)
    *reinterpret_cast<uint2 *>(codes + i) = uint2{lo, hi};
  else if (N == 4)
    *reinterpret_cast<u32 *>(codes + i) = lo;
  else
    *reinterpret_cast<u16 *>(codes + i) = u16(lo);
}

/// Codes i .. i + n - 1 from words of four (quantize_codes): N codes in
/// one store when `vec` (n == N, i a multiple of N), else byte by byte.
template <int N>
__device__ __forceinline__ void store_code_words(u8 *codes, i64 i, int n,
                                                 bool vec, const u32 *w) {
  static_assert(N == 8, "two words");
  if (vec) {
    *reinterpret_cast<uint2 *>(codes + i) = uint2{w[0], w[1]};
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k)
    if (k < n)
      codes[i + k] = u8(w[k / 4] >> (8 * (k % 4)));
}

/// The row of flat element i of rows of `cols` elements: i / cols, in 32-bit
/// arithmetic when both fit (a 64-bit division is a long instruction
/// sequence). Broadcast program inputs index by it.
__device__ __forceinline__ i64 row_of(i64 i, i64 cols) {
  if (((u64(i) | u64(cols)) >> 32) == 0)
    return i64(u32(i) / u32(cols));
  return i / cols;
}

/// True when `p` is aligned to `bytes` (a power of two).
__device__ __forceinline__ bool is_aligned(const void *p, u64 bytes) {
  return (u64(p) & (bytes - 1)) == 0;
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
/// the inputs allow) to +0 in column order; each warp adds its lanes'
/// sums pairwise (xor 16, 8, 4, 2, 1: every lane ends with the same bits,
/// float addition being commutative), thread 0 the warps' in warp order.
/// That order is codegen/Elementwise.h's reduceRow, the oracle's.
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
    float acc = 0.0f;
    for (i64 c = i64(t) * kReduceChunk; c < p.cols;
         c += i64(kReduceThreads) * kReduceChunk) {
      const int n = p.cols - c < 8 ? int(p.cols - c) : 8;
      float v[8];
      Prog::template eval_n<8>(p, base + c, n, vec, v);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        if (k < n)
          acc = add(acc, v[k]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      acc = add(acc, u2f(__shfl_xor_sync(0xFFFFFFFFu, f2u(acc), o)));
    if ((t & 31) == 0)
      warp_sum[t >> 5] = acc;
    __syncthreads();
    if (t == 0) {
      float total = warp_sum[0];
#pragma unroll
      for (int w = 1; w < kReduceThreads / 32; ++w)
        total = add(total, warp_sum[w]);
      out[row] = total;
    }
    __syncthreads();
  }
}

//===----------------------------------------------------------------------===//
// Quantize, row blocks (1 x C, 1 x whole): one warp per block, one pass
//===----------------------------------------------------------------------===//

/// Values a lane keeps in registers: the scalar row path's block columns or
/// the column path's block rows, a thread's share (blocks up to 256 wide or
/// tall); 0: the block is longer, and the program is evaluated twice (it is
/// deterministic: both evaluations give the same bits).
template <int kBlock, int kThreads> struct CachedValues {
  static constexpr int kPer = kBlock > 0 && kBlock <= 256
                                  ? (kBlock + kThreads - 1) / kThreads
                                  : 0;
};

/// Lanes of a warp that share one row block in the vector row path
/// (row_vec_block_lanes) and the 16-byte chunks each takes
/// (row_vec_chunks); 0: no vector path for this width.
template <class Q> struct RowVec {
  static constexpr int kLanes = row_vec_block_lanes(Q::kBlockCols);
  static constexpr int kChunks = row_vec_chunks(Q::kBlockCols);
};

/// The row path with 16-byte accesses: kLanes lanes per (row, column
/// block), each taking kChunks chunks of eight columns (lane part p the
/// chunks p, p + kLanes, ...: each load instruction reads a block's lanes'
/// chunks side by side), so a warp covers 32 / kLanes blocks a step. Every
/// chunk's load is issued (Prog::load_raw, straight-line code) before the
/// program runs over any (Prog::eval_raw); the block's amax is a shuffle
/// max over its lanes, and its scale, reciprocal and scale store, work of
/// the whole warp, serve up to 16 elements a lane. Needs cols % 8 == 0 and
/// aligned tensors (quantize_rows_body checks). A row's last block may be
/// short: its chunks past the row's end hold nothing.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_rows_vec_body(const EwParams &p) {
  // (32 and 1 when the width has no vector path: this body is then never
  // run)
  constexpr int kL = RowVec<Q>::kLanes > 0 ? RowVec<Q>::kLanes : 32;
  constexpr int kC = RowVec<Q>::kChunks > 0 ? RowVec<Q>::kChunks : 1;
  constexpr int kG = 32 / kL; // blocks per warp step
  const i64 nbc = p.scaleCols;
  const i64 units = p.batch * p.rows * nbc;
  const int lane = int(threadIdx.x & 31);
  const int part = lane % kL;
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 first = warp * kG; first < units; first += warps * kG) {
    const i64 u = first + lane / kL;
    const bool valid = u < units;
    const i64 row = valid ? row_of(u, nbc) : 0;
    const i64 cb = valid ? u - row * nbc : 0;
    const i64 c0 = cb * Q::kBlockCols;
    bool in[kC];
#pragma unroll
    for (int v = 0; v < kC; ++v)
      in[v] = valid && c0 + (v * kL + part) * 8 < p.cols;
    typename Prog::template Raw<8> raw[kC];
#pragma unroll
    for (int v = 0; v < kC; ++v)
      if (in[v])
        Prog::template load_raw<8>(p, row * p.cols + c0 + (v * kL + part) * 8,
                                   row, raw[v]);
    float x[kC][8];
    u32 m = 0;
#pragma unroll
    for (int v = 0; v < kC; ++v) {
      Prog::template eval_raw<8>(raw[v], x[v]);
      if (in[v])
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 b = abs_bits(x[v][k]);
          m = b > m ? b : m;
        }
    }
#pragma unroll
    for (int o = kL / 2; o > 0; o >>= 1) {
      const u32 other = __shfl_xor_sync(0xFFFFFFFFu, m, o);
      m = other > m ? other : m;
    }
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (valid && part == 0) {
      store_scale<Q>(p.scale, u, s, code);
      store_scale_mirror<Q>(p, row, cb, s, code);
    }
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll
    for (int v = 0; v < kC; ++v)
      if (in[v]) {
        u32 w[2];
        quantize_codes<8>(x[v], d, Q::kFormat, w);
        store_code_words<8>(codes, row * p.cols + c0 + (v * kL + part) * 8, 8,
                            true, w);
      }
  }
}

/// One warp per (row, column block): the block's amax (warp max of the
/// |x| bits), its scale, then its codes. Lane l takes columns l, l + 32, ...
/// of the block (each step a contiguous warp access); blocks of up to 256
/// columns are evaluated once, their values kept in registers.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_rows_scalar_body(const EwParams &p) {
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

/// Whole rows (per-row scales) in registers: T threads a row
/// (whole_row_threads, a power of two from 32 to 256), 256 / T rows a CTA
/// step; thread `part` of a row takes its chunks of eight columns part, part
/// + T, ... (each load instruction reads T consecutive chunks), up to
/// kWholeRowChunks of them, every load issued (Prog::load_raw) before the
/// program runs over any. The row's amax is a warp max, joined in shared
/// memory when T > 32; the codes come from the registers (the program
/// evaluated again: it is deterministic), so the row is read once. Needs
/// cols % 8 == 0 and aligned tensors (quantize_rows_body checks).
template <class Prog, class Q>
__device__ __forceinline__ void
quantize_rows_whole_cached_body(const EwParams &p, int T) {
  constexpr int kC = kWholeRowChunks;
  __shared__ u32 warpMax[8];
  const int t = int(threadIdx.x);
  const int lg = __ffs(T) - 1;
  const int g = t >> lg, part = t & (T - 1);
  const int perCta = 256 >> lg, warpsPerRow = T >> 5;
  const i64 units = p.batch * p.rows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 r0 = i64(blockIdx.x) * perCta; r0 < units;
       r0 += i64(gridDim.x) * perCta) {
    const i64 row = r0 + g;
    const bool valid = row < units;
    const i64 base = row * p.cols;
    bool in[kC];
    typename Prog::template Raw<8> raw[kC];
#pragma unroll
    for (int v = 0; v < kC; ++v) {
      const i64 c = i64(v * T + part) * 8;
      in[v] = valid && c < p.cols;
      if (in[v])
        Prog::template load_raw<8>(p, base + c, row, raw[v]);
    }
    u32 m = 0;
#pragma unroll
    for (int v = 0; v < kC; ++v) {
      float x[8];
      Prog::template eval_raw<8>(raw[v], x);
      if (in[v])
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 b = abs_bits(x[k]);
          m = b > m ? b : m;
        }
    }
    m = warp_max(m);
    if (warpsPerRow > 1) { // (uniform over the CTA)
      if ((t & 31) == 0)
        warpMax[t >> 5] = m;
      __syncthreads();
      for (int w = 0; w < warpsPerRow; ++w) {
        const u32 o = warpMax[g * warpsPerRow + w];
        m = o > m ? o : m;
      }
      __syncthreads(); // `warpMax` is reused by the next step
    }
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (valid && part == 0) {
      store_scale<Q>(p.scale, row, s, code);
      store_scale_mirror<Q>(p, row, 0, s, code);
    }
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll
    for (int v = 0; v < kC; ++v)
      if (in[v]) {
        float x[8];
        Prog::template eval_raw<8>(raw[v], x);
        u32 w[2];
        quantize_codes<8>(x, d, Q::kFormat, w);
        store_code_words<8>(codes, base + i64(v * T + part) * 8, 8, true, w);
      }
  }
}

/// Whole rows (per-row scales) longer than the registers hold, or unaligned:
/// a warp per row, eight columns a lane per step (16-byte loads when the
/// row length and the tensors' alignment allow, else element by element),
/// the row evaluated twice: once for its amax, once for its codes (the
/// second read comes from the caches).
template <class Prog, class Q>
__device__ __forceinline__ void quantize_rows_whole_body(const EwParams &p) {
  const i64 units = p.batch * p.rows;
  const int lane = int(threadIdx.x & 31);
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  const bool vec =
      p.cols % 8 == 0 && Prog::aligned(p, 16) && is_aligned(p.out, 8);
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 row = warp; row < units; row += warps) {
    const i64 base = row * p.cols;
    u32 m = 0;
#pragma unroll 2
    for (i64 c = lane * 8; c < p.cols; c += 256) {
      const int n = p.cols - c < 8 ? int(p.cols - c) : 8;
      float v[8];
      Prog::template eval_n<8>(p, base + c, n, vec, v);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const u32 b = abs_bits(v[k]);
        m = b > m ? b : m;
      }
    }
    m = warp_max(m);
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (lane == 0) {
      store_scale<Q>(p.scale, row, s, code);
      store_scale_mirror<Q>(p, row, 0, s, code);
    }
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll 2
    for (i64 c = lane * 8; c < p.cols; c += 256) {
      const int n = p.cols - c < 8 ? int(p.cols - c) : 8;
      float v[8];
      Prog::template eval_n<8>(p, base + c, n, vec, v);
      u32 w[2];
      quantize_codes<8>(v, d, Q::kFormat, w);
      store_code_words<8>(codes, base + c, n, vec, w);
    }
  }
}

/// The row path: 16-byte accesses where the block width, the row length and
/// the tensors' alignment allow, else a lane per column; whole rows are
/// kept in registers where they fit.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_rows_body(const EwParams &p) {
  // (if constexpr: a kernel's registers are its largest path's)
  const bool vec =
      p.cols % 8 == 0 && Prog::aligned(p, 16) && is_aligned(p.out, 8);
  if constexpr (Q::kBlockCols == 0) {
    if (vec && whole_row_threads(p.cols) > 0)
      quantize_rows_whole_cached_body<Prog, Q>(p, whole_row_threads(p.cols));
    else
      quantize_rows_whole_body<Prog, Q>(p);
  } else {
    if (RowVec<Q>::kLanes > 0 && vec)
      quantize_rows_vec_body<Prog, Q>(p);
    else
      quantize_rows_scalar_body<Prog, Q>(p);
  }
}

//===----------------------------------------------------------------------===//
// Quantize, column blocks (R x 1): one thread per block, one pass
//===----------------------------------------------------------------------===//

/// Block row `u` of R x C blocks (the column and tile paths; the stacked
/// [batch * scaleRows] grid): its first row, that row's flat index of
/// column 0, and its rows (the last block row of a batch may be short).
template <class Q> struct ColumnBlock {
  i64 row0, base, rows; ///< first row of the stacked [batch * rows]
  __device__ __forceinline__ ColumnBlock(const EwParams &p, i64 u) {
    const i64 b = u / p.scaleRows;
    const i64 r0 = (u - b * p.scaleRows) * Q::kBlockRows;
    rows = p.rows - r0 < Q::kBlockRows ? p.rows - r0 : i64(Q::kBlockRows);
    row0 = b * p.rows + r0;
    base = row0 * p.cols;
  }
};

/// One block (R rows of one column) per CTA column: the column's amax over
/// the block, its scale, then its codes (the 128x1 activations of the weight
/// gradients: one scale per 128 tokens of a channel). A CTA covers 32
/// consecutive columns, column group `group` (a lane each: every row's loads
/// and stores are contiguous across the warp) of one block row (blockIdx.y
/// walks the block rows of every batch); its 8 warps split the block's rows
/// (warp w takes rows w, w + 8, ...), keep their values in registers (blocks of
/// up to 256 rows) and join their maxima in shared memory.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_cached_body(const EwParams &p,
                                                          i64 group) {
  constexpr int kPer = CachedValues<int(Q::kBlockRows), kColWarps>::kPer;
  __shared__ u32 partial[kColWarps][kColLanes];
  const int lane = int(threadIdx.x % kColLanes);
  const int w = int(threadIdx.x / kColLanes);
  const i64 c = group * kColLanes + lane;
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
/// row, column), the program evaluated twice per element (the second
/// reads come back from the caches). A CTA covers kColsPerCta consecutive
/// columns of one block row.
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

/// The vector column path: a CTA covers kColVecChunks chunks of eight
/// columns of one block row; thread (g, q) of its kColVecGroups x
/// kColVecChunks takes chunk q of the block's rows g, g + kColVecGroups, ...
/// (each row's loads contiguous across the CTA's chunks), issuing every
/// load (Prog::load_raw) before the program runs over any. Each thread's
/// eight column maxima go to shared memory; four lanes a column join the
/// groups' maxima and make the column's scale and reciprocal; the codes
/// come from the values kept in registers (the program evaluated once: R x
/// 1 blocks quantize SwiGLU's product for the weight gradients), so the
/// block is read once. Needs cols % 8 == 0 and aligned tensors.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_vec_body(const EwParams &p) {
  constexpr int kCols = kColVecChunks * 8;
  constexpr int kJ =
      int((Q::kBlockRows + kColVecGroups - 1) / kColVecGroups) > 0
          ? int((Q::kBlockRows + kColVecGroups - 1) / kColVecGroups)
          : 1;
  static_assert(kJ <= kColVecSteps, "col_vec_path's rows");
  static_assert(kColVecGroups % 4 == 0 && kCols * 4 == 256, "the join's lanes");
  // (rows padded by four words: the join's four lanes of a column read
  // rows k, k + 4, ... in distinct banks)
  constexpr int kPitch = kCols + 4;
  alignas(16) __shared__ u32 partial[kColVecGroups][kPitch];
  alignas(16) __shared__ float scales[kCols], recips[kCols];
  const int t = int(threadIdx.x);
  const int g = t / kColVecChunks, q = t % kColVecChunks;
  const i64 c = i64(blockIdx.x) * kCols + q * 8;
  const bool colIn = c < p.cols; // (cols % 8 == 0: all eight or none)
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    bool in[kJ];
    typename Prog::template Raw<8> raw[kJ];
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      const int r = g + kColVecGroups * j;
      in[j] = colIn && r < blk.rows;
      if (in[j])
        Prog::template load_raw<8>(p, blk.base + r * p.cols + c, blk.row0 + r,
                                   raw[j]);
    }
    // Conversion-only programs keep the loads and evaluate again; others
    // keep the values (the program once).
    constexpr bool kKeep = !Prog::kConvertOnly;
    float x[kKeep ? kJ : 1][8];
    u32 m[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      float *v = x[kKeep ? j : 0];
      Prog::template eval_raw<8>(raw[j], v);
      if (in[j])
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 b = abs_bits(v[k]);
          m[k] = b > m[k] ? b : m[k];
        }
    }
    *reinterpret_cast<uint4 *>(&partial[g][q * 8]) =
        uint4{m[0], m[1], m[2], m[3]};
    *reinterpret_cast<uint4 *>(&partial[g][q * 8 + 4]) =
        uint4{m[4], m[5], m[6], m[7]};
    __syncthreads();
    { // four lanes a column: groups k, k + 4, ..., then a shuffle max
      const int col = t >> 2, k0 = t & 3;
      u32 a = 0;
#pragma unroll
      for (int k = k0; k < kColVecGroups; k += 4)
        a = partial[k][col] > a ? partial[k][col] : a;
#pragma unroll
      for (int o = 1; o < 4; o <<= 1) {
        const u32 other = __shfl_xor_sync(0xFFFFFFFFu, a, o);
        a = other > a ? other : a;
      }
      if (k0 == 0) {
        u8 code;
        const float s =
            scale_from_amax(u2f(a), Q::kFormat, Q::kScaleFmt, 0, &code);
        const i64 cc = i64(blockIdx.x) * kCols + col;
        if (cc < p.cols) {
          store_scale<Q>(p.scale, u * p.scaleCols + cc, s, code);
          store_scale_mirror<Q>(p, u, cc, s, code);
        }
        const ScaleDivisor d = scale_divisor(s);
        scales[col] = d.scale;
        recips[col] = d.recip;
      }
    }
    __syncthreads();
    // The codes, a pair of columns at a time (their divisors from shared
    // memory: eight live divisors cost 24 registers), four to a word; a
    // conversion-only program converts each pair again (the compiler drops
    // the other six).
    u32 w[kJ][2];
#pragma unroll
    for (int k = 0; k < 8; k += 2) {
      const float2 s2 = *reinterpret_cast<const float2 *>(&scales[q * 8 + k]);
      const float2 r2 = *reinterpret_cast<const float2 *>(&recips[q * 8 + k]);
      const ScaleDivisor d0 = scale_divisor_from(s2.x, r2.x);
      const ScaleDivisor d1 = scale_divisor_from(s2.y, r2.y);
#pragma unroll
      for (int j = 0; j < kJ; ++j) {
        float y[8];
        if (!kKeep)
          Prog::template eval_raw<8>(raw[j], y);
        const float *v = kKeep ? x[kKeep ? j : 0] : y;
        const u32 pair = quantize_pair(v[k], d0, v[k + 1], d1, Q::kFormat);
        if (k % 4 == 0)
          w[j][k / 4] = pair;
        else
          w[j][k / 4] |= pair << 16;
      }
    }
#pragma unroll
    for (int j = 0; j < kJ; ++j)
      if (in[j])
        store_code_words<8>(codes,
                            blk.base + (g + kColVecGroups * j) * p.cols + c, 8,
                            true, w[j]);
    // (`partial` is rewritten after the next step's loads; the first
    // barrier of that step orders it after this step's reads of `scales`)
  }
}

/// The column path: R x 1 blocks, one kernel. (if constexpr: a kernel's
/// registers are its largest path's.)
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_body(const EwParams &p) {
  if constexpr (col_vec_path(Q::kBlockRows, 8)) {
    // The host's grid is col_vec_path's (kColVecChunks * 8 columns a CTA)
    // whenever cols % 8 == 0; unaligned tensors take the lane-per-column
    // body over the same columns.
    const bool aligned = Prog::aligned(p, 16) && is_aligned(p.out, 8);
    if (p.cols % 8 == 0 && aligned) {
      quantize_cols_vec_body<Prog, Q>(p);
      return;
    }
    if (p.cols % 8 == 0) {
      for (int k = 0; k < kColVecChunks * 8 / kColLanes; ++k)
        quantize_cols_cached_body<Prog, Q>(
            p, i64(blockIdx.x) * (kColVecChunks * 8 / kColLanes) + k);
      return;
    }
  }
  if constexpr (CachedValues<int(Q::kBlockRows), kColWarps>::kPer > 0)
    quantize_cols_cached_body<Prog, Q>(p, blockIdx.x);
  else
    quantize_cols_long_body<Prog, Q>(p);
}

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

/// The amax of a CTA's threads' maxima `m`: warp maxima joined in
/// `warpMax` (the caller's shared array of 8), the result in every thread.
__device__ __forceinline__ u32 cta_max(u32 m, u32 *warpMax) {
  m = warp_max(m);
  if ((threadIdx.x & 31) == 0)
    warpMax[threadIdx.x >> 5] = m;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < 8; ++w)
    m = warpMax[w] > m ? warpMax[w] : m;
  __syncthreads(); // `warpMax` is reused by the next block
  return m;
}

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
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 b = abs_bits(x[k]);
          m = b > m ? b : m;
        }
    }
    m = cta_max(m, warpMax);
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (t == 0) {
      store_scale<Q>(p.scale, u * p.scaleCols + cb, s, code);
      store_scale_mirror<Q>(p, u, cb, s, code);
    }
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
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const u32 b = abs_bits(v[k]);
        m = b > m ? b : m;
      }
    }
    m = cta_max(m, warpMax);
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (t == 0) {
      store_scale<Q>(p.scale, u * p.scaleCols + cb, s, code);
      store_scale_mirror<Q>(p, u, cb, s, code);
    }
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

/// Per-tensor blocks (whole x whole: a scale per matrix of the batch) are
/// walked flat, eight elements a thread in 16-byte loads when the matrix
/// has a multiple of 8 elements and the tensors are aligned, else one.
template <class Prog>
__device__ __forceinline__ bool tensor_vec(const EwParams &p) {
  return p.rows * p.cols % 8 == 0 && Prog::aligned(p, 16) &&
         is_aligned(p.out, 8);
}

/// The scale delayed scaling predicts from the history before the step's
/// amax is known (delayed_scale_step's, when the step's amax is finite), or
/// false when the history is empty.
template <class Q>
__device__ __forceinline__ bool delayed_prediction(const EwParams &p,
                                                   float *scale) {
  const AmaxHistoryState *st = static_cast<const AmaxHistoryState *>(p.history);
  if (st->count == 0)
    return false;
  const float *values = reinterpret_cast<const float *>(st + 1);
  u8 code;
  *scale =
      scale_from_amax(delayed_history_amax(st, values, Q::kHistory, Q::kAlgo),
                      Q::kFormat, Q::kScaleFmt, Q::kMargin, &code);
  return true;
}

/// The codes of flat elements [0, n) of matrix b with scale s (per-tensor
/// blocks). Current scaling's s was made from this matrix's amax, which
/// bounds every value: its codes take quantize_codes (no division); a
/// delayed scale may be exceeded, and takes quantize_value.
template <class Prog, class Q>
__device__ __forceinline__ void tensor_codes(const EwParams &p, i64 b,
                                             float s) {
  const i64 plane = p.rows * p.cols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  u8 *codes = static_cast<u8 *>(p.out);
  if (tensor_vec<Prog>(p)) {
    const ScaleDivisor d = scale_divisor(s);
    for (i64 q = first; q < plane / 8; q += stride) {
      const i64 i = b * plane + q * 8;
      float v[8];
      Prog::template eval_vec<8>(p, i, v);
      if constexpr (Q::kDelayed) {
        u8 c[8];
#pragma unroll
        for (int k = 0; k < 8; ++k)
          c[k] = quantize_value(v[k], s, Q::kFormat);
        store_codes<8>(codes, i, c);
      } else {
        u32 w[2];
        quantize_codes<8>(v, d, Q::kFormat, w);
        store_code_words<8>(codes, i, 8, true, w);
      }
    }
    return;
  }
  for (i64 e = first; e < plane; e += stride)
    codes[b * plane + e] =
        quantize_value(Prog::eval(p, b * plane + e), s, Q::kFormat);
}

/// Pass 1 of per-tensor blocks: each matrix's amax, a CTA's joined in shared
/// memory and given to one atomicMax. Delayed scaling writes the codes in
/// the same pass, with the scale its history predicts
/// (delayed_prediction); pass 2 finds whether that was the step's scale and
/// pass 3 rewrites the codes only when it was not (an empty history, a
/// non-finite amax): one read of the input per step once the history has
/// a value.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_amax_tensor_body(const EwParams &p) {
  __shared__ u32 warpMax[32];
  const i64 plane = p.rows * p.cols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool vec = tensor_vec<Prog>(p);
  float predicted = 1.0f;
  const bool speculate = Q::kDelayed && delayed_prediction<Q>(p, &predicted);
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 b = 0; b < p.batch; ++b) {
    u32 m = 0;
    if (vec) {
      for (i64 q = first; q < plane / 8; q += stride) {
        const i64 i = b * plane + q * 8;
        float v[8];
        Prog::template eval_vec<8>(p, i, v);
        u8 c[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 bits = abs_bits(v[k]);
          m = bits > m ? bits : m;
          c[k] = quantize_value(v[k], predicted, Q::kFormat);
        }
        if (speculate)
          store_codes<8>(codes, i, c);
      }
    } else {
      for (i64 e = first; e < plane; e += stride) {
        const float v = Prog::eval(p, b * plane + e);
        const u32 bits = abs_bits(v);
        m = bits > m ? bits : m;
        if (speculate)
          codes[b * plane + e] = quantize_value(v, predicted, Q::kFormat);
      }
    }
    m = warp_max(m);
    if ((threadIdx.x & 31) == 0)
      warpMax[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < int(blockDim.x >> 5); ++w)
        m = warpMax[w] > m ? warpMax[w] : m;
      if (m)
        atomicMax(&p.amax[b], m);
    }
    __syncthreads();
  }
}

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

/// Pass 3: the codes, with the scale of each element's block (delayed
/// scaling: only when pass 1's were not made with the step's scale).
template <class Prog, class Q>
__device__ __forceinline__ void quantize_apply_body(const EwParams &p) {
  if (Q::kDelayed && !static_cast<const AmaxHistoryState *>(p.history)->refit)
    return;
  if (Q::kBlockRows == 0 && Q::kBlockCols == 0) {
    for (i64 b = 0; b < p.batch; ++b)
      tensor_codes<Prog, Q>(p, b, load_scale<Q>(p.scale, b));
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

//===----------------------------------------------------------------------===//
// Transpose of FP8 codes and their scales (the on-demand transpose)
//===----------------------------------------------------------------------===//

/// The transpose's tile in shared memory: kTransposeTile rows of
/// kTransposeTile bytes and a pitch of four more (the byte and word paths),
/// or of kTransposeTile / 4 words swizzled (the 16-byte path).
constexpr int kTransposePitch = kTransposeTile + 4;

/// Word w of tile row r on the 16-byte path: each 16-row band's 16-byte
/// groups XOR-ed by its band, so that the 32 lanes reading one word column
/// of the eight bands (transpose_tile_16) hit 32 banks.
__device__ __forceinline__ int transpose_word(int r, int w) {
  return r * (kTransposeTile / 4) + (w ^ (((r >> 4) & 7) << 2));
}

/// One tile, rows and columns multiples of 16 and 16-byte aligned tensors:
/// thread t loads 16 bytes of rows t / 8 + 32 i (four loads in flight),
/// then takes the 4 x 16 block of output rows 4 (t / 8) .. + 3 and input
/// rows 16 (t % 8) .. + 15: 16 words from shared memory, transposed in
/// registers four by four (__byte_perm), out in four 16-byte stores (eight
/// lanes write one output row's 128 bytes).
__device__ __forceinline__ void transpose_tile_16(const EwParams &p,
                                                  const u8 *src, u8 *dst,
                                                  i64 r0, i64 c0, u32 *words) {
  constexpr int kT = kTransposeTile;
  static_assert(kT == 128, "256 threads: 16-byte chunks of 128-byte rows");
  const int t = int(threadIdx.x);
  {
    const int cw = (t & 7) * 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = (t >> 3) + 32 * i;
      if (r0 + r < p.rows && c0 + cw * 4 < p.cols)
        *reinterpret_cast<uint4 *>(&words[transpose_word(r, cw)]) =
            *reinterpret_cast<const uint4 *>(src + (r0 + r) * p.cols + c0 +
                                             cw * 4);
    }
  }
  __syncthreads();
  const int rr = (t & 7) * 16, cb = t >> 3;
  u32 col[4][4]; // [output row k][input rows 4 g .. 4 g + 3]
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const u32 w0 = words[transpose_word(rr + 4 * g, cb)];
    const u32 w1 = words[transpose_word(rr + 4 * g + 1, cb)];
    const u32 w2 = words[transpose_word(rr + 4 * g + 2, cb)];
    const u32 w3 = words[transpose_word(rr + 4 * g + 3, cb)];
    const u32 lo01 = __byte_perm(w0, w1, 0x5140),
              hi01 = __byte_perm(w0, w1, 0x7362);
    const u32 lo23 = __byte_perm(w2, w3, 0x5140),
              hi23 = __byte_perm(w2, w3, 0x7362);
    col[0][g] = __byte_perm(lo01, lo23, 0x5410);
    col[1][g] = __byte_perm(lo01, lo23, 0x7632);
    col[2][g] = __byte_perm(hi01, hi23, 0x5410);
    col[3][g] = __byte_perm(hi01, hi23, 0x7632);
  }
  if (r0 + rr < p.rows)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const i64 oc = c0 + cb * 4 + k;
      if (oc < p.cols)
        *reinterpret_cast<uint4 *>(dst + oc * p.rows + r0 + rr) =
            uint4{col[k][0], col[k][1], col[k][2], col[k][3]};
    }
}

/// One tile, rows and columns multiples of 4 and 4-byte aligned tensors: a
/// row's four columns in, an output row's four columns (four input rows)
/// out, 32 threads a row.
__device__ __forceinline__ void transpose_tile_4(const EwParams &p,
                                                 const u8 *src, u8 *dst, i64 r0,
                                                 i64 c0, u8 *tile) {
  constexpr int kT = kTransposeTile, kP = kTransposePitch;
  const int t = int(threadIdx.x);
  const int cc = (t % 32) * 4;
#pragma unroll 4
  for (int j = t / 32; j < kT; j += 8) {
    const i64 r = r0 + j, c = c0 + cc;
    if (r < p.rows && c < p.cols)
      *reinterpret_cast<u32 *>(&tile[j * kP + cc]) =
          *reinterpret_cast<const u32 *>(src + r * p.cols + c);
  }
  __syncthreads();
  const int rr = (t % 32) * 4;
#pragma unroll 4
  for (int o = t / 32; o < kT; o += 8) {
    const i64 oc = c0 + o, r = r0 + rr;
    if (oc < p.cols && r < p.rows)
      *reinterpret_cast<u32 *>(dst + oc * p.rows + r) =
          u32(tile[rr * kP + o]) | u32(tile[(rr + 1) * kP + o]) << 8 |
          u32(tile[(rr + 2) * kP + o]) << 16 |
          u32(tile[(rr + 3) * kP + o]) << 24;
  }
}

/// One tile, byte by byte.
__device__ __forceinline__ void transpose_tile_1(const EwParams &p,
                                                 const u8 *src, u8 *dst, i64 r0,
                                                 i64 c0, u8 *tile) {
  constexpr int kT = kTransposeTile, kP = kTransposePitch;
  const int t = int(threadIdx.x);
  const int cc = t % kT;
  for (int j = t / kT; j < kT; j += 256 / kT) {
    const i64 r = r0 + j, c = c0 + cc;
    if (r < p.rows && c < p.cols)
      tile[j * kP + cc] = src[r * p.cols + c];
  }
  __syncthreads();
  for (int o = t / kT; o < kT; o += 256 / kT) {
    const i64 oc = c0 + o, r = r0 + cc;
    if (oc < p.cols && r < p.rows)
      dst[oc * p.rows + r] = tile[cc * kP + o];
  }
}

/// [batch, rows, cols] codes -> [batch, cols, rows], through a kTransposeTile
/// square tile in shared memory; a CTA of 256 threads per tile, grid
/// (cols / tile, rows / tile, batch). Rows and columns multiples of 16 and
/// 16-byte aligned tensors move 16 bytes a thread access, multiples of 4
/// and 4-byte alignment four, else one.
__device__ __forceinline__ void transpose_codes_body(const EwParams &p) {
  constexpr int kT = kTransposeTile;
  alignas(16) __shared__ u32 words[kT * kTransposePitch / 4];
  u8 *tile = reinterpret_cast<u8 *>(words);
  const u8 *in = static_cast<const u8 *>(p.in[0]);
  u8 *out = static_cast<u8 *>(p.out);
  const i64 plane = p.rows * p.cols;
  const bool vec16 = p.rows % 16 == 0 && p.cols % 16 == 0 &&
                     is_aligned(in, 16) && is_aligned(out, 16);
  const bool vec = p.rows % 4 == 0 && p.cols % 4 == 0 && is_aligned(in, 4) &&
                   is_aligned(out, 4);
  for (i64 b = blockIdx.z; b < p.batch; b += gridDim.z) {
    for (i64 ty = blockIdx.y; ty * kT < p.rows; ty += gridDim.y) {
      for (i64 tx = blockIdx.x; tx * kT < p.cols; tx += gridDim.x) {
        const i64 r0 = ty * kT, c0 = tx * kT;
        const u8 *src = in + b * plane;
        u8 *dst = out + b * plane;
        if (vec16)
          transpose_tile_16(p, src, dst, r0, c0, words);
        else if (vec)
          transpose_tile_4(p, src, dst, r0, c0, tile);
        else
          transpose_tile_1(p, src, dst, r0, c0, tile);
        __syncthreads(); // the tile is reused by the next one
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
  // (row_of: 32-bit divisions where the sizes allow)
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const i64 b = row_of(i, sr * sc), rem = i - b * sr * sc;
    const i64 r = row_of(rem, sc), c = rem - r * sc;
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
      load_vec<InT, 4>(p.in[0], t * p.cols + c0 + lane * 4, v);
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
        load_vec<InT, 4>(p.in[0], r * p.cols + h, v);
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
