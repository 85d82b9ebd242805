//===- sm90_epilogue.cuh - The epilogue of the sm_90a GEMM ----*- CUDA -*-===//
//
// What sm90_gemm.cuh does with a finished tile (or the reduced split-K
// tile): the scales that do not vary along K, accumulate-into-C, the
// conversion to the output type, and the store: staged through a swizzled
// shared-memory slab per warpgroup and written by TMA (which clips rows >= M
// and columns >= N), or with predicated stores when D's row pitch is not
// 16-byte aligned. With the TMA store, C comes by TMA into the same slab
// (one 16-byte aligned tile load instead of a load per value), where D
// then overwrites it. A grouped GEMM's tile that reaches past its group's rows
// copies its staged slab with predicated 16-byte stores instead of TMA: the
// rows past the group belong to the next group's tiles.
//
// A GEMM with a quantizing epilogue (Cfg::kEpilogue) hands the scaled tile
// to gemm_quantize.cuh instead, which writes FP8 codes and scales.
//
// With Cfg::kAmaxOut each warp also joins the largest magnitude of its part
// of D into GemmParams::amax (join_tile_amax).
//
// Needs the generated Cfg (kN, kAcc, kSaMode, kSbMode, kOutF32, kAccumulate,
// kAmaxOut, kTmaStore, kEpiCols, kOutChunkCols, kBlockN, kMathWG, kEpilogue
// and, with it, Epi and EpiProg ...) and the kernel's shared-memory Layout
// (kSmemD, kChunkPitch, kEpiRounds, kEpiBuffers, kOutBytes, kCTma, kSmemCBars)
// as template arguments.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/gemm_quantize.cuh"
#include "fp8/sm90_common.cuh"
#include "fp8/sm90_schedule.cuh"

