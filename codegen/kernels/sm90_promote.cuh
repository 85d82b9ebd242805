//===- sm90_promote.cuh - A k-block's MMAs and their promotion -*- CUDA -*-===//
//
// What a consumer warpgroup of sm90_gemm.cuh does with one pipeline stage:
// the K-varying scales of the k-block (KScales: by TMA with the stage, or
// loaded by the consumers), the wgmmas of its N chunks, and the promotion
// of the tensor-core partial sums into the FP32 accumulator with those
// scales applied (DeepSeek-V3), every kPromoSteps k32 steps.
//
// Needs the generated Cfg (kN, kAcc, kAccChunk, kMmaN, kNChunks,
// kPromoSteps, kSaMode, kSbMode, kSaOuterBlock, kSbOuterBlock, kSaKBlock,
// kSbKBlock, kSaE8, kSbE8) and its mma_k32.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/sm90_common.cuh"
#include "fp8/sm90_params.h"
#include "fp8/sm90_schedule.cuh"

namespace fp8k {

/// Which K-varying scales the consumers apply per k-block, and how many B
/// block scales a tile spans along N (at most kNb).
template <class C> struct KScaleShape {
  // A tile starts gcd(BLOCK_N, block)-aligned inside its first block.
  __host__ __device__ static constexpr int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }
  static constexpr int kRo = C::kSbOuterBlock; // 0: one block for all of N
  static constexpr bool kA = C::kSaMode == kScaleK;
  static constexpr bool kB = C::kSbMode == kScaleK && kRo != 1;
  /// The tile never straddles a B block boundary at a run-time offset:
  /// the block index of each 8-column group is known at compile time.
  static constexpr bool kFixed =
      kRo == 0 || kRo % C::kBlockN == 0 || C::kBlockN % kRo == 0;
  static constexpr int kNb =
      !kB                     ? 1
      : kRo == 0              ? 1
      : kRo % C::kBlockN == 0 ? 1
      : C::kBlockN % kRo == 0
          ? C::kBlockN / kRo
          : (2 * kRo - gcd(C::kBlockN, kRo) - 1 + C::kBlockN) / kRo;
};

/// The K-varying scales of one k-block that one consumer thread applies:
/// the A scales of its two accumulator rows and the B block scales of the
/// tile (at most kNb blocks along N). They come with the pipeline stage by
/// TMA when their layout allows (Cfg::kScaleTma); otherwise the
/// consumers load them from global memory one k-block ahead of their use.
/// Per-column B scales are the exception (a column's scale per register
/// pair): the producer's loader warp stages those in shared memory.
template <class C> struct KScales : KScaleShape<C> {
  using Sh = KScaleShape<C>;
  using Sh::kA, Sh::kB, Sh::kNb, Sh::kRo;
  float a[2];
  float b[kNb];

  /// Where one tile's scales start for this thread: element offsets of its
  /// rows' and the tile's B blocks' scales at k = 0, or -1 past the tile's
  /// group (those read as 0; their results are clipped). `row` is the
  /// thread's first row of A.
  struct Bases {
    i64 a[2];
    i64 b[kNb];
  };
  __device__ __forceinline__ static Bases bases(const GemmParams &p,
                                                const TileSpan &t, int row0) {
    Bases o;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      o.a[h] = kA && row < t.row_end
                   ? t.sa_off + scale_index<C::kSaOuterBlock, 0>(
                                    row - t.srow0, 0, p.sa_ld_outer, 0)
                   : -1;
    }
    constexpr int kBlocksN = kRo == 0 ? 1 : (C::kN + kRo - 1) / kRo;
    const int first = kRo == 0 ? 0 : t.n0 / kRo;
#pragma unroll
    for (int v = 0; v < kNb; ++v)
      o.b[v] = kB && first + v < kBlocksN
                   ? t.sb_off + (i64)(first + v) * p.sb_ld_outer
                   : -1;
    return o;
  }

  /// Loads the scales of k-block kb (1 for an operand without K scales),
  /// except those that come with the stage by TMA (`tma`, kScaleTma*).
  __device__ __forceinline__ void load(const GemmParams &p, const Bases &o,
                                       int kb, int tma) {
    const int k = kb * 128;
    if (!kA) {
      a[0] = a[1] = 1.0f;
    } else if (!(tma & kScaleTmaA)) {
      const i64 kk = scale_index<0, C::kSaKBlock>(0, k, 0, p.sa_ld_k);
#pragma unroll
      for (int h = 0; h < 2; ++h)
        a[h] = o.a[h] >= 0 ? load_scale<C::kSaE8>(p.sa, o.a[h] + kk) : 0.0f;
    }
    if (!kB) {
#pragma unroll
      for (int v = 0; v < kNb; ++v)
        b[v] = 1.0f;
    } else if (!(tma & kScaleTmaB)) {
      const i64 kk = scale_index<0, C::kSbKBlock>(0, k, 0, p.sb_ld_k);
#pragma unroll
      for (int v = 0; v < kNb; ++v)
        b[v] = o.b[v] >= 0 ? load_scale<C::kSbE8>(p.sb, o.b[v] + kk) : 0.0f;
    }
  }
};

