//===- gemm_quantize.cuh - A GEMM tile quantized in its epilogue -*- CUDA
//-*-===//
//
// The quantizing epilogue (KernelSpec::epilogue, core/KernelSpec.h): a
// warpgroup's 64 x kBlockN slab of finished GEMM values, in the wgmma
// accumulator layout, becomes FP8 codes and scales along the rows without
// the high-precision result ever reaching memory. Per value: rounded to the
// GEMM's result type (as a GEMM writing it would), the epilogue's program
// (EpiProg::apply: one input, or a gate and an up value from the two halves
// of a block pair), then the row-block quantization of the plan's quantize
// kernels: the block's amax over the |x| bits, scale_from_amax, and
// quantize_pair (quantize_value's codes), all from fp8_math.h, so that the
// codes equal those of the GEMM, elementwise and quantize steps run one
// after another.
//
// A generated translation unit defines, in namespace fp8k, before including
// this header:
//   struct Epi { kBlockN, kPairBlock (0: none), kGroupCols (0: whole rows),
//                kRoundTo (kBF16, kF16 or kF32), kFormat, kScaleFmt };
//   struct EpiProg { static float apply(float in0[, float in1]); };
// (codegen/Sm90Gemm.cpp, from codegen/Elementwise.h's emitEpilogueSource).
// The code uses warp shuffles and global stores only: EmulatedEpilogueTest
// runs the very source on the CPU (test/runtime/emulation).
//
// Accumulator layout (PTX ISA 9.7.15.5.1, wgmma D fragments): float i of a
// thread (lane l of warp w of the warpgroup) is row 16w + l/4 + 8 ((i >> 1)
// & 1), column 8 (i >> 2) + 2 (l % 4) + (i & 1). The four lanes of a quad
// hold one row's columns; a row block's amax is a max over the quad.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/fp8_functions.h"

namespace fp8k {

/// Where the quantized slab goes.
struct QuantOut {
  u8 *codes;    ///< [rows, cols] codes, row pitch `ld` (a multiple of 8)
  long long ld; ///< bytes between rows of codes
  void *scales; ///< [rows, ceil(cols / group)] f32, or UE8M0 bytes
  long long ld_scales;
  /// A copy of the scales in a GEMM's TMA layout (EwParams::scaleMirror):
  /// scale (r, c) at mirror[r * mirror_rows + c * mirror_cols]; or null.
  void *mirror;
  int mirror_rows, mirror_cols;
  int cols; ///< columns of the quantized result (a multiple of 8)
};

/// The columns of the quantized result a tile of kBlockN GEMM columns
/// makes, and its register chunks of eight of them.
template <class E> struct EpiShape {
  static constexpr int kCols = E::kPairBlock > 0 ? E::kBlockN / 2 : E::kBlockN;
  static constexpr int kChunks = kCols / 8;
  /// Register chunk of the GEMM value that is input `in` of quantized
  /// chunk `j` (in 1: the up half of its pair).
  static __device__ __forceinline__ constexpr int source(int j, int in) {
    if (E::kPairBlock == 0)
      return j;
    const int pb = E::kPairBlock > 0 ? E::kPairBlock / 8 : 1; // chunks a half
    return (j / pb) * 2 * pb + j % pb + in * pb;
  }
  /// Chunks per scale block (whole rows: the tile's).
  static constexpr int kGroupChunks =
      E::kGroupCols > 0 ? E::kGroupCols / 8 : kChunks;
  static_assert(E::kGroupCols % 8 == 0 && kCols % (kGroupChunks * 8) == 0,
                "a tile holds whole scale blocks of whole chunks");
  static_assert(E::kPairBlock % 8 == 0 &&
                    (E::kPairBlock == 0 ||
                     E::kBlockN % (2 * E::kPairBlock) == 0),
                "a tile holds whole block pairs");
};

__device__ __forceinline__ u32 quad_max(u32 m) {
  u32 o = __shfl_xor_sync(0xFFFFFFFFu, m, 1);
  m = o > m ? o : m;
  o = __shfl_xor_sync(0xFFFFFFFFu, m, 2);
  return o > m ? o : m;
}

/// Writes this thread's share of one 4-chunk (32-column) run of one row:
/// `a[j]` holds its two codes of chunk j (columns 2q, 2q + 1 of the chunk,
/// q = lane % 4). Two exchanges within the quad leave lane q with the eight
/// codes of chunk q, one 8-byte store: a warp writes 32 contiguous bytes of
/// each of 8 rows. Chunks past kChunks (a run that the tile only starts)
/// and columns past `cols` are not written; all lanes take part.
__device__ __forceinline__ void store_run(const QuantOut &o, int row,
                                          bool row_ok, int col0, int lane,
                                          const u32 a[4], int valid_chunks) {
  const int q = lane & 3;
  const int odd = q & 1, high = q >> 1;
  // Stage 1 (lanes q, q ^ 1): keep chunks of the lane's parity, send the
  // others. X0 holds chunk `odd` of lanes 2k, 2k + 1 (k = high), X1 chunk
  // odd + 2.
  const u32 send1 = (odd ? a[0] : a[1]) | ((odd ? a[2] : a[3]) << 16);
  const u32 got1 = __shfl_xor_sync(0xFFFFFFFFu, send1, 1);
  const u32 own0 = odd ? a[1] : a[0], own1 = odd ? a[3] : a[2];
  const u32 x0 =
      odd ? ((got1 & 0xFFFFu) | (own0 << 16)) : (own0 | (got1 << 16));
  const u32 x1 =
      odd ? ((got1 >> 16) | (own1 << 16)) : (own1 | (got1 & 0xFFFF0000u));
  // Stage 2 (lanes q, q ^ 2): keep the chunk numbered q, send the other.
  const u32 keep = high ? x1 : x0;
  const u32 got2 = __shfl_xor_sync(0xFFFFFFFFu, high ? x0 : x1, 2);
  const u32 lo = high ? got2 : keep, hi = high ? keep : got2;
  const int col = col0 + 8 * q;
  if (row_ok && q < valid_chunks && col < o.cols) {
    u32 *dst = reinterpret_cast<u32 *>(o.codes + (long long)row * o.ld + col);
#if defined(__CUDA_ARCH__)
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(dst), "r"(lo), "r"(hi)
                 : "memory");
#else
    dst[0] = lo;
    dst[1] = hi;
#endif
  }
}