namespace fp8k {

/// Where a warpgroup's 64 x kEpiCols staging round keeps a value: chunks of
/// kOutChunkCols columns, 64 rows of kChunkPitch bytes each, 16-byte units
/// swizzled within 128-byte row groups (as the TMA store reads them).
template <class C, class L> struct Staging {
  static constexpr int kChunks = C::kEpiCols / C::kOutChunkCols;
  static constexpr int kChunkBytes = 64 * L::kChunkPitch;
  static constexpr int kSlabBytes = kChunks * kChunkBytes;
  static constexpr u32 kSwzMask = L::kChunkPitch == 128  ? 7
                                  : L::kChunkPitch == 64 ? 3
                                  : L::kChunkPitch == 32 ? 1
                                                         : 0;
  /// Warpgroup `wg`'s staging buffer `buf`, and the barrier its C loads
  /// complete on.
  static __device__ __forceinline__ u32 slab(u32 base, int buf, int wg) {
    return base + L::kSmemD + (buf * C::kMathWG + wg) * kSlabBytes;
  }
  static __device__ __forceinline__ u32 c_bar(u32 base, int buf, int wg) {
    return base + L::kSmemCBars + (wg * L::kEpiBuffers + buf) * 8;
  }
  /// The byte at (row, column) of the round, column in [0, kEpiCols).
  static __device__ __forceinline__ u32 at(u32 slab, int row, int col) {
    u32 off = row * L::kChunkPitch + (col % C::kOutChunkCols) * L::kOutBytes;
    off ^= ((off >> 7) & kSwzMask) << 4;
    return slab + (col / C::kOutChunkCols) * kChunkBytes + off;
  }
  /// The address this lane gives stmatrix/ldmatrix .x4 for the accumulator
  /// registers 4g .. 4g + 7 (8-column groups g and g + 1, g even, of the
  /// round starting at column `col0`): lane 8k + i addresses row i of
  /// matrix k (row half k & 1 of the warp's 16 rows, group g + (k >> 1)).
  static __device__ __forceinline__ u32 matrix(u32 slab, int warp, int lane,
                                               int g, int col0) {
    const int k = lane >> 3;
    return at(slab, warp * 16 + (k & 1) * 8 + (lane & 7),
              8 * (g + (k >> 1)) - col0);
  }
};

/// Calls f(i, addr) for each of this thread's accumulator pairs (i, i + 1)
/// whose 8-column group falls in staging round `round` (compile-time
/// tests), addr the pair's place in the round's buffer `slab`.
template <class C, class L, class F>
__device__ __forceinline__ void for_round_pairs(u32 slab, int round, int warp,
                                                int lane, F f) {
  const int r0 = warp * 16 + lane / 4;
  const int c0 = 2 * (lane & 3);
#pragma unroll
  for (int i = 0; i < C::kAcc; i += 2) {
    if ((8 * (i >> 2)) / C::kEpiCols != round)
      continue;
    f(i, Staging<C, L>::at(slab, r0 + 8 * ((i >> 1) & 1),
                           8 * (i >> 2) - round * C::kEpiCols + c0));
  }
}

/// Calls f(g, addr) for each pair of 8-column groups (g, g + 1), g even,
/// of staging round `round`, addr this lane's stmatrix/ldmatrix .x4
/// address for them (Staging::matrix).
template <class C, class L, class F>
__device__ __forceinline__ void for_round_groups(u32 slab, int round, int warp,
                                                 int lane, F f) {
#pragma unroll
  for (int g = 0; g < C::kAcc / 4; g += 2) {
    if ((8 * g) / C::kEpiCols != round)
      continue;
    f(g, Staging<C, L>::matrix(slab, warp, lane, g, round * C::kEpiCols));
  }
}

/// Copies one warpgroup's staged chunk rows [0, 64) of `kChunks` chunks
/// (64 rows of kChunkPitch bytes each, swizzled as staged) to D at (row0,
/// col0) with 16-byte stores, rows from `row_end` on and columns from N on
/// left alone. D's row pitch is a multiple of 16 bytes (the TMA store
/// path), and N of 16 / element bytes.
template <class C, class L, int kChunks>
__device__ __forceinline__ void copy_slab(const GemmParams &p, u32 slab,
                                          int row0, int col0, int row_end,
                                          int tid_in_wg) {
  constexpr int kUnits = L::kChunkPitch / 16; // 16-byte units per chunk row
  constexpr int kPerChunk = 64 * kUnits;
  constexpr int kColsPerUnit = 16 / L::kOutBytes;
  unsigned char *d = (unsigned char *)p.d;
#pragma unroll 4
  for (int i = tid_in_wg; i < kChunks * kPerChunk; i += 128) {
    const int q = i / kPerChunk;
    const int r = (i % kPerChunk) / kUnits;
    const int un = i % kUnits;
    const int c = q * C::kOutChunkCols + un * kColsPerUnit;
    const int row = row0 + r;
    const int col = col0 + c;
    if (row >= row_end || col >= C::kN)
      continue;
    u32 v0, v1, v2, v3;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                 : "r"(Staging<C, L>::at(slab, r, c)));
    unsigned char *dst = d + ((i64)row * p.ldd + col) * L::kOutBytes;
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(v0),
                 "r"(v1), "r"(v2), "r"(v3)
                 : "memory");
  }
}

/// Adds C, staged by TMA in `slab` the way round `round` stages D, to this
/// thread's values of that round (its accumulator registers whose 8-column
/// group falls in the round): by ldmatrix where D is staged by stmatrix
/// (the same addresses), else from each value pair's own staging address.
/// A thread reads only its warp's 16 rows.
template <class C, class L, bool kStmatrix>
__device__ __forceinline__ void add_staged_c(float *res, u32 slab, int round,
                                             int warp, int lane) {
  if constexpr (kStmatrix) {
    for_round_groups<C, L>(slab, round, warp, lane, [&](int g, u32 addr) {
      u32 v[4];
      ldmatrix_x4(addr, v);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        res[4 * g + 2 * j] += bf16_to_f32((unsigned short)(v[j] & 0xFFFF));
        res[4 * g + 2 * j + 1] += bf16_to_f32((unsigned short)(v[j] >> 16));
      }
    });
  } else {
    for_round_pairs<C, L>(slab, round, warp, lane, [&](int i, u32 addr) {
      if (C::kOutF32) {
        float a, b;
        ld_shared_v2_f32(addr, a, b);
        res[i] += a;
        res[i + 1] += b;
      } else {
        const u32 v = ld_shared_u32(addr);
        res[i] += bf16_to_f32((unsigned short)(v & 0xFFFF));
        res[i + 1] += bf16_to_f32((unsigned short)(v >> 16));
      }
    });
  }
}