/// Promotion of one N chunk: acc[chunk] += tc * (scale of the row) * (scale of
/// the column). `boff` is the tile's column offset inside its B scale block
/// (used only when that is not known at compile time); per-column B scales
/// come from shared memory (`sb`, this stage's BLOCK_N values).
template <class C, int kChunk>
__device__ __forceinline__ void
promote(float (&acc)[C::kAcc], const float (&tc)[C::kAccChunk],
        const KScales<C> &ks, const float *sb, int c0, int boff) {
  using KS = KScales<C>;
  constexpr int kA = C::kAccChunk;
  constexpr int kBase = kChunk * kA;         // first accumulator of the chunk
  constexpr int kJ0 = kChunk * C::kMmaN / 8; // first 8-column group
  if (KS::kB) {
    // The row x block products once per k-block, then one FFMA per element;
    // a group of 8 columns picks its block's product (a select when the
    // block boundary's position is only known at run time).
    float p0[KS::kNb], p1[KS::kNb];
#pragma unroll
    for (int v = 0; v < KS::kNb; ++v) {
      p0[v] = ks.a[0] * ks.b[v];
      p1[v] = ks.a[1] * ks.b[v];
    }
#pragma unroll
    for (int j = 0; j < kA / 4; ++j) {
      const int col = (KS::kFixed ? 0 : boff) + 8 * (kJ0 + j);
      float s0 = p0[0], s1 = p1[0];
#pragma unroll
      for (int v = 1; v < KS::kNb; ++v)
        if (col >= v * KS::kRo) {
          s0 = p0[v];
          s1 = p1[v];
        }
      float *a = acc + kBase + 4 * j;
      a[0] = fmaf(tc[4 * j], s0, a[0]);
      a[1] = fmaf(tc[4 * j + 1], s0, a[1]);
      a[2] = fmaf(tc[4 * j + 2], s1, a[2]);
      a[3] = fmaf(tc[4 * j + 3], s1, a[3]);
    }
  } else if (C::kSbMode == kScaleK) { // per-column B scales, staged
#pragma unroll
    for (int j = 0; j < kA / 4; ++j) {
      const float b0 = sb[8 * (kJ0 + j) + c0];
      const float b1 = sb[8 * (kJ0 + j) + c0 + 1];
      float *a = acc + kBase + 4 * j;
      a[0] = fmaf(tc[4 * j], ks.a[0] * b0, a[0]);
      a[1] = fmaf(tc[4 * j + 1], ks.a[0] * b1, a[1]);
      a[2] = fmaf(tc[4 * j + 2], ks.a[1] * b0, a[2]);
      a[3] = fmaf(tc[4 * j + 3], ks.a[1] * b1, a[3]);
    }
  } else if (KS::kA) {
#pragma unroll
    for (int i = 0; i < kA; ++i)
      acc[kBase + i] = fmaf(tc[i], ks.a[(i >> 1) & 1], acc[kBase + i]);
  } else {
#pragma unroll
    for (int i = 0; i < kA; ++i)
      acc[kBase + i] += tc[i];
  }
}

