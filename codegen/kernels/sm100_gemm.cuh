//===- sm100_gemm.cuh - Block-scaled FP8 GEMM (sm_100a) --------*- CUDA -*-===//
//
// D[M, N] = epilogue( sum_k A[M, K] * B[N, K]^T )   (both operands K-major)
//
// Roles (6 or 10 warps, one CTA per SM, persistent):
//   warp 0, one lane   producer: TMA loads of the A and B tiles (128-byte
//                      swizzle) and, for block-scaled recipes, of the UE8M0
//                      scale atoms (sm100_scale_layout.cuh) into a
//                      kStages-deep mbarrier pipeline;
//   warp 1             allocates tensor memory (all lanes) and, from one lane,
//                      issues the MMAs: per k-block it copies the stage's
//                      scale atoms into tensor memory (tcgen05.cp), issues
//                      four tcgen05.mma K=32 steps into the tile's accumulator
//                      and commits them to the stage's "empty" mbarrier, which
//                      frees the shared-memory stage when they complete; after
//                      a tile's last k-block it commits to the accumulator's
//                      "full" mbarrier;
//   warps 2..          4 x kEpiWG epilogue warps: wait for an accumulator,
//                      tcgen05.ld it (warp w reads lanes 32 (w % 4) ..),
//                      release it to the MMA warp, apply the epilogue scales
//                      and C, convert, and store through a swizzled staging
//                      tile with TMA (or with predicated stores when D's row
//                      pitch is not 16-byte aligned).
//
// Accumulators live in tensor memory (FP32, 128 lanes x BLOCK_N columns per
// stage, kAccStages of them so that a tile's MMAs overlap the previous tile's
// epilogue); the block-scaled MMA multiplies each K=32 step's products by the
// UE8M0 scales of its row and column and adds them to the FP32 accumulator,
// so there is no software promotion.
//
// cta_group::2 (kCtaGroup == 2): a cluster of two CTAs computes a 256-row
// tile with one M=256 MMA issued by the even CTA (the leader). Each CTA loads
// its 128 rows of A and half of the B tile; both CTAs' loads complete on the
// leader's "full" barrier; the leader's commits arrive on both CTAs'
// barriers (multicast); each CTA's epilogue reads its own tensor memory.
// cta_group::1 with a 2x1 cluster: two independent MMAs share B through TMA
// multicast, and each MMA's commit frees the stage in both CTAs.
//
// NONE OF THIS HAS RUN ON A GPU: there is no Blackwell GPU on our machines.
// It compiles with NVRTC for sm_100a (test/runtime/Sm100CompileTest.cpp);
// docs/blackwell.md says what is verified and what is not.
//
// The generated translation unit defines, before including this file:
//   struct Cfg { static constexpr ... };          (codegen/Sm100Gemm.cpp)
//   tmem_alloc, tmem_relinquish, tmem_dealloc     (tcgen05 alloc, cta_group)
//   sf_copy(taddr, desc)                          (tcgen05.cp 32x128b)
//   mma_k32(d, adesc, bdesc, idesc, sfa, sfb, acc)(tcgen05.mma, kind)
//   commit_stage(bar), commit_accum(bar)          (tcgen05.commit)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/sm100_common.cuh"

