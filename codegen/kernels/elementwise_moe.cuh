//===- elementwise_moe.cuh - MoE routing -----------------------*- CUDA -*-===//
//
// MoE routing: the permute (route, then gather + quantize) and the
// unpermute.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"

namespace fp8k {

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
      m = max_abs_bits<4>(v, m);
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

} // namespace fp8k
