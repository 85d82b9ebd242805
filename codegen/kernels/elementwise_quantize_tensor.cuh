//===- elementwise_quantize_tensor.cuh - Quantize, per tensor --*- CUDA -*-===//
//
// The per-tensor blocks' passes of the block path
// (elementwise_quantize_blocks.cuh): the tensor walked flat, pass 1's amax
// (with delayed scaling's codes from the predicted scale, and its scale made
// by the last CTA) and the codes (current scaling's making the scale); and
// the one pass of current scaling whose amax is given.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"
#include "fp8/fp8_delayed.h"

namespace fp8k {

/// Per-tensor blocks (whole x whole: a scale per matrix of the batch) are
/// walked flat, eight elements a thread in 16-byte loads when the matrix
/// has a multiple of 8 elements and the tensors are aligned, else one.
template <class Prog>
__device__ __forceinline__ bool tensor_vec(const EwParams &p) {
  return p.rows * p.cols % 8 == 0 && Prog::aligned(p, 16) &&
         is_aligned(p.out, 8);
}

/// delayed_history_amax of a non-empty history, by the whole CTA (every
/// thread calls it and gets the result): each thread takes every
/// blockDim.x-th recorded value, newest first, by delayed_history_amax's
/// rule from +0; the CTA joins these maxima, non-negative floats whose bits
/// order as their values, so the result has the one-thread loop's bits.
/// (One thread walking the whole history would load all of it: 1024
/// values at Transformer Engine's default length, in every thread of the
/// amax pass and in the scales kernel.)
template <class Q>
__device__ __forceinline__ float cta_history_amax(const AmaxHistoryState *st,
                                                  const float *values) {
  if constexpr (Q::kAlgo == 1) {
    return delayed_history_amax(st, values, Q::kHistory, Q::kAlgo);
  } else {
    __shared__ u32 part[32];
    const u32 length = u32(Q::kHistory), count = st->count;
    float best = 0.0f;
    for (u32 i = threadIdx.x; i < count; i += blockDim.x) {
      const float v = values[(st->head + length - 1 - i) % length];
      best = v > best ? v : best;
    }
    u32 m = warp_max(f2u(best));
    if ((threadIdx.x & 31) == 0)
      part[threadIdx.x >> 5] = m;
    __syncthreads();
    for (int w = 0; w < int(blockDim.x >> 5); ++w)
      m = part[w] > m ? part[w] : m;
    __syncthreads(); // (part is read before a later call writes it)
    return u2f(m);
  }
}

/// The amax delayed scaling predicts from the history, the whole CTA's
/// (cta_history_amax), or false when the history is empty. Every thread of
/// the CTA calls it.
template <class Q>
__device__ __forceinline__ bool delayed_history_prediction(const EwParams &p,
                                                           float *amax) {
  const AmaxHistoryState *st = static_cast<const AmaxHistoryState *>(p.history);
  if (st->count == 0)
    return false;
  *amax = cta_history_amax<Q>(st, reinterpret_cast<const float *>(st + 1));
  return true;
}

/// Stores scale block i's scale, with its mirror when there is one.
template <class Q>
__device__ __forceinline__ void store_block_scale(const EwParams &p, i64 i,
                                                  float s, u8 code) {
  store_scale<Q>(p.scale, i, s, code);
  if (p.scaleMirror) {
    const i64 r = i / p.scaleCols;
    store_scale_mirror<Q>(p, r, i - r * p.scaleCols, s, code);
  }
}

/// Scale block i's scale from its amax `bits` (through the history for
/// delayed scaling, whose prediction the caller's CTA reduced:
/// `historyAmax`), stored with its mirror; the block's amax is reset for
/// the next call. Pass 2 of the block path, one thread a block.
template <class Q>
__device__ __forceinline__ void make_block_scale(const EwParams &p, i64 i,
                                                 u32 bits, float historyAmax) {
  u8 code;
  float s;
  if constexpr (Q::kDelayed) {
    AmaxHistoryState *st = static_cast<AmaxHistoryState *>(p.history);
    s = delayed_scale_step_from(
        st, reinterpret_cast<float *>(st + 1), Q::kHistory, Q::kInterval,
        Q::kMargin, historyAmax, bits, Q::kFormat, Q::kScaleFmt, &code);
  } else {
    s = scale_from_amax(u2f(bits), Q::kFormat, Q::kScaleFmt, 0, &code);
  }
  store_block_scale<Q>(p, i, s, code);
  p.amax[i] = 0;
}

/// The codes of the eight elements from flat element i with the scale of
/// `d`. Current scaling's scale was made from the matrix's amax, which
/// bounds every value: quantize_codes; a delayed scale may be exceeded, and
/// so may one made from a given amax (Q::kAmaxIn), which the kernel did not
/// compute: quantize_codes_unbounded.
template <class Prog, class Q, bool kStream = false>
__device__ __forceinline__ void tensor_chunk_codes(const EwParams &p, i64 i,
                                                   const float (&v)[8],
                                                   const ScaleDivisor &d) {
  u32 w[2];
  if constexpr (Q::kDelayed || Q::kAmaxIn)
    quantize_codes_unbounded<8>(v, d, Q::kFormat, w);
  else
    quantize_codes<8>(v, d, Q::kFormat, w);
  store_code_words<8, kStream>(static_cast<u8 *>(p.out), i, 8, true, w);
}

/// Calls f(q, r) for the chunks q = first, first + stride, ... below `end`
/// (16-byte chunks of the flat tensor: elements 8q .. 8q + 7), kK a step
/// with every load issued before any f runs, r what Prog::load_raw brought
/// (kLastUse: the loads are the input's last). `backward` walks them from
/// the last, q = end - 1 - (first - base), ..., down to `base`. (Where f
/// stores, the compiler may not move the next chunk's load above the store,
/// which could alias it: one chunk a step holds one load in flight a
/// thread.)
template <class Prog, int kK, bool kLastUse, class F>
__device__ __forceinline__ void chunk_walk(const EwParams &p, i64 base,
                                           i64 first, i64 end, i64 stride,
                                           bool backward, F &&f) {
  for (i64 q = first; q < end; q += kK * stride) {
    typename Prog::template Raw<8> r[kK];
    i64 at[kK];
#pragma unroll
    for (int k = 0; k < kK; ++k) {
      const i64 c = q + k * stride;
      at[k] = backward ? end - 1 - (c - base) : c;
    }
#pragma unroll
    for (int k = 0; k < kK; ++k)
      if (k == 0 || q + k * stride < end)
        Prog::template load_raw<8, kLastUse>(p, at[k] * 8,
                                             row_of(at[k] * 8, p.cols), r[k]);
#pragma unroll
    for (int k = 0; k < kK; ++k)
      if (k == 0 || q + k * stride < end)
        f(at[k], r[k]);
  }
}

/// Calls f(i, v) for each 16-byte chunk of matrix b that this thread takes
/// (flat chunks first, first + stride, ...; i its first element, v its
/// values), kK chunks a step (chunk_walk), from the matrix's last chunk
/// with `backward` (tensor_walks_backward).
template <class Prog, int kK, bool kLastUse, class F>
__device__ __forceinline__ void tensor_vec_walk(const EwParams &p, i64 b,
                                                bool backward, F &&f) {
  const i64 chunks = p.rows * p.cols / 8;
  chunk_walk<Prog, kK, kLastUse>(
      p, b * chunks, b * chunks + i64(blockIdx.x) * blockDim.x + threadIdx.x,
      (b + 1) * chunks, i64(gridDim.x) * blockDim.x, backward,
      [&](i64 q, const typename Prog::template Raw<8> &r) {
        float v[8];
        Prog::template eval_raw<8>(r, v);
        f(q * 8, v);
      });
}

/// Whether the codes pass, the second over the input after the amax pass,
/// walks a matrix from its last element: it then starts on what the amax
/// pass read last, still in L2, when the matrix's input is too large for
/// the L2 to hold it all. Below that the forward walk is as fast or faster.
/// Measured on the H100 (50 MB of L2), bf16 input, codes pass backward
/// against forward: 16 and 20 MiB 2.6% and 1.7% slower; 24, 28, 32, 48 and
/// 128 MiB 2%, 6%, 9%, 8% and 2% faster
/// (docs/results/h100-2026-12-06-per-tensor-walk/).
template <class Prog>
__device__ __forceinline__ bool tensor_walks_backward(const EwParams &p) {
  constexpr i64 kMinBytes = i64(22) << 20;
  // (the bytes the loads of eight elements bring, all inputs together)
  constexpr i64 kBytes8 = i64(sizeof(typename Prog::template Raw<8>));
  return p.rows * p.cols / 8 * kBytes8 > kMinBytes;
}

/// The codes of matrix b with scale s (per-tensor blocks), walked backward
/// when tensor_walks_backward says so (the callers then take the matrices
/// last first).
template <class Prog, class Q>
__device__ __forceinline__ void tensor_codes(const EwParams &p, i64 b,
                                             float s) {
  const i64 plane = p.rows * p.cols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool backward = tensor_walks_backward<Prog>(p);
  u8 *codes = static_cast<u8 *>(p.out);
  if (tensor_vec<Prog>(p)) {
    const ScaleDivisor d = scale_divisor(s);
    // The input's lines leave the L2 first once read here, and so do the
    // codes': the part of the input the amax pass left there, not yet
    // reached, stays longer (H100, 4096x4096: 0.0337-0.0339 -> 0.0326-0.0327
    // ms; docs/results/h100-2026-12-06-evict-first/).
    tensor_vec_walk<Prog, 1, true>(
        p, b, backward, [&](i64 i, const float (&v)[8]) {
          tensor_chunk_codes<Prog, Q, true>(p, i, v, d);
        });
    return;
  }
  for (i64 e = first; e < plane; e += stride) {
    const i64 i = b * plane + (backward ? plane - 1 - e : e);
    codes[i] = quantize_value(Prog::eval(p, i), s, Q::kFormat);
  }
}

/// Per-tensor current scaling's codes pass, which makes the scales
/// (quantizeScalesInCodesPass: no kernel between the passes). For each
/// matrix b, thread 0 of every CTA takes the amax pass 1 left in the pair
/// of matrix b (amax_scratch_words) with one 64-bit atomic that also counts
/// the CTA, and turns it into the scale (the same bits in every CTA; CTA 0
/// stores it). The CTA that takes it last resets the pair for the next
/// call: every other CTA's atomic on the pair came before its own, so no
/// CTA can read the reset, and no fence is needed.
template <class Prog, class Q>
__device__ __forceinline__ void tensor_codes_making_scales(const EwParams &p) {
  __shared__ float scale;
  const bool backward = tensor_walks_backward<Prog>(p);
  for (i64 j = 0; j < p.batch; ++j) {
    const i64 b = backward ? p.batch - 1 - j : j;
    if (threadIdx.x == 0) {
      u64 *pair = reinterpret_cast<u64 *>(p.amax) + b;
      const u64 taken = atomicAdd(pair, u64(1) << 32);
      if (u32(taken >> 32) == gridDim.x - 1)
        atomicExch(pair, u64(0));
      u8 code;
      scale =
          scale_from_amax(u2f(u32(taken)), Q::kFormat, Q::kScaleFmt, 0, &code);
      if (blockIdx.x == 0)
        store_block_scale<Q>(p, b, scale, code);
    }
    __syncthreads();
    tensor_codes<Prog, Q>(p, b, scale);
    __syncthreads(); // (`scale` is read before the next matrix's is written)
  }
}

/// Per-tensor current scaling with each matrix's amax given
/// (ElementwiseSpec::amaxIn: p.scaleIn, [batch] f32, written by the GEMM
/// epilogue that wrote x): one pass, x read once. For each matrix b, thread
/// 0 of every CTA makes the scale from the amax (the same bits in every
/// CTA; CTA 0 stores it), then the CTA writes its share of the codes
/// (tensor_codes: backward on large matrices, where what the GEMM wrote
/// last may still be in the L2).
template <class Prog, class Q>
__device__ __forceinline__ void
quantize_tensor_given_amax_body(const EwParams &p) {
  static_assert(Q::kAmaxIn && !Q::kDelayed, "per-tensor current scaling");
  __shared__ float scale;
  const float *amax = static_cast<const float *>(p.scaleIn);
  const bool backward = tensor_walks_backward<Prog>(p);
  for (i64 j = 0; j < p.batch; ++j) {
    const i64 b = backward ? p.batch - 1 - j : j;
    if (threadIdx.x == 0) {
      u8 code;
      // (of |amax|; a NaN or an infinity makes a NaN scale and NaN codes)
      scale = scale_from_amax(amax[b], Q::kFormat, Q::kScaleFmt, 0, &code);
      if (blockIdx.x == 0)
        store_block_scale<Q>(p, b, scale, code);
    }
    __syncthreads();
    tensor_codes<Prog, Q>(p, b, scale);
    __syncthreads(); // (`scale` is read before the next matrix's is written)
  }
}

/// The word of matrix b's amax in the amax scratch: the low word of its
/// pair with current scaling (amax_scratch_words).
template <class Q> __device__ __forceinline__ i64 tensor_amax_word(i64 b) {
  return Q::kDelayed ? b : 2 * b;
}

/// The end of delayed scaling's pass 1 (quantizeScalesInAmaxPass): the last
/// CTA to finish, counted in the scratch word after the amax
/// (amax_scratch_words), makes the scale from the step's amax and the
/// history's prediction the CTA reduced (`historyAmax`), records the step
/// and resets the scratch: the block path's pass 2 without its kernel, nor
/// its second walk of the history. Every thread of the CTA calls it.
template <class Q>
__device__ __forceinline__ void delayed_scales_by_last_cta(const EwParams &p,
                                                           float historyAmax) {
  __shared__ bool last;
  // Thread 0 made the CTA's atomic, then arrives (release); the last to
  // arrive acquires every other CTA's, and its barrier passes them to its
  // threads.
  if (threadIdx.x == 0)
    last = atomic_add_acq_rel(&p.amax[p.batch], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last)
    return;
  for (i64 b = threadIdx.x; b < p.batch; b += blockDim.x)
    make_block_scale<Q>(p, b, *static_cast<volatile u32 *>(&p.amax[b]),
                        historyAmax);
  if (threadIdx.x == 0)
    p.amax[p.batch] = 0;
}

/// Pass 1 of per-tensor blocks: each matrix's amax, a CTA's joined in shared
/// memory and given to one atomicMax. Delayed scaling writes the codes in
/// the same pass, with the scale its history predicts, and its last CTA
/// makes the scale (delayed_scales_by_last_cta), recording whether that was
/// the step's scale; the codes pass rewrites them only when it was not (an
/// empty history, a non-finite amax): one read of the input per step once
/// the history has a value.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_amax_tensor_body(const EwParams &p) {
  __shared__ u32 warpMax[32];
  const i64 plane = p.rows * p.cols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool vec = tensor_vec<Prog>(p);
  // (every CTA reads the history here, before it arrives below; the last
  // to arrive alone changes it)
  float historyAmax = 0.0f;
  const bool speculate =
      Q::kDelayed && delayed_history_prediction<Q>(p, &historyAmax);
  float predicted = 1.0f;
  if (speculate) {
    u8 code;
    predicted = scale_from_amax(historyAmax, Q::kFormat, Q::kScaleFmt,
                                Q::kMargin, &code);
  }
  const ScaleDivisor dp = scale_divisor(predicted);
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 b = 0; b < p.batch; ++b) {
    u32 m = 0;
    if (vec) {
      // Two chunks a step. Delayed scaling stores its codes here (47
      // registers against 40, five CTAs an SM against six: 0.0342 ->
      // 0.0323 ms on 4096x4096, H200, with the codes pass's 8 CTAs an SM,
      // docs/results/h200-2026-12-02-tensor-walk/); current scaling's
      // amax alone stays at 32 registers, at six CTAs an SM (4096x4096
      // 0.0291 -> 0.0284-0.0285 ms, the pass 14.1 -> 12.7 us under Nsight
      // Compute; 8192x8192 0.0915 -> 0.0902-0.0905; H200, run4 of
      // docs/results/h200-2026-12-04-scales-in-codes-pass/). The codes
      // pass keeps one (40 registers against 29 cost 7% on 4096x2048).
      tensor_vec_walk<Prog, 2, false>(
          p, b, false, [&](i64 i, const float (&v)[8]) {
            m = max_abs_bits<8>(v, m);
            if (speculate)
              tensor_chunk_codes<Prog, Q>(p, i, v, dp);
          });
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
        atomicMax(&p.amax[tensor_amax_word<Q>(b)], m);
    }
    __syncthreads();
  }
  if constexpr (Q::kDelayed)
    delayed_scales_by_last_cta<Q>(p, historyAmax);
}