namespace fp8k {

/// Launch arguments that are not baked into the kernel. Block scales travel
/// through the TMA descriptors; these are the epilogue's.
struct Sm100Params {
  int m;          ///< rows of A and D
  const void *sa; ///< A's scales constant along K (f32 or UE8M0)
  i64 sa_ld;      ///< elements between consecutive row blocks of sa
  const void *sb; ///< B's scales constant along K
  i64 sb_ld;
  const void *c; ///< C (accumulate), same type as D; may alias D
  i64 ldc;
  void *d; ///< D, for the predicated-store epilogue
  i64 ldd;
};
static_assert(sizeof(Sm100Params) == 72, "Sm100Params layout changed");

template <class C> struct Sm100Layout {
  static constexpr int kEpiWarps = 4 * C::kEpiWG;
  static constexpr int kThreads = (2 + kEpiWarps) * 32;
  static constexpr int kTileABytes = 128 * 128;
  /// B rows in this CTA's shared memory: half the tile in a CTA pair.
  static constexpr int kBRows = C::kCtaGroup == 2 ? C::kBlockN / 2 : C::kBlockN;
  /// B rows this CTA's producer loads (the other half comes from the peer's
  /// multicast in a cta_group::1 cluster).
  static constexpr int kBLoadRows =
      C::kClusterM == 2 ? C::kBlockN / 2 : C::kBlockN;
  static constexpr int kTileBBytes = kBRows * 128;
  static constexpr int kSfaBytes = C::kBlockScaled ? sf::kAtomBytes : 0;
  static constexpr int kSfbBytes = C::kSfbAtoms * sf::kAtomBytes;
  static constexpr int kSmemA = 0;
  static constexpr int kSmemB = kSmemA + C::kStages * kTileABytes;
  static constexpr int kSmemSfa = kSmemB + C::kStages * kTileBBytes;
  static constexpr int kSmemSfb = kSmemSfa + C::kStages * kSfaBytes;
  static constexpr int kOutBytes = C::kOutF32 ? 4 : 2;
  /// One staging chunk: 32 rows x 32 columns (one tcgen05.ld .x32).
  static constexpr int kChunkPitch = 32 * kOutBytes;
  static constexpr int kChunkBytes = 32 * kChunkPitch;
  static constexpr int kSmemD =
      (kSmemSfb + C::kStages * kSfbBytes + 1023) / 1024 * 1024;
  static constexpr int kDBytes =
      C::kTmaStore ? kEpiWarps * C::kEpiBuffers * kChunkBytes : 0;
  static constexpr int kSmemBars = kSmemD + kDBytes;
  static constexpr int kSmemSlot =
      kSmemBars + (2 * C::kStages + 2 * C::kAccStages) * 8;
  static constexpr int kSmemTotal = kSmemSlot + 16;
  /// Bytes the loads of one stage bring into one CTA.
  static constexpr int kStageBytes =
      kTileABytes + kTileBBytes + kSfaBytes + kSfbBytes;
  /// Tensor-memory columns: accumulators, then two scale slots (so that a
  /// k-block's tcgen05.cp never writes columns the previous k-block's MMAs
  /// may still read).
  static constexpr int kSfSlotCols = C::kBlockScaled ? 4 + 4 * C::kSfbAtoms : 0;
  static constexpr int kSfBase = C::kAccStages * C::kBlockN;
  static_assert(kSfBase + 2 * kSfSlotCols <= C::kTmemCols,
                "tensor-memory allocation too small");
  static_assert(C::kBlockN % (32 * C::kEpiWG) == 0,
                "each epilogue warp reads whole 32-column chunks");
};

/// The persistent schedule. A work unit is one output tile per CTA of the
/// cluster: with kClusterM == 2 the pair takes m tiles 2g and 2g + 1 of one
/// n tile (one 256-row MMA for cta_group::2, or two 128-row MMAs sharing B).
/// A trailing odd m tile gives the second CTA a phantom tile: its loads are
/// out of bounds (zeros) and its stores are clipped.
template <class C> struct Sm100Schedule {
  static constexpr int kNTiles = (C::kN + C::kBlockN - 1) / C::kBlockN;
  int m_groups;
  int units;
  int rank;

  __device__ __forceinline__ Sm100Schedule(int m) {
    const int m_tiles = (m + 127) / 128;
    m_groups = (m_tiles + C::kClusterM - 1) / C::kClusterM;
    units = m_groups * kNTiles;
    rank = C::kClusterM > 1 ? (int)cluster_ctarank() : 0;
  }
  __device__ __forceinline__ int first() const {
    return blockIdx.x / C::kClusterM;
  }
  __device__ __forceinline__ int stride() const {
    return gridDim.x / C::kClusterM;
  }
  __device__ __forceinline__ void decode(int u, int &mb, int &nb) const {
    int gm;
    tile_coords<C>(u, m_groups, kNTiles, gm, nb);
    mb = gm * C::kClusterM + rank;
  }
};

template <bool kE8>
__device__ __forceinline__ float epi_scale(const void *base, i64 idx) {
  if (kE8)
    return ue8m0_to_f32(__ldg((const unsigned char *)base + idx));
  return __ldg((const float *)base + idx);
}

/// The scale of row (A) / column (B) `i` of a scale constant along K.
template <int kMode, int kOuterBlock, bool kE8>
__device__ __forceinline__ float outer_scale(const void *base, i64 ld, int i,
                                             int extent) {
  if (kMode == kScaleTensor)
    return epi_scale<kE8>(base, 0);
  if (i >= extent)
    return 0.0f;
  return epi_scale<kE8>(base, (i64)(i / kOuterBlock) * ld);
}

template <class C>
__device__ __forceinline__ void
sm100_gemm_body(const TmaDesc &tmap_a, const TmaDesc &tmap_b,
                const TmaDesc &tmap_sfa, const TmaDesc &tmap_sfb,
                const TmaDesc &tmap_d, const Sm100Params &p) {
  using L = Sm100Layout<C>;
  constexpr bool kPair = C::kCtaGroup == 2;
  constexpr bool kCluster = C::kClusterM > 1;
  constexpr int kKBlocks = (C::kK + 127) / 128;
  extern __shared__ unsigned char smem_raw[];
  // Swizzled tiles need 1024-byte alignment; the launcher adds the slack.
  const u32 raw = smem_addr(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  unsigned char *smem = smem_raw + (base - raw);

  const u32 bar_full = base + L::kSmemBars;
  const u32 bar_empty = bar_full + C::kStages * 8;
  const u32 bar_tfull = bar_empty + C::kStages * 8;
  const u32 bar_tempty = bar_tfull + C::kAccStages * 8;
  const u32 slot = base + L::kSmemSlot;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(bar_full + s * 8, 1);
      // Freed by the commit of every MMA that reads the stage: the two
      // independent MMAs of a cta_group::1 cluster (the stage holds both
      // CTAs' multicast), else the one (leader's) MMA.
      mbar_init(bar_empty + s * 8, kCluster && !kPair ? 2 : 1);
    }
    for (int a = 0; a < C::kAccStages; ++a) {
      mbar_init(bar_tfull + a * 8, 1);
      // Every epilogue warp of the CTA (of both CTAs of a pair) releases it.
      mbar_init(bar_tempty + a * 8, L::kEpiWarps * C::kCtaGroup);
    }
    mbar_fence_init();
    tma_prefetch_desc(&tmap_a);
    tma_prefetch_desc(&tmap_b);
    if (C::kBlockScaled) {
      tma_prefetch_desc(&tmap_sfa);
      tma_prefetch_desc(&tmap_sfb);
    }
    if (C::kTmaStore)
      tma_prefetch_desc(&tmap_d);
  }
  if (warp == 1) {
    // The whole warp allocates (with cta_group::2: one warp in each CTA of
    // the pair, collectively); the address lands in shared memory.
    tmem_alloc(slot);
    tmem_relinquish();
  }
  // The peer's barriers must be initialised before any multicast or remote
  // arrive reaches them; the allocation's address must be visible.
  tc_fence_before();
  if (kCluster)
    cluster_sync();
  else
    __syncthreads();
  tc_fence_after();
  const u32 tmem_base = *(volatile u32 *)(smem + L::kSmemSlot);