/// Issues the TMA load of C's part of staging round `round` of the tile `t`
/// into staging buffer `buf` of the warpgroup (store_tile's layout),
/// completing on that buffer's C barrier.
template <class C, class L>
__device__ __forceinline__ void load_staged_c(const TmaDesc &tmap_c, u32 base,
                                              int warp_group, const TileSpan &t,
                                              int round, int buf) {
  using S = Staging<C, L>;
  const u32 slab = S::slab(base, buf, warp_group);
  const u32 bar = S::c_bar(base, buf, warp_group);
  mbar_arrive_expect_tx(bar, S::kSlabBytes);
#pragma unroll
  for (int q = 0; q < S::kChunks; ++q)
    tma_load_2d(slab + q * S::kChunkBytes, &tmap_c, bar,
                t.n0 + round * C::kEpiCols + q * C::kOutChunkCols,
                t.m0 + warp_group * 64 + t.d_shift);
}

/// Issues C's loads for the tile `t`'s staging rounds that have a buffer of
/// their own, once the warpgroup's earlier stores have read the buffers
/// (one thread of the warpgroup; `epi_round` as store_tile takes it).
template <class C, class L>
__device__ __forceinline__ void load_c_ahead(const TmaDesc &tmap_c, u32 base,
                                             int warp_group, const TileSpan &t,
                                             int epi_round) {
  tma_store_wait_read<0>();
#pragma unroll
  for (int r = 0; r < L::kEpiRounds && r < L::kEpiBuffers; ++r)
    load_staged_c<C, L>(tmap_c, base, warp_group, t, r,
                        L::kEpiBuffers > 1 ? ((epi_round + r) & 1) : 0);
}

/// Joins the largest magnitude of D's values this warp holds into
/// *p.amax (Cfg::kAmaxOut): `res` as D stores it (after C and the scales;
/// rounded to bf16 unless D is f32), rows from `row_end` on and columns from
/// N on left out (their accumulators may hold what an earlier tile's stage
/// left). The thread keeps one maximum for each of its two rows, by
/// max.NaN (a NaN in D makes the amax NaN), and tests columns only in a
/// tile that reaches past N (none when N is a multiple of the width). Rounding
/// to nearest keeps the order of magnitudes, so the warp rounds its largest
/// once; the bits of a magnitude order as its value (NaN above infinity), so an
/// unsigned reduction across the warp and one atomic max from its lane 0 (no
/// return: the warp does not wait on it) join the magnitudes.
template <class C>
__device__ __forceinline__ void
join_tile_amax(const GemmParams &p, const float *res, int row_base, int n0,
               int c0, int row_end, int lane) {
  float m[2] = {0.0f, 0.0f};
  auto join = [&](int i) {
    asm("max.NaN.f32 %0, %0, %1;" : "+f"(m[(i >> 1) & 1]) : "f"(fabsf(res[i])));
  };
  // (n0 is a multiple of the tile's width)
  if (C::kN % C::kBlockN == 0 || n0 + C::kBlockN <= C::kN) {
#pragma unroll
    for (int i = 0; i < C::kAcc; ++i)
      join(i);
  } else {
#pragma unroll
    for (int i = 0; i < C::kAcc; ++i)
      if (n0 + 8 * (i >> 2) + c0 + (i & 1) < C::kN)
        join(i);
  }
  u32 bits = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const u32 b = __float_as_uint(m[h]);
    if (row_base + 8 * h < row_end && b > bits)
      bits = b;
  }
  asm volatile("redux.sync.max.u32 %0, %0, 0xffffffff;" : "+r"(bits));
  if (!C::kOutF32)
    bits = (pack_bf16x2(__uint_as_float(bits), 0.0f) & 0xFFFFu) << 16;
  if (lane == 0 && bits != 0)
    asm volatile("red.relaxed.gpu.global.max.u32 [%0], %1;" ::"l"(p.amax),
                 "r"(bits)
                 : "memory");
}