/// Quantizes a warpgroup's slab: `res` holds this thread's kBlockN / 2
/// finished values (scales applied); the slab starts at row `row0` and,
/// in the quantized result, column `col0`; rows from `row_end` on are not
/// written. `lane`, `warp`: the thread's lane and warp in the warpgroup.
/// Every thread of the warpgroup calls it (the quads exchange values).
template <class E, class P>
__device__ __forceinline__ void
quantize_slab(const QuantOut &o, const float *res, int row0, int row_end,
              int col0, int lane, int warp) {
  using S = EpiShape<E>;
  constexpr int kChunks = S::kChunks;
  const int q = lane & 3;
  const int c0 = 2 * q;
  // The program over each value: h[4j + 2h + e] is row half h, column
  // 8j + c0 + e of the quantized slab.
  float h[4 * kChunks];
#pragma unroll
  for (int j = 0; j < kChunks; ++j)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float x = round_to(res[4 * S::source(j, 0) + k], E::kRoundTo);
      if constexpr (E::kPairBlock > 0)
        h[4 * j + k] =
            P::apply(x, round_to(res[4 * S::source(j, 1) + k], E::kRoundTo));
      else
        h[4 * j + k] = P::apply(x);
    }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + 16 * warp + lane / 4 + 8 * half;
    const bool row_ok = row < row_end;
    u32 pairs[kChunks]; // this thread's two codes of each chunk
#pragma unroll
    for (int g = 0; g < kChunks / S::kGroupChunks; ++g) {
      u32 m = 0;
#pragma unroll
      for (int j = g * S::kGroupChunks; j < (g + 1) * S::kGroupChunks; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const u32 b = abs_bits(h[4 * j + 2 * half + e]);
          if (col0 + 8 * j + c0 + e < o.cols && b > m)
            m = b;
        }
      m = quad_max(m);
      u8 code;
      const float s =
          scale_from_amax(u2f(m), E::kFormat, E::kScaleFmt, 0, &code);
      const int block =
          (col0 + 8 * g * S::kGroupChunks) / (S::kGroupChunks * 8);
      if (row_ok && q == 0 && col0 + 8 * g * S::kGroupChunks < o.cols) {
        const long long si = (long long)row * o.ld_scales + block;
        if (E::kScaleFmt == kScaleUE8M0)
          static_cast<u8 *>(o.scales)[si] = code;
        else
          static_cast<float *>(o.scales)[si] = s;
        if (o.mirror) {
          const long long mi =
              (long long)row * o.mirror_rows + (long long)block * o.mirror_cols;
          if (E::kScaleFmt == kScaleUE8M0)
            static_cast<u8 *>(o.mirror)[mi] = code;
          else
            static_cast<float *>(o.mirror)[mi] = s;
        }
      }
      // (Columns past o.cols are quantized too, never stored.)
      const ScaleDivisor d = scale_divisor(s);
#pragma unroll
      for (int j = g * S::kGroupChunks; j < (g + 1) * S::kGroupChunks; ++j)
        pairs[j] = quantize_pair(h[4 * j + 2 * half], h[4 * j + 2 * half + 1],
                                 d, E::kFormat);
    }
#pragma unroll
    for (int r = 0; r < (kChunks + 3) / 4; ++r) {
      u32 a[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        a[j] = 4 * r + j < kChunks ? pairs[4 * r + j] : 0u;
      store_run(o, row, row_ok, col0 + 32 * r, lane, a, kChunks - 4 * r);
    }
  }
}

} // namespace fp8k