  const Sm100Schedule<C> sched(p.m);

  if (warp == 0) {
    //===------------------------------------------------------------------===//
    // Producer: TMA loads of A, B and the scale atoms.
    //===------------------------------------------------------------------===//
    if (lane == 0) {
      // In a pair every load completes on the leader's barrier (addressed
      // through the cluster window), which expects both CTAs' bytes.
      const u32 full0 = kPair ? cluster_addr(bar_full, 0) : bar_full;
      int it = 0;
      for (int u = sched.first(); u < sched.units; u += sched.stride()) {
        int mb, nb;
        sched.decode(u, mb, nb);
        const int n0 = nb * C::kBlockN;
        for (int kb = 0; kb < kKBlocks; ++kb, ++it) {
          const int s = it % C::kStages;
          const u32 ph = (it / C::kStages) & 1;
          mbar_wait(bar_empty + s * 8, ph ^ 1);
          const u32 full = full0 + s * 8;
          const u32 a_dst = base + L::kSmemA + s * L::kTileABytes;
          const u32 b_dst = base + L::kSmemB + s * L::kTileBBytes;
          const u32 sfa_dst = base + L::kSmemSfa + s * L::kSfaBytes;
          const u32 sfb_dst = base + L::kSmemSfb + s * L::kSfbBytes;
          // Scale atoms: lines of 16 bytes, atom_index * 32 lines in.
          const int sfa_line = (int)sf::atom_index(p.m, mb, kb) * 32;
          const int sfb_line = (int)sf::atom_index(C::kN, n0 / 128, kb) * 32;
          if (kPair) {
            if (sched.rank == 0)
              mbar_arrive_expect_tx(bar_full + s * 8, 2 * L::kStageBytes);
            tma_load_2d_pair(a_dst, &tmap_a, full, kb * 128, mb * 128);
            tma_load_2d_pair(b_dst, &tmap_b, full, kb * 128,
                             n0 + sched.rank * L::kBRows);
            if (C::kBlockScaled) {
              tma_load_2d_pair(sfa_dst, &tmap_sfa, full, 0, sfa_line);
              tma_load_2d_pair(sfb_dst, &tmap_sfb, full, 0, sfb_line);
            }
          } else {
            mbar_arrive_expect_tx(full, L::kStageBytes);
            tma_load_2d(a_dst, &tmap_a, full, kb * 128, mb * 128);
            if (kCluster)
              tma_load_2d_multicast(b_dst + sched.rank * L::kBLoadRows * 128,
                                    &tmap_b, full, kb * 128,
                                    n0 + sched.rank * L::kBLoadRows, 0x3);
            else
              tma_load_2d(b_dst, &tmap_b, full, kb * 128, n0);
            if (C::kBlockScaled) {
              tma_load_2d(sfa_dst, &tmap_sfa, full, 0, sfa_line);
              tma_load_2d(sfb_dst, &tmap_sfb, full, 0, sfb_line);
            }
          }
        }
      }
    }
  } else if (warp == 1) {
    //===------------------------------------------------------------------===//
    // MMA issuer: one thread (the leader's, in a pair).
    //===------------------------------------------------------------------===//
    if (lane == 0 && (!kPair || sched.rank == 0)) {
      int it = 0, t = 0;
      for (int u = sched.first(); u < sched.units; u += sched.stride(), ++t) {
        int mb, nb;
        sched.decode(u, mb, nb);
        const int acc = t % C::kAccStages;
        const u32 aph = (t / C::kAccStages) & 1;
        // The epilogue has read this accumulator's previous tile.
        mbar_wait(bar_tempty + acc * 8, aph ^ 1);
        tc_fence_after();
        const u32 d_tmem = tmem_base + acc * C::kBlockN;
        // The B tile's first column inside its first scale atom (the MMA
        // reads kBlockN / 32 consecutive scale columns from there).
        const u32 sfb_col = ((nb * C::kBlockN) % 128) / 32;
        for (int kb = 0; kb < kKBlocks; ++kb, ++it) {
          const int s = it % C::kStages;
          const u32 ph = (it / C::kStages) & 1;
          mbar_wait(bar_full + s * 8, ph);
          tc_fence_after();
          u32 sfa_t = 0, sfb_t = 0;
          if (C::kBlockScaled) {
            // NOTE: tcgen05.cp and tcgen05.mma issued by one thread execute
            // in issue order (PTX ISA, tcgen05 pipelined instructions): the
            // MMAs below see the copied scales without a wait.
            sfa_t = tmem_base + L::kSfBase + (it & 1) * L::kSfSlotCols;
            sfb_t = sfa_t + 4;
            const u32 sfa_src = base + L::kSmemSfa + s * L::kSfaBytes;
            const u32 sfb_src = base + L::kSmemSfb + s * L::kSfbBytes;
            sf_copy(sfa_t, sf_atom_desc(sfa_src));
#pragma unroll
            for (int j = 0; j < C::kSfbAtoms; ++j)
              sf_copy(sfb_t + 4 * j,
                      sf_atom_desc(sfb_src + j * sf::kAtomBytes));
          }
          const u64 da = umma_desc_sw128(base + L::kSmemA + s * L::kTileABytes);
          const u64 db = umma_desc_sw128(base + L::kSmemB + s * L::kTileBBytes);
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            // K block k of the atom: its scale byte is selected by the
            // instruction descriptor's scale-factor IDs (bits 29-30 for A,
            // 4-5 for B).
            const u32 idesc =
                C::kIdesc |
                (C::kBlockScaled ? ((u32)k << 29 | (u32)k << 4) : 0u);
            // Advancing K by 32 FP8 elements = 32 bytes = 2 descriptor units.
            mma_k32(d_tmem, da + 2 * k, db + 2 * k, idesc, sfa_t,
                    sfb_t + sfb_col, (kb | k) != 0 ? 1u : 0u);
          }
          // Frees the stage once these MMAs (and copies) have completed.
          commit_stage(bar_empty + s * 8);
        }
        // The accumulator is complete once every MMA above has.
        commit_accum(bar_tfull + acc * 8);
      }
    }
  } else {
    //===------------------------------------------------------------------===//
    // Epilogue warps.
    //===------------------------------------------------------------------===//
    constexpr int kCols = C::kBlockN / C::kEpiWG; // columns per warp
    constexpr int kChunks = kCols / 32;
    constexpr u32 kSwzMask = L::kChunkPitch == 128 ? 7 : 3;
    const int ew = warp - 2;
    const int quarter = warp % 4; // the tensor-memory lanes this warp reads
    const int half = ew / 4;      // which kCols columns of the tile
    const u32 tempty0 =
        kPair && sched.rank != 0 ? cluster_addr(bar_tempty, 0) : bar_tempty;
    const u32 stage_d = base + L::kSmemD + ew * C::kEpiBuffers * L::kChunkBytes;
    int t = 0, round = 0;
    for (int u = sched.first(); u < sched.units; u += sched.stride(), ++t) {
      int mb, nb;
      sched.decode(u, mb, nb);
      const int acc = t % C::kAccStages;
      const u32 aph = (t / C::kAccStages) & 1;
      const int row0 = mb * 128 + quarter * 32;
      const int row = row0 + lane;
      const int col0 = nb * C::kBlockN + half * kCols;
      float sa = 1.0f;
      if (!C::kBlockScaled)
        sa = outer_scale<C::kSaMode, C::kSaOuterBlock, C::kSaE8>(p.sa, p.sa_ld,
                                                                 row, p.m);
      mbar_wait(bar_tfull + acc * 8, aph);
      tc_fence_after();
#pragma unroll 1
      for (int c = 0; c < kChunks; ++c, ++round) {
        float v[32];
        tmem_ld_32x32b_x32(tmem_addr(tmem_base, quarter * 32,
                                     acc * C::kBlockN + half * kCols + c * 32),
                           v);
        tmem_wait_ld();
        if (c == kChunks - 1) {
          // Hand the accumulator back before converting the last chunk.
          tc_fence_before();
          __syncwarp();
          if (lane == 0) {
            if (kPair && sched.rank != 0)
              mbar_arrive_remote(tempty0 + acc * 8);
            else
              mbar_arrive(bar_tempty + acc * 8);
          }
        }
        const int cbase = col0 + c * 32;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
          const int col = cbase + i;
          // The oracle's epilogue (docs/numerics.md, "Reference GEMM"),
          // with explicit roundings: block-scaled D = acc (+ C); else
          // D = acc * (sA * sB), or fmaf(acc, sA * sB, C).
          const bool has_c = C::kAccumulate && row < p.m && col < C::kN;
          float c_val = 0.0f;
          if (has_c) {
            const i64 at = (i64)row * p.ldc + col;
            c_val = C::kOutF32 ? ((const float *)p.c)[at]
                               : bf16_to_f32(((const unsigned short *)p.c)[at]);
          }
          float x = v[i];
          if (!C::kBlockScaled) {
            const float s =
                sa * outer_scale<C::kSbMode, C::kSbOuterBlock, C::kSbE8>(
                         p.sb, p.sb_ld, col, C::kN);
            x = has_c ? fmaf(x, s, c_val) : x * s;
          } else if (has_c) {
            x = __fadd_rn(x, c_val);
          }
          v[i] = x;
        }
        if (C::kTmaStore) {
          // Stage the warp's 32 x 32 chunk with the TMA swizzle, then one
          // lane stores it (TMA clips rows >= M and columns >= N).
          const int buf = C::kEpiBuffers > 1 ? (round & 1) : 0;
          const u32 st = stage_d + buf * L::kChunkBytes;
          if (lane == 0) {
            if (C::kEpiBuffers > 1)
              tma_store_wait_read<1>();
            else
              tma_store_wait_read<0>();
          }
          __syncwarp();
#pragma unroll
          for (int j = 0; j < L::kChunkPitch / 16; ++j) {
            u32 off = lane * L::kChunkPitch + j * 16;
            off ^= ((off >> 7) & kSwzMask) << 4;
            if (C::kOutF32)
              st_shared_v4(st + off, __float_as_uint(v[4 * j]),
                           __float_as_uint(v[4 * j + 1]),
                           __float_as_uint(v[4 * j + 2]),
                           __float_as_uint(v[4 * j + 3]));
            else
              st_shared_v4(st + off, pack_bf16x2(v[8 * j], v[8 * j + 1]),
                           pack_bf16x2(v[8 * j + 2], v[8 * j + 3]),
                           pack_bf16x2(v[8 * j + 4], v[8 * j + 5]),
                           pack_bf16x2(v[8 * j + 6], v[8 * j + 7]));
          }
          fence_proxy_async_smem();
          __syncwarp();
          if (lane == 0) {
            tma_store_2d(&tmap_d, st, cbase, row0);
            tma_store_commit();
          }
        } else if (row < p.m) {
#pragma unroll
          for (int i = 0; i < 32; i += 2) {
            const int col = cbase + i;
            if (col >= C::kN)
              continue;
            const bool pair = col + 1 < C::kN;
            if (C::kOutF32) {
              float *d = (float *)p.d + (i64)row * p.ldd + col;
              d[0] = v[i];
              if (pair)
                d[1] = v[i + 1];
            } else {
              unsigned short *d =
                  (unsigned short *)p.d + (i64)row * p.ldd + col;
              const u32 w = pack_bf16x2(v[i], v[i + 1]);
              d[0] = (unsigned short)(w & 0xFFFF);
              if (pair)
                d[1] = (unsigned short)(w >> 16);
            }
          }
        }
      }
    }
    if (C::kTmaStore && lane == 0)
      tma_store_wait_all();
  }

  //===--------------------------------------------------------------------===//
  // Teardown: every role is done (the epilogue has read the last
  // accumulators, so every MMA has completed); free the tensor memory. In a
  // cluster every thread meets the final cluster_sync: the peer may still
  // multicast into this CTA or arrive on its barriers.
  //===--------------------------------------------------------------------===//
  __syncwarp();
  tc_fence_before();
  if (kCluster)
    cluster_sync();
  else
    __syncthreads();
  if (warp == 1) {
    tc_fence_after();
    tmem_dealloc(tmem_base);
  }
}

} // namespace fp8k