/// The CTA's amax `m` (every thread's) joined into the grid's at a
/// grid-wide wait, and the scale made from it, the same bits in every CTA:
/// thread 0 of each CTA makes one atomicMax on the pair's amax word, then
/// arrives on its count (release) and polls it (acquire) until every CTA
/// has arrived, so it reads the grid's amax. Each then leaves, counted on
/// past gridDim.x; the last to leave, after every other CTA read the amax,
/// resets the pair for the next call. CTA 0 stores the scale. Every thread
/// of the CTA (kTensorResidentThreads) calls it; all CTAs must be resident
/// at once (a cooperative launch).
template <class Q>
__device__ __forceinline__ float grid_amax_scale(const EwParams &p, u32 m) {
  __shared__ u32 warpMax[kTensorResidentThreads / 32];
  __shared__ float scale;
  m = cta_max<kTensorResidentThreads / 32>(m, warpMax);
  if (threadIdx.x == 0) {
    u32 *amax = p.amax, *count = p.amax + 1;
    if (m)
      atomicMax(amax, m);
    atomic_add_acq_rel(count, 1u);
    while (load_acquire(count) < gridDim.x) {
    }
    const u32 bits = *static_cast<volatile u32 *>(amax);
    if (atomic_add_acq_rel(count, 1u) == 2 * gridDim.x - 1) {
      *amax = 0;
      *count = 0;
    }
    u8 code;
    scale = scale_from_amax(u2f(bits), Q::kFormat, Q::kScaleFmt, 0, &code);
    if (blockIdx.x == 0)
      store_block_scale<Q>(p, 0, scale, code);
  }
  __syncthreads();
  return scale;
}