/// Applies the epilogue to this thread's `res` (C::kAcc floats of its
/// warpgroup's 64 x BLOCK_N slab, mma accumulator layout) of the tile `t`
/// and stores it. `epi_round` counts the staging rounds of the kernel so
/// far (the parity of the staging buffer). `c_ahead`: C's first loads were
/// issued before the tile's main loop (load_c_ahead).
template <class C, class L, class P>
__device__ __forceinline__ void
store_tile(const P &p, const TmaDesc &tmap_d, const TmaDesc &tmap_c, float *res,
           const TileSpan &t, u32 base, int warp_group, int tid_in_wg,
           int &epi_round, bool c_ahead) {
  constexpr int kAcc = C::kAcc;
  const int m0 = t.m0, n0 = t.n0;
  const int warp = tid_in_wg / 32;
  const int lane = tid_in_wg % 32;
  // Accumulator fragment coordinates (see gemm_body).
  const int r0 = warp * 16 + lane / 4;
  const int c0 = 2 * (lane & 3);
  const int row_base = m0 + warp_group * 64 + r0;
  // The staging geometry (kTmaStore): each round stages kEpiCols columns of
  // the warpgroup's 64 rows as kChunks swizzled chunks of kOutChunkCols.
  using S = Staging<C, L>;
  constexpr int kRounds = L::kEpiRounds;
  constexpr int kChunks = S::kChunks;
  const int slab_row = m0 + warp_group * 64 + t.d_shift;
  // C by TMA (L::kCTma): round r's C chunks land in the staging buffer that
  // round r stages D in, where the lanes read their values and D overwrites
  // them. A round's load is issued once that buffer's previous store has
  // read it: for the rounds with a buffer of their own before the tile's
  // main loop where the tile is not split (c_ahead), else here, before the
  // scales are read; a later round's at its start. The TMA fills C's rows
  // and columns past its end with zeros.
  if constexpr (L::kCTma) {
    if (tid_in_wg == 0 && !c_ahead)
      load_c_ahead<C, L>(tmap_c, base, warp_group, t, epi_round);
  }
  float ea[2] = {1.0f, 1.0f};
  if (C::kSaMode != kScaleK) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row_base + 8 * h;
      if (C::kSaMode == kScaleTensor)
        ea[h] = load_scale<C::kSaE8>(p.sa, t.sa_off);
      else if (row < t.row_end)
        ea[h] = load_scale<C::kSaE8>(
            p.sa, t.sa_off + scale_index<C::kSaOuterBlock, 0>(
                                 row - t.srow0, 0, p.sa_ld_outer, 0));
    }
  }
  float eb_tensor = 1.0f;
  if (C::kSbMode == kScaleTensor)
    eb_tensor = load_scale<C::kSbE8>(p.sb, t.sb_off);

