//===- elementwise_moe.cuh - MoE routing -----------------------*- CUDA -*-===//
//
// MoE routing: the permute (count, route, then gather + quantize) and the
// unpermute.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"
#include "fp8/elementwise_quantize_rows.cuh"

namespace fp8k {

//===----------------------------------------------------------------------===//
// MoE routing: permute (count, route, then gather + quantize), unpermute
//===----------------------------------------------------------------------===//

// The routing of a permute step (EwParams, "MoE steps") runs in two
// kernels over chunks of kRouteChunk routing slots (elementwise_params.h;
// slot i = t * topK + j: token t's j-th expert), a CTA per chunk:
// moe_count_body counts each chunk's slots per expert into a scratch of
// [chunks, E] int32 counters (in[2]); moe_route_body reads every chunk's
// counters, so each CTA knows every group's padded offset and the rows its
// experts' earlier slots took, and ranks its own slots in token order.
// With one chunk (up to kRouteChunk slots: a decode step) the route kernel
// counts the chunk itself and the count kernel is not launched.
// Every row and slot is written (source -1 on the rows without a token), so
// the step needs no clearing between runs; the gather-quantize that follows
// writes the codes and scales of every row.

/// The end of chunk c's slots, of n.
__device__ __forceinline__ i64 moe_chunk_end(i64 c, i64 n) {
  return (c + 1) * kRouteChunk < n ? (c + 1) * kRouteChunk : n;
}

/// This thread's routing slots of chunk c, one a pass (pass k: slot
/// c * kRouteChunk + k * kRouteThreads + threadIdx.x; -1 at or past `end`),
/// loaded together before any is used: one memory latency a chunk, not one
/// a pass.
__device__ __forceinline__ void moe_chunk_ids(const int *ids, i64 c, i64 end,
                                              int (&id)[kRoutePasses]) {
  const i64 i0 = c * kRouteChunk + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kRoutePasses; ++k) {
    const i64 i = i0 + i64(k) * kRouteThreads;
    id[k] = i < end ? ids[i] : -1;
  }
}

/// A routing slot's expert (-1 for a dropped slot: past the slots, or an id
/// outside [0, E)), the lanes of the warp with the same one, and how many
/// of them come before this lane.
struct SlotPeers {
  int id;
  u32 peers;
  int lower;
};
__device__ __forceinline__ SlotPeers slot_peers(int id, i64 experts) {
  SlotPeers s;
  s.id = id >= 0 && id < experts ? id : -1;
  s.peers = __match_any_sync(0xffffffffu, s.id);
  s.lower = __popc(s.peers & ((1u << (threadIdx.x & 31)) - 1));
  return s;
}

/// A chunk's count of slots per expert, into hist[0, E) (shared memory;
/// every thread of the CTA calls it with its slots' ids, moe_chunk_ids;
/// returns after a barrier); ids outside [0, E) are not counted (their
/// slots are dropped).
__device__ __forceinline__ void
moe_chunk_histogram(const int (&id)[kRoutePasses], i64 experts, int *hist) {
  for (i64 e = threadIdx.x; e < experts; e += kRouteThreads)
    hist[e] = 0;
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRoutePasses; ++k) {
    // One shared-memory add per expert and warp (a pass past the chunk's
    // slots, all -1, adds nothing).
    const SlotPeers s = slot_peers(id[k], experts);
    if (s.id >= 0 && s.lower == 0)
      atomicAdd(&hist[s.id], __popc(s.peers));
  }
  __syncthreads();
}

/// Chunk blockIdx.x's count of slots per expert, to counts[chunk * E + e].
__device__ __forceinline__ void moe_count_body(const EwParams &p) {
  __shared__ int hist[kMaxMoeExperts];
  const int *ids = static_cast<const int *>(p.in[1]);
  int *counts = static_cast<int *>(const_cast<void *>(p.in[2]));
  const i64 experts = p.scaleRows, n = p.batch * p.mirrorStrideRows;
  const int t = int(threadIdx.x);
  for (i64 c = blockIdx.x; c < moe_route_chunks(n); c += gridDim.x) {
    int id[kRoutePasses];
    const i64 end = moe_chunk_end(c, n);
    moe_chunk_ids(ids, c, end, id);
    moe_chunk_histogram(id, experts, hist);
    for (i64 e = t; e < experts; e += kRouteThreads)
      counts[c * experts + e] = hist[e];
    __syncthreads();
  }
}