/// Per-tensor current scaling of one matrix in one kernel, its input read
/// once where it fits on chip (tensor_resident_path, kTensorResidentBytes).
/// The first `kept` chunks are held: CTA c loads an equal share of them
/// into its shared memory (evict-first: never read from memory again),
/// joining their amax; the CTAs then stride over the rest, forward. After
/// the grid-wide wait for the amax (grid_amax_scale) the rest is read again
/// backward, from what the first walk read last and the L2 still holds, and
/// the held chunks are quantized from shared memory. Each walk takes four
/// chunks a step (a CTA an SM: its 1024 threads have 64 registers each). A
/// matrix without the 16-byte loads is walked element by element, twice.
template <class Prog, class Q>
__device__ __forceinline__ void
quantize_resident_tensor_body(const EwParams &p) {
  using Raw = typename Prog::template Raw<8>;
  Raw *held = reinterpret_cast<Raw *>(dynamic_shared());
  const i64 plane = p.rows * p.cols;
  const bool vec = tensor_vec<Prog>(p);
  const i64 chunks = vec ? plane / 8 : 0;
  const i64 grid = gridDim.x, t = threadIdx.x;
  const i64 perCta = i64(kTensorResidentBytes) / i64(sizeof(Raw));
  const i64 kept = chunks < perCta * grid ? chunks : perCta * grid;
  const i64 share = (kept + grid - 1) / grid;
  const i64 k0 = blockIdx.x * share < kept ? blockIdx.x * share : kept;
  const i64 k1 = k0 + share < kept ? k0 + share : kept;
  const i64 restFirst = kept + i64(blockIdx.x) * blockDim.x + t;
  const i64 restStride = grid * blockDim.x;
  u32 m = 0;
  const auto join = [&](const Raw &r) {
    float v[8];
    Prog::template eval_raw<8>(r, v);
    m = max_abs_bits<8>(v, m);
  };
  chunk_walk<Prog, 4, true>(p, k0, k0 + t, k1, blockDim.x, false,
                            [&](i64 q, const Raw &r) {
                              held[q - k0] = r;
                              join(r);
                            });
  chunk_walk<Prog, 4, false>(p, kept, restFirst, chunks, restStride, false,
                             [&](i64, const Raw &r) { join(r); });
  const i64 flatFirst = i64(blockIdx.x) * blockDim.x + t;
  if (!vec)
    for (i64 e = flatFirst; e < plane; e += restStride) {
      const u32 bits = abs_bits(Prog::eval(p, e));
      m = bits > m ? bits : m;
    }
  const float s = grid_amax_scale<Q>(p, m);
  const ScaleDivisor d = scale_divisor(s);
  const auto encode = [&](i64 q, const Raw &r) {
    float v[8];
    Prog::template eval_raw<8>(r, v);
    tensor_chunk_codes<Prog, Q, true>(p, q * 8, v, d);
  };
  chunk_walk<Prog, 4, true>(p, kept, restFirst, chunks, restStride, true,
                            encode);
  for (i64 q = k0 + t; q < k1; q += blockDim.x)
    encode(q, held[q - k0]);
  if (!vec) {
    u8 *codes = static_cast<u8 *>(p.out);
    for (i64 e = flatFirst; e < plane; e += restStride)
      codes[e] = quantize_value(Prog::eval(p, e), s, Q::kFormat);
  }
}

} // namespace fp8k
