//===- elementwise_quantize_rows.cuh - Quantize, row blocks ----*- CUDA -*-===//
//
// Quantize of 1 x C blocks (1x128, MX 1x32) and whole rows (per-row
// scales), current scaling: one kernel, each block read once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"

namespace fp8k {

//===----------------------------------------------------------------------===//
// Quantize, row blocks (1 x C, 1 x whole): one pass
//===----------------------------------------------------------------------===//

/// Lanes of a warp that share one row block of program Prog in the vector
/// row path (row_vec_block_lanes) and the 16-byte chunks each takes
/// (row_vec_chunks); 0: no vector path for this width.
template <class Q, class Prog> struct RowVec {
  static constexpr int kLanes =
      row_vec_block_lanes(Q::kBlockCols, Prog::kConvertOnly);
  static constexpr int kChunks =
      row_vec_chunks(Q::kBlockCols, Prog::kConvertOnly);
  // The walk's shape (32 and 1 when the width has no vector path: its
  // bodies are then never run): lanes a block, chunks a lane, blocks a
  // warp step.
  static constexpr int kL = kLanes > 0 ? kLanes : 32;
  static constexpr int kC = kChunks > 0 ? kChunks : 1;
  static constexpr int kG = 32 / kL;
};

/// One row block as the vector row path's walk hands it over: unit u
/// (row `row`, column block cb from column c0), lane `part` of its lanes,
/// the block's amax bits and this lane's chunks (in[v]: chunk v lies in
/// the row, and the unit is valid; x[v]: its values).
template <int kC> struct RowVecUnit {
  i64 u, row, cb, c0;
  int part;
  bool valid;
  u32 amax;
  const bool (&in)[kC];
  const float (&x)[kC][8];
};

/// The vector row path's walk over `units` (row, column block) pairs of
/// p.scaleCols blocks a row: the grid's warps stride over them, a warp
/// taking 32 / kL blocks a step. Each block's lanes load their kC chunks
/// (every load issued before the program runs over any), evaluate them,
/// take the block's amax (a shuffle max over its lanes) and hand the block
/// to f (a RowVecUnit; its lanes past `units` too, not valid, for the
/// warp's shuffles).
///
/// The loads and the amax are written here, in the loop, not in a helper
/// that fills the caller's arrays through references: that form cost ptxas
/// 14-18 registers (the MX quantize 40 -> 54, 1x128 46 -> 64: six and five
/// CTAs an SM -> four) for the same instructions; ElementwiseCompileTest
/// holds the budget.
template <class Prog, class Q, class F>
__device__ __forceinline__ void row_vec_walk(const EwParams &p, i64 units,
                                             F &&f) {
  using V = RowVec<Q, Prog>;
  const i64 nbc = p.scaleCols;
  const int lane = int(threadIdx.x & 31);
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  for (i64 first = warp * V::kG; first < units; first += warps * V::kG) {
    const i64 u = first + lane / V::kL;
    const int part = lane % V::kL;
    const bool valid = u < units;
    const i64 row = valid ? row_of(u, nbc) : 0;
    const i64 cb = valid ? u - row * nbc : 0;
    const i64 c0 = cb * Q::kBlockCols;
    bool in[V::kC];
#pragma unroll
    for (int v = 0; v < V::kC; ++v)
      in[v] = valid && c0 + (v * V::kL + part) * 8 < p.cols;
    typename Prog::template Raw<8> raw[V::kC];
#pragma unroll
    for (int v = 0; v < V::kC; ++v)
      if (in[v])
        Prog::template load_raw<8>(
            p, row * p.cols + c0 + (v * V::kL + part) * 8, row, raw[v]);
    float x[V::kC][8];
    u32 m = 0;
#pragma unroll
    for (int v = 0; v < V::kC; ++v) {
      Prog::template eval_raw<8>(raw[v], x[v]);
      if (in[v])
        m = max_abs_bits<8>(x[v], m);
    }
#pragma unroll
    for (int o = V::kL / 2; o > 0; o >>= 1) {
      const u32 other = __shfl_xor_sync(0xFFFFFFFFu, m, o);
      m = other > m ? other : m;
    }
    f(RowVecUnit<V::kC>{u, row, cb, c0, part, valid, m, in, x});
  }
}

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
  using V = RowVec<Q, Prog>;
  u8 *codes = static_cast<u8 *>(p.out);
  row_vec_walk<Prog, Q>(
      p, p.batch * p.rows * p.scaleCols, [&](const RowVecUnit<V::kC> &b) {
        const float s =
            block_scale<Q>(p, b.amax, b.valid && b.part == 0, b.u, b.row, b.cb);
        const ScaleDivisor d = scale_divisor(s);
#pragma unroll
        for (int v = 0; v < V::kC; ++v)
          if (b.in[v]) {
            u32 w[2];
            quantize_codes<8>(b.x[v], d, Q::kFormat, w);
            store_code_words<8>(
                codes, b.row * p.cols + b.c0 + (v * V::kL + b.part) * 8, 8,
                true, w);
          }
      });
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
    const float s = block_scale<Q>(p, m, lane == 0, u, row, cb);
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
        m = max_abs_bits<8>(x, m);
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
    const float s = block_scale<Q>(p, m, valid && part == 0, row, row, 0);
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
      m = max_abs_bits<8>(v, m);
    }
    m = warp_max(m);
    const float s = block_scale<Q>(p, m, lane == 0, row, row, 0);
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