/// Chunk blockIdx.x's slots routed: positions[i] = the row of slot i (-1
/// for an id outside [0, E)), source[row] = its token; rows of a group in
/// token order, groups padded to `align` rows. CTA 0 writes the offsets;
/// the rows without a token (a group's padding: the CTA of chunk e mod
/// chunks; the rows after the last group: every CTA, strided) get source
/// -1.
__device__ __forceinline__ void moe_route_body(const EwParams &p) {
  enum : int { kWarps = kRouteThreads / 32 };
  enum : int { kPerThread = kMaxMoeExperts / kRouteThreads };
  // next[e]: the row of expert e's next slot in this chunk; ahead[w][e]:
  // the slots of expert e in warp w of the current pass (zero otherwise).
  __shared__ int next[kMaxMoeExperts];
  __shared__ int ahead[kWarps][kMaxMoeExperts];
  __shared__ int scan[kRouteThreads];
  const int *ids = static_cast<const int *>(p.in[1]);
  const int *counts = static_cast<const int *>(p.in[2]);
  int *offsets = reinterpret_cast<int *>(p.amax);
  int *positions = static_cast<int *>(p.history);
  int *source = static_cast<int *>(p.scaleMirror);
  const i64 topK = p.mirrorStrideRows, experts = p.scaleRows;
  const i64 align = p.mirrorStrideCols, n = p.batch * topK;
  const i64 chunks = moe_route_chunks(n);
  const int t = int(threadIdx.x), w = t >> 5;
  // Thread t owns experts [e0, e0 + q): contiguous, for the scan of the
  // groups' padded sizes.
  const i64 q = (experts + kRouteThreads - 1) / kRouteThreads;
  const i64 e0 = t * q < experts ? t * q : experts;
  const i64 e1 = e0 + q < experts ? e0 + q : experts;
  for (i64 c = blockIdx.x; c < chunks; c += gridDim.x) {
    const i64 end = moe_chunk_end(c, n);
    int id[kRoutePasses];
    // One chunk: its counts, counted here, wait in next[] (each thread
    // reads its own experts' before the barriers of the scan below, and
    // only then sets their next[]).
    if (chunks == 1) {
      moe_chunk_ids(ids, c, end, id);
      moe_chunk_histogram(id, experts, next);
    }
    int total[kPerThread], before[kPerThread];
    int mine = 0;
    for (i64 e = e0; e < e1; ++e) {
      int sum = 0, prior = 0;
      if (chunks == 1)
        sum = next[e];
      for (i64 k = 0; k < chunks && chunks > 1; ++k) {
        const int v = counts[k * experts + e];
        sum += v;
        prior += k < c ? v : 0;
      }
      total[e - e0] = sum;
      before[e - e0] = prior;
      mine += int((sum + align - 1) / align * align);
    }
    scan[t] = mine;
    __syncthreads();
    for (int d = 1; d < kRouteThreads; d <<= 1) {
      const int v = t >= d ? scan[t - d] : 0;
      __syncthreads();
      scan[t] += v;
      __syncthreads();
    }
    const i64 rowsUsed = scan[kRouteThreads - 1];
    i64 off = scan[t] - mine;
    for (i64 e = e0; e < e1; ++e) {
      const i64 count = total[e - e0];
      const i64 padEnd = off + (count + align - 1) / align * align;
      next[e] = int(off + before[e - e0]);
      if (c == 0)
        offsets[e] = int(off);
      if (e % chunks == c)
        for (i64 r = off + count; r < padEnd && r < p.rows; ++r)
          source[r] = -1;
      off = padEnd;
    }
    if (c == 0 && t == 0)
      offsets[experts] = int(rowsUsed);
    for (i64 r = rowsUsed + c * kRouteThreads + t; r < p.rows;
         r += chunks * kRouteThreads)
      source[r] = -1;
    // Several chunks: the slots are loaded here, after the counts and the
    // scan (loaded before them, the slots stay live through both, and ptxas
    // spills).
    if (chunks > 1)
      moe_chunk_ids(ids, c, end, id);
    for (i64 e = t; e < kWarps * experts; e += kRouteThreads)
      ahead[e / experts][e % experts] = 0;
    __syncthreads();
    // Passes of a slot a thread, in slot order: a slot's row is its
    // expert's next row, plus the earlier warps' slots of that expert, plus
    // the earlier lanes' of its own warp.
    // (Not unrolled: id[] shifts down a pass at a time, so it stays in
    // registers; four unrolled passes made ptxas spill.)
#pragma unroll 1
    for (int k = 0; k < kRoutePasses; ++k) {
      const i64 i = c * kRouteChunk + i64(k) * kRouteThreads + t;
      const SlotPeers s = slot_peers(id[0], experts);
#pragma unroll
      for (int j = 0; j + 1 < kRoutePasses; ++j)
        id[j] = id[j + 1];
      if (s.id >= 0 && s.lower == 0)
        ahead[w][s.id] = __popc(s.peers);
      __syncthreads();
      if (s.id >= 0) {
        i64 row = next[s.id] + s.lower;
        for (int v = 0; v < w; ++v)
          row += ahead[v][s.id];
        positions[i] = row < p.rows ? int(row) : -1;
        if (row < p.rows)
          source[row] = int(i / topK);
      } else if (i < end) {
        positions[i] = -1;
      }
      __syncthreads();
      if (s.id >= 0 && s.lower == 0) {
        atomicAdd(&next[s.id], __popc(s.peers));
        ahead[w][s.id] = 0;
      }
      __syncthreads();
    }
  }
}

