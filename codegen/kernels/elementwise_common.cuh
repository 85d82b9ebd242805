//===- elementwise_common.cuh - Elementwise kernels' helpers ---*- CUDA -*-===//
//
// The loads, stores, indexing and reductions every body of the plan's
// non-GEMM kernels (elementwise.cuh and the elementwise_*.cuh it includes)
// shares.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_params.h"
#include "fp8/fp8_functions.h"
#include "fp8/grid_dependency.h"

namespace fp8k {

static_assert(sizeof(EwParams) == 128, "must match the host's EwParams");

/// atomicAdd with release and acquire semantics at GPU scope: the calling
/// thread's earlier writes (its atomics too) are visible to any thread that
/// acquires a later value of *p, and those of threads whose adds came
/// before are visible to the caller: the count of a grid's finished CTAs,
/// by which the last knows that every other CTA's results are in memory.
__device__ __forceinline__ u32 atomic_add_acq_rel(u32 *p, u32 v) {
#if defined(__CUDA_ARCH__)
  u32 old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
#else
  return atomicAdd(p, v);
#endif
}

/// *p with acquire semantics at GPU scope: the writes of the threads whose
/// release made the value read are visible to the caller after it (a
/// grid-wide wait's poll of its count).
__device__ __forceinline__ u32 load_acquire(const u32 *p) {
#if defined(__CUDA_ARCH__)
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
#else
  return *static_cast<const volatile u32 *>(p);
#endif
}

/// The CTA's dynamic shared memory (the launch's sharedMemBytes), 16-byte
/// aligned.
__device__ __forceinline__ unsigned char *dynamic_shared() {
#if defined(__CUDA_ARCH__)
  extern __shared__ __align__(16) unsigned char fp8k_dynamic_shared[];
  return fp8k_dynamic_shared;
#else
  return cudaemu::dynamic_shared();
#endif
}

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

/// *p, or with kLastUse a load that marks its lines first to leave the L2
/// (ld.global.cs, PTX ISA 9.7.9.8: evict-first in L1 and L2): for a pass
/// that reads data for the last time while a later part of the same data,
/// read once before, is still to be reused from the L2.
template <bool kLastUse, class V>
__device__ __forceinline__ V load_hinted(const V *p) {
#if defined(__CUDA_ARCH__)
  if (kLastUse)
    return __ldcs(p);
#endif
  return *p;
}

/// *p = v, or with kStream a store whose lines leave the L2 first
/// (st.global.cs): output that should not displace input still to be reused.
template <bool kStream, class V>
__device__ __forceinline__ void store_hinted(V *p, V v) {
#if defined(__CUDA_ARCH__)
  if (kStream) {
    __stcs(p, v);
    return;
  }
#endif
  *p = v;
}

/// The N * sizeof(T) bytes at element i of a tensor of element type T as
/// 32-bit words, in the widest loads that fit (16, 8 or 4 bytes; i a
/// multiple of N, the tensor aligned to the load); kLastUse: load_hinted.
template <int T, int N, bool kLastUse = false>
__device__ __forceinline__ void load_words(const void *p, i64 i,
                                           u32 w[N * (T == kF32 ? 4 : 2) / 4]) {
  constexpr int kBytes = N * (T == kF32 ? 4 : 2);
  static_assert(kBytes % 4 == 0 && kBytes <= 32, "2 to 8 elements");
  const u8 *at = static_cast<const u8 *>(p) + i * (T == kF32 ? 4 : 2);
  if (kBytes >= 16) {
#pragma unroll
    for (int h = 0; h < kBytes / 16; ++h) {
      const uint4 q =
          load_hinted<kLastUse>(reinterpret_cast<const uint4 *>(at) + h);
      w[(4 * h) % (kBytes / 4)] = q.x;
      w[(4 * h + 1) % (kBytes / 4)] = q.y;
      w[(4 * h + 2) % (kBytes / 4)] = q.z;
      w[(4 * h + 3) % (kBytes / 4)] = q.w;
    }
  } else if (kBytes == 8) {
    const uint2 q = load_hinted<kLastUse>(reinterpret_cast<const uint2 *>(at));
    w[0] = q.x;
    w[1 % (kBytes / 4)] = q.y;
  } else {
    w[0] = load_hinted<kLastUse>(reinterpret_cast<const u32 *>(at));
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

/// Codes i .. i + n - 1 from words of four (quantize_codes): N codes in
/// one store when `vec` (n == N, i a multiple of N), else byte by byte;
/// kStream: store_hinted.
template <int N, bool kStream = false>
__device__ __forceinline__ void store_code_words(u8 *codes, i64 i, int n,
                                                 bool vec, const u32 *w) {
  static_assert(N == 8, "two words");
  if (vec) {
    store_hinted<kStream>(reinterpret_cast<uint2 *>(codes + i),
                          uint2{w[0], w[1]});
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

/// The 4 x 4 byte transpose: words w[0..3] (rows, four bytes each) in,
/// out[k] the four bytes k of w[0..3] (a column, w[0]'s byte lowest).
__device__ __forceinline__ void transpose_4x4_bytes(const u32 w[4],
                                                    u32 out[4]) {
  const u32 lo01 = __byte_perm(w[0], w[1], 0x5140),
            hi01 = __byte_perm(w[0], w[1], 0x7362);
  const u32 lo23 = __byte_perm(w[2], w[3], 0x5140),
            hi23 = __byte_perm(w[2], w[3], 0x7362);
  out[0] = __byte_perm(lo01, lo23, 0x5410);
  out[1] = __byte_perm(lo01, lo23, 0x7632);
  out[2] = __byte_perm(hi01, hi23, 0x5410);
  out[3] = __byte_perm(hi01, hi23, 0x7632);
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

/// The amax of a CTA's threads' maxima `m` (kWarps warps): warp maxima
/// joined in `warpMax` (the caller's shared array of kWarps), the result in
/// every thread.
template <int kWarps = 8>
__device__ __forceinline__ u32 cta_max(u32 m, u32 *warpMax) {
  m = warp_max(m);
  if ((threadIdx.x & 31) == 0)
    warpMax[threadIdx.x >> 5] = m;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    m = warpMax[w] > m ? warpMax[w] : m;
  __syncthreads(); // (`warpMax` may be written again after the return)
  return m;
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

/// Values a lane keeps in registers: the scalar row path's block columns or
/// the column path's block rows, a thread's share (keeps_block_values); 0:
/// the block is longer, and the program is evaluated twice (it is
/// deterministic: both evaluations give the same bits).
template <int kBlock, int kThreads> struct CachedValues {
  static constexpr int kPer =
      keeps_block_values(kBlock) ? (kBlock + kThreads - 1) / kThreads : 0;
};

/// Thread t's partial sum of a row of `cols` values in the reduce kernel's
/// order: its chunks of kReduceChunk columns t, t + kReduceThreads, ..., each
/// value added to +0 in column order; `values(c, n, v)` gives the values of
/// columns c .. c + n - 1 (n <= 8) in v.
template <class F>
__device__ __forceinline__ float thread_row_sum(i64 cols, int t, F values) {
  static_assert(kReduceChunk == 8, "chunks of eight");
  float acc = 0.0f;
  for (i64 c = i64(t) * kReduceChunk; c < cols;
       c += i64(kReduceThreads) * kReduceChunk) {
    const int n = cols - c < 8 ? int(cols - c) : 8;
    float v[8];
    values(c, n, v);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < n)
        acc = add(acc, v[k]);
  }
  return acc;
}

/// A row's sum from each of kReduceThreads threads' partial sums, in the
/// reduce kernel's order (codegen/Elementwise.h, reduceRow): each warp adds
/// its lanes' sums pairwise (xor 16, 8, 4, 2, 1: every lane ends with the
/// same bits, float addition being commutative), then the warps' sums in
/// warp order; every thread returns the same bits. A CTA of kReduceThreads
/// / kV threads: thread x plays reduce threads x + i * blockDim.x, i < kV,
/// their sums in acc[i]. `warpSum` holds kReduceThreads / 32 floats of
/// shared memory; the caller synchronizes before it is written again.
template <int kV>
__device__ __forceinline__ float cta_row_sum(float (&acc)[kV], float *warpSum) {
  constexpr int kWarps = kReduceThreads / kV / 32; // real warps
  static_assert(kReduceThreads % (kV * 32) == 0, "whole warps");
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int i = 0; i < kV; ++i)
      acc[i] = add(acc[i], u2f(__shfl_xor_sync(0xFFFFFFFFu, f2u(acc[i]), o)));
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int i = 0; i < kV; ++i)
      warpSum[(threadIdx.x >> 5) + i * kWarps] = acc[i];
  }
  __syncthreads();
  float total = warpSum[0];
#pragma unroll
  for (int w = 1; w < kReduceThreads / 32; ++w)
    total = add(total, warpSum[w]);
  return total;
}

/// cta_row_sum of a CTA of kReduceThreads threads, one sum each.
__device__ __forceinline__ float cta_row_sum(float acc, float *warpSum) {
  float a[1] = {acc};
  return cta_row_sum<1>(a, warpSum);
}

/// The larger of m and the |x| bit patterns of x[0 .. N) (bits order the
/// magnitudes of non-NaN floats; a NaN's exceed every finite value's).
template <int N>
__device__ __forceinline__ u32 max_abs_bits(const float *x, u32 m) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const u32 b = abs_bits(x[k]);
    m = b > m ? b : m;
  }
  return m;
}

/// The scale of a block whose amax has the bits m (scale_from_amax, current
/// scaling), written as scale i and to the mirror at (r, c) when `store`.
template <class Q>
__device__ __forceinline__ float block_scale(const EwParams &p, u32 m,
                                             bool store, i64 i, i64 r, i64 c) {
  u8 code;
  const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
  if (store) {
    store_scale<Q>(p.scale, i, s, code);
    store_scale_mirror<Q>(p, r, c, s, code);
  }
  return s;
}

/// Block row `u` of R x C blocks (the column and tile paths; the stacked
/// [batch * scaleRows] grid): its first row, that row's flat index of
/// column 0, and its rows (the last block row of a batch may be short).
/// Where the codes and scales of column `c` go: [batch, rows, cols] and
/// [batch, scaleRows, scaleCols], or, transposed (Q::kTransposed, the
/// column path), [batch, cols, rows] and [batch, scaleCols, scaleRows].
template <class Q> struct ColumnBlock {
  i64 row0, base, rows; ///< first row of the stacked [batch * rows]
  i64 batch, r0, unit;  ///< its matrix, first row and block row there
  __device__ __forceinline__ ColumnBlock(const EwParams &p, i64 u) {
    batch = row_of(u, p.scaleRows);
    unit = u - batch * p.scaleRows;
    r0 = unit * Q::kBlockRows;
    rows = p.rows - r0 < Q::kBlockRows ? p.rows - r0 : i64(Q::kBlockRows);
    row0 = batch * p.rows + r0;
    base = row0 * p.cols;
  }
  /// The code of the block's row r (0 .. rows) in column c.
  __device__ __forceinline__ i64 code(const EwParams &p, i64 r, i64 c) const {
    if constexpr (Q::kTransposed)
      return (batch * p.cols + c) * p.rows + r0 + r;
    return base + r * p.cols + c;
  }
  /// The index in p.scale of the block's scale in column c; mirrorRow and
  /// mirrorCol: its coordinates in the grid of scales written (the
  /// mirror's, store_scale_mirror).
  __device__ __forceinline__ i64 scale(const EwParams &p, i64 c) const {
    if constexpr (Q::kTransposed)
      return (batch * p.scaleCols + c) * p.scaleRows + unit;
    return (batch * p.scaleRows + unit) * p.scaleCols + c;
  }
  __device__ __forceinline__ i64 mirrorRow(const EwParams &p, i64 c) const {
    return Q::kTransposed ? c : batch * p.scaleRows + unit;
  }
  __device__ __forceinline__ i64 mirrorCol(i64 c) const {
    return Q::kTransposed ? unit : c;
  }
};

} // namespace fp8k