/// The partial sums of row `row` of the reduce threads thread r of a CTA of
/// kReduceThreads / kV plays (r + i * kReduceThreads / kV in acc[i], i <
/// kV), in the reduce kernel's order: a reduce thread adds the sum
/// program's values of its chunks of eight columns, every kReduceThreads-th,
/// in column order to +0. Cached: thread r's kQ chunks r, r +
/// kReduceThreads / kV, ... (reduce thread i's are those
/// with q % kV == i) are loaded into `raw` (zeros for those past the row's
/// end, chunkIn false) and kept for the values after the sum.
template <class Prog, int kQ, int kV>
__device__ __forceinline__ void
thread_row_sum_raw(const EwParams &p, i64 row, int r, bool cached, bool vec,
                   const bool *chunkIn, typename Prog::template RawS<8> *raw,
                   float (&acc)[kV]) {
  constexpr int kT = kReduceThreads, kRT = kReduceThreads / kV;
  static_assert(kRT * kV == kT && kQ % kV == 0, "whole reduce threads");
  const i64 base = row * p.cols;
#pragma unroll
  for (int i = 0; i < kV; ++i)
    acc[i] = 0.0f;
  if (cached) {
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      if (chunkIn[q])
        Prog::template load_raw_s<8>(p, base + i64(q * kRT + r) * 8, row,
                                     raw[q]);
      else
        raw[q] = {}; // evaluated after the sum, never read
    }
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      float x[8];
      Prog::template sum_raw<8>(raw[q], x);
      if (chunkIn[q]) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
          acc[q % kV] = add(acc[q % kV], x[k]);
      }
    }
    return;
  }
  // thread_row_sum's order, written out: through its lambda, ptxas spilled
  // 48 more bytes of LayerNorm's form of this kernel.
#pragma unroll
  for (int i = 0; i < kV; ++i)
    for (i64 c = i64(r + i * kRT) * 8; c < p.cols; c += i64(kT) * 8) {
      const int n = p.cols - c < 8 ? int(p.cols - c) : 8;
      float x[8];
      Prog::template sum_n<8>(p, base + c, n, vec, x);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        if (k < n)
          acc[i] = add(acc[i], x[k]);
    }
}