#pragma unroll
  for (int i = 0; i < kAcc; ++i) {
    const int col = n0 + 8 * (i >> 2) + c0 + (i & 1);
    float v = res[i] * ea[(i >> 1) & 1];
    if (C::kSbMode == kScaleTensor)
      v *= eb_tensor;
    else if (C::kSbMode == kScaleOuter)
      v *= col < C::kN ? load_scale<C::kSbE8>(
                             p.sb, t.sb_off + scale_index<C::kSbOuterBlock, 0>(
                                                  col, 0, p.sb_ld_outer, 0))
                       : 0.0f;
    if (C::kAccumulate && !L::kCTma) {
      const int row = row_base + 8 * ((i >> 1) & 1);
      const i64 drow = row + t.d_shift;
      if (row < t.row_end && col < C::kN) {
        if (C::kOutF32)
          v += ((const float *)p.c)[drow * p.ldc + col];
        else
          v += bf16_to_f32(((const unsigned short *)p.c)[drow * p.ldc + col]);
      }
    }
    res[i] = v;
  }

  if constexpr (C::kEpilogue) {
    static_assert(!C::kAmaxOut, "a quantizing epilogue writes no amax");
    using E = typename C::Epi;
    const QuantOut o{(u8 *)p.d,       p.ldd,      p.q_scales,
                     p.q_ld_scales,   p.q_mirror, p.q_mirror_rows,
                     p.q_mirror_cols, p.q_cols};
    quantize_slab<E, typename C::EpiProg>(
        o, res, m0 + warp_group * 64, t.row_end,
        E::kPairBlock > 0 ? n0 / 2 : n0, lane, warp);
    return;
  }

  if (C::kTmaStore) {
    // Each warpgroup stages its 64 x BLOCK_N slab kEpiCols columns at a
    // time, as 128/64/32-byte wide swizzled column chunks, and stores them
    // with TMA (which clips the rows >= M and the columns >= N).
    // bf16 staging by stmatrix (a quarter of the shared stores, and one
    // address per pair of 8-column groups) where every round and chunk
    // holds whole pairs of groups, on tiles up to 128 columns: at 192,
    // with a split tail and accumulate-into-C, its four packed registers
    // made ptxas spill 8 bytes (the compile matrix).
    constexpr bool kStmatrix = !C::kOutF32 && C::kBlockN <= 128 &&
                               C::kEpiCols % 16 == 0 &&
                               C::kOutChunkCols % 16 == 0;
#pragma unroll
    for (int round = 0; round < kRounds; ++round, ++epi_round) {
      // Two staging buffers alternate when there are several rounds: the
      // store issued two rounds ago (same buffer) must have finished
      // reading it; one more may still be in flight.
      const int buf = L::kEpiBuffers > 1 ? (epi_round & 1) : 0;
      const u32 slab = S::slab(base, buf, warp_group);
      if (tid_in_wg == 0 && (!L::kCTma || round >= L::kEpiBuffers)) {
        if (L::kEpiBuffers > 1)
          tma_store_wait_read<1>();
        else
          tma_store_wait_read<0>();
        if (L::kCTma)
          load_staged_c<C, L>(tmap_c, base, warp_group, t, round, buf);
      }
      if constexpr (L::kCTma) {
        // Every load of this buffer completes one phase of its barrier.
        mbar_wait(S::c_bar(base, buf, warp_group),
                  (epi_round / L::kEpiBuffers) & 1);
        add_staged_c<C, L, kStmatrix>(res, slab, round, warp, lane);
        // A warp stages D over its own 16 rows only, which it has read.
        __syncwarp();
      } else {
        named_barrier(2 + warp_group, 128);
      }
      if constexpr (kStmatrix) {
        // bf16 in pairs of 8-column groups: one stmatrix.x4 writes rows
        // 0-15 of the warp's 16 for two groups (Staging::matrix).
        for_round_groups<C, L>(slab, round, warp, lane, [&](int g, u32 addr) {
          stmatrix_x4(addr, pack_bf16x2(res[4 * g], res[4 * g + 1]),
                      pack_bf16x2(res[4 * g + 2], res[4 * g + 3]),
                      pack_bf16x2(res[4 * g + 4], res[4 * g + 5]),
                      pack_bf16x2(res[4 * g + 6], res[4 * g + 7]));
        });
      } else {
        for_round_pairs<C, L>(slab, round, warp, lane, [&](int i, u32 addr) {
          if (C::kOutF32)
            st_shared_v2_f32(addr, res[i], res[i + 1]);
          else
            st_shared_u32(addr, pack_bf16x2(res[i], res[i + 1]));
        });
      }
      fence_proxy_async_smem();
      named_barrier(2 + warp_group, 128);
      const int row_end = t.row_end + t.d_shift;
      if (C::kGrouped != kDenseGemm && slab_row + 64 > row_end) {
        // Past the group's rows: the next group's tiles store those.
        copy_slab<C, L, kChunks>(p, slab, slab_row, n0 + round * C::kEpiCols,
                                 row_end, tid_in_wg);
      } else if (tid_in_wg == 0) {
#pragma unroll
        for (int q = 0; q < kChunks; ++q)
          tma_store_2d(&tmap_d, slab + q * S::kChunkBytes,
                       n0 + round * C::kEpiCols + q * C::kOutChunkCols,
                       slab_row);
        tma_store_commit();
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kAcc; i += 2) {
      const int col = n0 + 8 * (i >> 2) + c0;
      const int arow = row_base + 8 * ((i >> 1) & 1);
      if (arow >= t.row_end || col >= C::kN)
        continue;
      const i64 row = arow + t.d_shift;
      const bool pair = col + 1 < C::kN;
      if (C::kOutF32) {
        float *d = (float *)p.d + (i64)row * p.ldd + col;
        d[0] = res[i];
        if (pair)
          d[1] = res[i + 1];
      } else {
        unsigned short *d = (unsigned short *)p.d + (i64)row * p.ldd + col;
        const u32 v = pack_bf16x2(res[i], res[i + 1]);
        d[0] = (unsigned short)(v & 0xFFFF);
        if (pair)
          d[1] = (unsigned short)(v >> 16);
      }
    }
  }
  // res holds D's values now on either path (C by TMA is added round by
  // round above).
  if constexpr (C::kAmaxOut)
    join_tile_amax<C>(p, res, row_base, n0, c0, t.row_end, lane);
}

} // namespace fp8k