/// One k-block of MMAs for N chunk kChunk (k32 steps ks = 0..3), promoting
/// every kPromoSteps steps counted from the slice's first step (`step0` is
/// this block's first step, 4 * (kb - kb0); slices start at whole groups,
/// so this is the promotion grouping of K from 0). Intervals that divide a
/// k-block promote at fixed steps, multiples of it at the end of a group of
/// blocks (`group_end`); any other (96, 160, 192, ...) at the run-time step
/// where a group ends. Every interval promotes at the slice's last step.
/// Returns with the chunk's wgmmas complete.
/// `issued` runs once per k-block (chunk 0), right after the first commit:
/// work placed there overlaps the tensor cores instead of delaying them.
/// `drained` runs once per k-block, as soon as its last wgmma has completed
/// (last chunk, before that chunk's promotion): the stage is no longer read.
template <class C, int kChunk, class F, class G>
__device__ __forceinline__ void
mma_chunk(float (&acc)[C::kAcc], float (&tc)[C::kAccChunk], u64 da, u64 db,
          bool &fresh, const KScales<C> &scales, const float *sb, int c0,
          int boff, int step0, bool last_block, bool group_end, F &&issued,
          G &&drained) {
  constexpr bool kLastChunk = kChunk == C::kNChunks - 1;
  constexpr int kP = C::kPromoSteps;
  constexpr bool kWithinBlock = kP > 0 && kP <= 4 && 4 % kP == 0;
  constexpr bool kWholeBlocks = kP > 4 && kP % 4 == 0;
  // The chunk's B rows start kChunk * kMmaN rows into the tile
  // (128 bytes per row, 16-byte descriptor units).
  const u64 dbc = db + (u64)(kChunk * C::kMmaN * 128 / 16);
  bool waited = false;
  bool notified = kChunk != 0;
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    if (ks == 0 || waited)
      wgmma_fence();
    waited = false;
    // Advancing K by 32 FP8 elements = 32 bytes = 2 descriptor units.
    mma_k32(tc, da + 2 * ks, dbc + 2 * ks, fresh ? 0u : 1u);
    fresh = false;
    bool promote_now = false;
    if (kWithinBlock)
      promote_now = ((ks + 1) % kP) == 0;
    else if (kWholeBlocks)
      // Also at the unit's last block: a shorter final group (K not a
      // multiple of the interval) is promoted before its stage is freed.
      promote_now = ks == 3 && (group_end || last_block);
    else if (kP > 0)
      promote_now = (step0 + ks + 1) % kP == 0 || (ks == 3 && last_block);
    if (promote_now) {
      wgmma_commit();
      if (!notified) {
        issued();
        notified = true;
      }
      wgmma_wait<0>();
      reg_fence(tc);
      if (kLastChunk && ks == 3)
        drained();
      promote<C, kChunk>(acc, tc, scales, sb, c0, boff);
      fresh = true;
      waited = true;
    }
  }
  if (!waited) {
    wgmma_commit();
    if (!notified)
      issued();
    wgmma_wait<0>();
    reg_fence(tc);
    if (kLastChunk)
      drained();
  }
}

/// Unrolls mma_chunk over the N chunks of the tile.
template <class C, int kChunk = 0, class F, class G>
__device__ __forceinline__ void
mma_all_chunks(float (&acc)[C::kAcc], float (&tc)[C::kAccChunk], u64 da, u64 db,
               bool &fresh, const KScales<C> &ks, const float *sb, int c0,
               int boff, int step0, bool last_block, bool group_end, F &&issued,
               G &&drained) {
  if constexpr (kChunk < C::kNChunks) {
    mma_chunk<C, kChunk>(acc, tc, da, db, fresh, ks, sb, c0, boff, step0,
                         last_block, group_end, issued, drained);
    mma_all_chunks<C, kChunk + 1>(acc, tc, da, db, fresh, ks, sb, c0, boff,
                                  step0, last_block, group_end, issued,
                                  drained);
  }
}

/// Issues one overlap unit: the four k32 steps of one k-block into `t`, for
/// the N chunk whose B rows start at descriptor `db`, as one commit group.
/// The unit starts a fresh partial sum (promotion every k-block).
template <class C>
__device__ __forceinline__ void issue_unit(float (&t)[C::kAccChunk], u64 da,
                                           u64 db) {
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)
    mma_k32(t, da + 2 * ks, db + 2 * ks, ks == 0 ? 0u : 1u);
  wgmma_commit();
}

} // namespace fp8k