/// The blocks of a row-sum quantize's cached row (quantize_rows_sum_body):
/// thread t of kT holds the values of its chunks t, t + kT, ... (kC of
/// them, chunkIn[v] when chunk v lies in the row) in xs, kL lanes to a block.
/// The kC chunks' blocks at once: their amaxes, then each block's scale and
/// reciprocal computed by kL / kC of its kL lanes (lane part j of a block's
/// lanes takes chunk j's block), then shuffled to the block's lanes: one
/// scale computation a lane for kC blocks. Chunks past the row's end give
/// amax 0 and store nothing.
template <class Q, int kT, int kC, int kL>
__device__ __forceinline__ void
row_sum_cached_blocks(const EwParams &p, i64 row, int t, const bool *chunkIn,
                      const float (*xs)[8], u8 *codes) {
  constexpr int kSub = kL / kC;
  static_assert(kL % kC == 0, "a block's lanes split between the chunks");
  const int lane = t & 31;
  u32 m[kC];
#pragma unroll
  for (int v = 0; v < kC; ++v)
    m[v] = chunkIn[v] ? max_abs_bits<8>(xs[v], 0u) : 0u;
#pragma unroll
  for (int o = kL / 2; o > 0; o >>= 1)
#pragma unroll
    for (int v = 0; v < kC; ++v) {
      const u32 other = __shfl_xor_sync(0xFFFFFFFFu, m[v], o);
      m[v] = other > m[v] ? other : m[v];
    }
  const int j = (lane % kL) / kSub;
  u32 mj = m[0];
#pragma unroll
  for (int v = 1; v < kC; ++v)
    mj = j == v ? m[v] : mj;
  // Block j exists when its first chunk, its first lane's, is in the row
  // (a short last block's later lanes hold nothing).
  const int cj = (j * kT + t - lane % kL) * 8;
  const i64 cb = cj / Q::kBlockCols;
  const float sj = block_scale<Q>(p, mj, cj < int(p.cols) && lane % kSub == 0,
                                  row * p.scaleCols + cb, row, cb);
  const float rj = div(1.0f, sj);
  const int first = lane - lane % kL;
#pragma unroll
  for (int v = 0; v < kC; ++v) {
    const float sv = u2f(__shfl_sync(0xFFFFFFFFu, f2u(sj), first + v * kSub));
    const float rv = u2f(__shfl_sync(0xFFFFFFFFu, f2u(rj), first + v * kSub));
    if (chunkIn[v]) {
      u32 w[2];
      quantize_codes<8>(xs[v], scale_divisor_from(sv, rv), Q::kFormat, w);
      store_code_words<8>(codes, row * p.cols + i64(v * kT + t) * 8, 8, true,
                          w);
    }
  }
}