/// The rows of token t's copies: positions[t, j0 + k] for k < 8 (-1 past
/// topK), loaded before any is used.
__device__ __forceinline__ void moe_copy_rows(const int *positions, i64 topK,
                                              i64 t, i64 j0, int (&rows)[8]) {
#pragma unroll
  for (int k = 0; k < 8; ++k)
    rows[k] = j0 + k < topK ? positions[t * topK + j0 + k] : -1;
}

/// The permuted rows quantized (row blocks, as quantize_rows_vec_body),
/// token by token: the lanes of a block read it once, quantize it, and write
/// its codes and scale to each of the token's rows (positions[t, j]; a
/// dropped slot, -1, is skipped). The copies of a token are equal, so the
/// input is read once and each block quantized once. Blocks with a vector
/// row path in rows of a multiple of eight columns, aligned tensors.
template <class Prog, class Q>
__device__ __forceinline__ void moe_permute_vec_body(const EwParams &p) {
  using V = RowVec<Q, Prog>;
  const i64 nbc = p.scaleCols, topK = p.mirrorStrideRows;
  u8 *codes = static_cast<u8 *>(p.out);
  // A unit's row is its token.
  row_vec_walk<Prog, Q>(p, p.batch * nbc, [&](const RowVecUnit<V::kC> &b) {
    u8 code;
    const float s =
        scale_from_amax(u2f(b.amax), Q::kFormat, Q::kScaleFmt, 0, &code);
    const ScaleDivisor d = scale_divisor(s);
    u32 w[V::kC][2];
#pragma unroll
    for (int v = 0; v < V::kC; ++v)
      quantize_codes<8>(b.x[v], d, Q::kFormat, w[v]);
    for (i64 j0 = 0; j0 < topK; j0 += 8) {
      int rows[8];
      moe_copy_rows(static_cast<const int *>(p.history), topK, b.row, j0, rows);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const i64 row = rows[k];
        if (!b.valid || row < 0 || row >= p.rows)
          continue;
        if (b.part == 0)
          store_scale<Q>(p.scale, row * nbc + b.cb, s, code);
#pragma unroll
        for (int v = 0; v < V::kC; ++v)
          if (b.in[v])
            store_code_words<8>(codes,
                                row * p.cols + b.c0 + (v * V::kL + b.part) * 8,
                                8, true, w[v]);
      }
    }
  });
}

/// The scalar form: a warp per (token, column block), lane l taking its
/// columns l, l + 32, ... (evaluated for the amax, then again for each
/// copy's codes).
template <class Prog, class Q>
__device__ __forceinline__ void moe_permute_scalar_body(const EwParams &p) {
  const i64 bc = Q::kBlockCols ? i64(Q::kBlockCols) : p.cols;
  const i64 nbc = p.scaleCols, topK = p.mirrorStrideRows;
  const i64 units = p.batch * nbc; // tokens x column blocks
  const int lane = int(threadIdx.x & 31);
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  const int *positions = static_cast<const int *>(p.history);
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = warp; u < units; u += warps) {
    const i64 t = u / nbc, cb = u - t * nbc;
    const i64 c0 = cb * bc;
    const i64 c1 = c0 + bc < p.cols ? c0 + bc : p.cols;
    u32 m = 0;
    for (i64 c = c0 + lane; c < c1; c += 32) {
      const u32 b = abs_bits(Prog::eval(p, t * p.cols + c));
      m = b > m ? b : m;
    }
    m = warp_max(m);
    u8 code;
    const float s = scale_from_amax(u2f(m), Q::kFormat, Q::kScaleFmt, 0, &code);
    for (i64 j = 0; j < topK; ++j) {
      const i64 row = positions[t * topK + j];
      if (row < 0 || row >= p.rows)
        continue;
      if (lane == 0)
        store_scale<Q>(p.scale, row * nbc + cb, s, code);
      for (i64 c = c0 + lane; c < c1; c += 32)
        codes[row * p.cols + c] =
            quantize_value(Prog::eval(p, t * p.cols + c), s, Q::kFormat);
    }
  }
}