/// Row blocks of a program that reads its row's sum (an RMSNorm with its
/// statistics, ElementwiseSpec::rowSum): a CTA of kT = kReduceThreads / kV
/// threads a row, striding over the rows. Thread t plays the reduce
/// kernel's threads t + i * kT, i < kV (thread_row_sum_raw): their sums,
/// added by cta_row_sum<kV>, have reduceRow's bits. Then the program runs
/// with that sum over thread t's chunks of eight columns t, t + kT, ...: a
/// block of C columns is C / 8 consecutive lanes (a shuffle max), a whole
/// row the CTA (a shared-memory max). The kernel has an entry for each
/// row_sum_entry (elementwise_params.h): kV = kReduceThreads /
/// kRowSumThreads for short rows, kV = 1 for longer ones; kKept chunks a
/// thread kept (kRowSumKept), or none. A keeping entry is launched only for
/// rows of whole chunks of up to kC * kT * 8 columns on aligned tensors (the
/// vector path), whose loads it keeps in registers (one read). The entry
/// that keeps nothing (kKept = 0) takes every other row, evaluated again
/// per use (the reads after the first from the caches): its registers are
/// that path's alone, and without a copy of it in the keeping entries the
/// kernel's NVRTC compile runs 43% fewer instructions.
/// kFull: p.cols is every chunk of every thread (kC * kT * 8) on the vector
/// path, so no chunk needs its guard (quantize_rows_sum_body decides).
template <class Prog, class Q, int kV, int kKept, bool kFull>
__device__ __forceinline__ void quantize_rows_sum_rows(const EwParams &p) {
  constexpr int kT = kReduceThreads / kV;
  constexpr int kC = kKept > 0 ? kKept : kV; // chunks a thread keeps
  static_assert(kKept > 0 || !kFull, "a full row is a kept one");
  constexpr bool kWhole = Q::kBlockCols == 0;
  constexpr int kL = kWhole ? 32 : int(Q::kBlockCols) / 8; // lanes a block
  static_assert(kReduceChunk == 8 && kT % 32 == 0, "chunks of eight");
  static_assert(
      kWhole || (Q::kBlockCols % 8 == 0 && kL <= 32 && (kL & (kL - 1)) == 0),
      "blocks of 8 to 256 columns, a power of two");
  __shared__ float warpSum[kReduceThreads / 32];
  __shared__ u32 warpMax[kT / 32];
  const int t = int(threadIdx.x), lane = t & 31;
  const i64 units = p.batch * p.rows;
  // (cached: the launch's promise, row_sum_entry's; an unaligned tensor
  // here would fault on the first 16-byte access rather than go wrong)
  constexpr bool cached = kKept > 0;
  const bool vec = cached || (p.cols % 8 == 0 && Prog::aligned(p, 16) &&
                              is_aligned(p.out, 8));
  // Cached: which of this thread's chunks lie in a row (the same in every
  // row; 32-bit compares, the row being at most kC * kT * 8 long).
  bool chunkIn[kC];
#pragma unroll
  for (int v = 0; v < kC; ++v)
    chunkIn[v] = kFull || (cached && (v * kT + t) * 8 < int(p.cols));
  // The warp's first column a step: loops over it are uniform in the warp
  // (the shuffles below need every lane).
  const i64 warp0 = i64(t - lane) * 8;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 row = blockIdx.x; row < units; row += gridDim.x) {
    const i64 base = row * p.cols;
    typename Prog::template RawS<8> raw[kC];
    float acc[kV];
    thread_row_sum_raw<Prog, kC, kV>(p, row, t, cached, vec, chunkIn, raw, acc);
    const float sum = cta_row_sum<kV>(acc, warpSum);

    // Cached: every chunk's values at once, in straight-line code, so what
    // depends on the row's sum alone (an RMSNorm's reciprocal square root,
    // a correctly rounded square root and division with their slow paths)
    // is computed once a row, not once a chunk. A chunk past the row's end
    // evaluates zeros, to values nobody reads.
    float xs[kC][8];
    if (cached) {
#pragma unroll
      for (int v = 0; v < kC; ++v)
        Prog::template eval_raw_rs<8>(raw[v], sum, xs[v]);
    }
    // The values of chunk c (cached: chunk v of this thread).
    auto values = [&](int v, i64 c, float x[8]) {
      const int n = p.cols - c < 8 ? int(p.cols - c) : 8;
      if (cached) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
          x[k] = xs[v][k];
      } else {
        Prog::template eval_n_rs<8>(p, base + c, n, vec, row, sum, x);
      }
      return n;
    };
    auto store = [&](const float x[8], i64 c, int n, const ScaleDivisor &d) {
      u32 w[2];
      quantize_codes<8>(x, d, Q::kFormat, w);
      store_code_words<8>(codes, base + c, n, vec, w);
    };
    if constexpr (kWhole) {
      u32 m = 0;
      if (cached) {
#pragma unroll
        for (int v = 0; v < kC; ++v) {
          const i64 c = i64(v * kT + t) * 8;
          float x[8];
          const int n = values(v, c, x);
          if (c < p.cols)
            m = max_abs_bits<8>(x, m);
          (void)n;
        }
      } else {
        for (i64 c = i64(t) * 8; c < p.cols; c += i64(kT) * 8) {
          float x[8];
          values(0, c, x);
          m = max_abs_bits<8>(x, m); // zeros past the row's end
        }
      }
      m = warp_max(m);
      if (lane == 0)
        warpMax[t >> 5] = m;
      __syncthreads();
#pragma unroll
      for (int w = 0; w < kT / 32; ++w)
        m = warpMax[w] > m ? warpMax[w] : m;
      const float s = block_scale<Q>(p, m, t == 0, row, row, 0);
      const ScaleDivisor d = scale_divisor(s);
      if (cached) {
#pragma unroll
        for (int v = 0; v < kC; ++v) {
          const i64 c = i64(v * kT + t) * 8;
          if (c < p.cols) {
            float x[8];
            store(x, c, values(v, c, x), d);
          }
        }
      } else {
        for (i64 c = i64(t) * 8; c < p.cols; c += i64(kT) * 8) {
          float x[8];
          store(x, c, values(0, c, x), d);
        }
      }
    } else {
      // A block's lanes: part 0 writes its scale.
      auto block = [&](int v, i64 c) {
        const bool in = c < p.cols;
        float x[8];
        const int n = in ? values(v, c, x) : 0;
        u32 m = in ? max_abs_bits<8>(x, 0u) : 0u;
#pragma unroll
        for (int o = kL / 2; o > 0; o >>= 1) {
          const u32 other = __shfl_xor_sync(0xFFFFFFFFu, m, o);
          m = other > m ? other : m;
        }
        const i64 cb = c / Q::kBlockCols;
        const float s = block_scale<Q>(p, m, in && lane % kL == 0,
                                       row * p.scaleCols + cb, row, cb);
        if (in)
          store(x, c, n, scale_divisor(s));
      };
      if (cached && kL % kC == 0) {
        // (a block of fewer lanes than chunks, 1 x 8, takes block() below)
        if constexpr (kL % kC == 0)
          row_sum_cached_blocks<Q, kT, kC, kL>(p, row, t, chunkIn, xs, codes);
      } else if (cached) {
#pragma unroll
        for (int v = 0; v < kC; ++v)
          if (warp0 + i64(v * kT) * 8 < p.cols) // uniform in the warp
            block(v, i64(v * kT + t) * 8);
      } else {
        for (i64 c0 = warp0; c0 < p.cols; c0 += i64(kT) * 8)
          block(0, c0 + lane * 8);
      }
    }
    __syncthreads(); // warpSum and warpMax are reused by the next row
  }
}

/// quantize_rows_sum_rows, the short rows' entry's rows of exactly
/// kRowSumShortCols columns (every chunk of every thread: 4096, the hidden
/// size of Llama-3-8B) on the vector path without the chunks' guards, with
/// that length a constant; other rows as they come. (The long rows' entry
/// has no such form: a second instantiation of its body took the kernel's
/// NVRTC compile past two seconds of CPU time.)
template <class Prog, class Q, int kV, int kKept>
__device__ __forceinline__ void quantize_rows_sum_body(const EwParams &p) {
  if constexpr (kV > 1) {
    constexpr i64 kFullCols = kRowSumShortCols;
    static_assert(kFullCols == i64(kKept) * (kReduceThreads / kV) * 8,
                  "every chunk of every thread");
    if (p.cols == kFullCols) {
      EwParams q = p;
      q.cols = kFullCols;
      quantize_rows_sum_rows<Prog, Q, kV, kKept, true>(q);
      return;
    }
  }
  quantize_rows_sum_rows<Prog, Q, kV, kKept, false>(p);
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
    if (RowVec<Q, Prog>::kLanes > 0 && vec)
      quantize_rows_vec_body<Prog, Q>(p);
    else
      quantize_rows_scalar_body<Prog, Q>(p);
  }
}

} // namespace fp8k