/// The gather-quantize of a permute step: the tokens' rows (the vector or
/// scalar form), then the rows without a token (source -1) get codes and
/// scales of zeros, a warp a row, in 16-byte stores where rows are 16-byte
/// aligned.
template <class Prog, class Q>
__device__ __forceinline__ void moe_permute_quantize_body(const EwParams &p) {
  u8 *codes = static_cast<u8 *>(p.out);
  if (RowVec<Q, Prog>::kLanes > 0 && p.cols % 8 == 0 && Prog::aligned(p, 16) &&
      is_aligned(codes, 8))
    moe_permute_vec_body<Prog, Q>(p);
  else
    moe_permute_scalar_body<Prog, Q>(p);
  const int *source = static_cast<const int *>(p.scaleMirror);
  const i64 nbc = p.scaleCols;
  const int lane = int(threadIdx.x & 31);
  const i64 warp = (i64(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
  u8 zeroCode;
  const float zeroScale =
      scale_from_amax(0.0f, Q::kFormat, Q::kScaleFmt, 0, &zeroCode);
  const u8 zero = quantize_value(0.0f, zeroScale, Q::kFormat);
  const u32 zero4 = u32(zero) * 0x01010101u;
  const bool wide = p.cols % 16 == 0 && is_aligned(codes, 16);
  for (i64 r = warp; r < p.rows; r += warps) {
    if (source[r] >= 0)
      continue;
    u8 *row = codes + r * p.cols;
    if (wide) {
      for (i64 c = lane * 16; c < p.cols; c += 32 * 16)
        *reinterpret_cast<uint4 *>(row + c) = uint4{zero4, zero4, zero4, zero4};
    } else {
      for (i64 c = lane; c < p.cols; c += 32)
        row[c] = zero;
    }
    for (i64 c = lane; c < nbc; c += 32)
      store_scale<Q>(p.scale, r * nbc + c, zeroScale, zeroCode);
  }
}

/// out[t, h] = sum over j of weights[t, j] * y[positions[t, j], h], in FP32
/// in j order (a dropped slot, position -1, adds nothing), rounded to OutT;
/// y of element type InT (the program is the identity). Rows of a multiple
/// of 8 elements (y and out 16-byte aligned) take eight a thread: the
/// token's positions and weights for eight slots at a time (moe_copy_rows),
/// then those slots' rows of y, each in one or two 16-byte loads, all in
/// flight together before any is summed. Other rows take an element a
/// thread.
template <class Prog, int InT, int OutT>
__device__ __forceinline__ void moe_unpermute_body(const EwParams &p) {
  const i64 topK = p.mirrorStrideRows;
  const int *positions = static_cast<const int *>(p.in[1]);
  const float *weights = static_cast<const float *>(p.in[2]);
  const i64 stride = i64(gridDim.x) * blockDim.x;
  const i64 first = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p.cols % 8 == 0 && is_aligned(p.in[0], 16) && is_aligned(p.out, 16)) {
    constexpr int kW = VecWords<InT, 8>::kCount;
    const i64 vecCols = p.cols / 8, n = p.rows * vecCols;
    for (i64 q = first; q < n; q += stride) {
      const i64 t = row_of(q, vecCols), h = (q - t * vecCols) * 8;
      float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
      for (i64 j0 = 0; j0 < topK; j0 += 8) {
        int r[8];
        moe_copy_rows(positions, topK, t, j0, r);
        float w[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          if (r[k] >= p.scaleRows)
            r[k] = -1;
          w[k] = r[k] >= 0 ? weights[t * topK + j0 + k] : 0.0f;
        }
        u32 words[8][kW];
#pragma unroll
        for (int k = 0; k < 8; ++k)
          if (r[k] >= 0)
            load_words<InT, 8>(p.in[0], r[k] * p.cols + h, words[k]);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          if (r[k] < 0)
            continue;
          float v[8];
          unpack_words<InT, 8>(words[k], v);
#pragma unroll
          for (int e = 0; e < 8; ++e)
            acc[e] = add(acc[e], mul(w[k], v[e]));
        }
      }
      store_vec<OutT, 8>(p.out, t * p.cols + h, acc);
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
