//===- sm90_gemm.cuh - Warp-specialised scaled FP8 GEMM --------*- CUDA -*-===//
//
// D[M, N] = epilogue( sum_k A[M, K] * B[N, K]^T )   (both operands K-major)
//
// One producer warpgroup (warp 0: TMA loads of A/B tiles; warp 1: the scale
// factors that vary along K, read with plain loads so any scale layout and
// stride works) feeds `kMathWG` consumer warpgroups through a `kStages`-deep
// mbarrier pipeline. Each consumer owns 64 rows of the BLOCK_M x BLOCK_N tile
// and issues wgmma.m64nNk32; every `kPromoSteps` k32 steps the tensor-core
// partial sums are promoted into an FP32 accumulator with the per-row /
// per-block scales applied (DeepSeek-V3). The grid is persistent: CTAs walk
// output tiles (x split-K slices) in a rasterised order. Split-K slices write
// FP32 partials to a workspace; the last slice to finish a tile sums them in
// slice order (deterministic) and runs the epilogue. The epilogue applies the
// scales that do not vary along K, adds C, converts, and stores through a
// swizzled shared-memory tile with TMA (or with predicated stores when D's
// row pitch is not 16-byte aligned).
//
// The generated translation unit defines, before including this file:
//   struct Cfg { static constexpr ... };  (emitSm90Gemm, codegen/Sm90Gemm.cpp)
//   void mma_k32(float (&)[Cfg::kAcc], u64 descA, u64 descB, u32 scaleD);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/sm90_common.cuh"
#include "fp8/sm90_epilogue.cuh"
#include "fp8/sm90_params.h"
#include "fp8/sm90_promote.cuh"
#include "fp8/sm90_schedule.cuh"
#include "fp8/sm90_trace.cuh"

namespace fp8k {

template <class C> struct Layout {
  static constexpr int kThreads = (C::kMathWG + 1) * 128;
  static constexpr int kMathThreads = C::kMathWG * 128;
  static constexpr int kTileABytes = C::kBlockM * 128;
  static constexpr int kTileBBytes = C::kBlockN * 128;
  static constexpr int kOutBytes = C::kOutF32 ? 4 : 2;
  static constexpr int kChunkPitch = C::kOutChunkCols * kOutBytes;
  static constexpr int kSmemA = 0;
  static constexpr int kSmemB = kSmemA + C::kStages * kTileABytes;
  static constexpr int kSmemD = kSmemB + C::kStages * kTileBBytes;
  // The epilogue stages kEpiCols columns of each warpgroup's 64 rows at a
  // time (several rounds for wide tiles), which leaves room for stages.
  static constexpr int kEpiRounds = C::kBlockN / C::kEpiCols;
  static constexpr int kEpiBuffers = C::kEpiBuffers; // 1 or 2
  static constexpr int kDBytes =
      C::kTmaStore ? kEpiBuffers * C::kMathWG * 64 * C::kEpiCols * kOutBytes
                   : 0;
  /// Per-column B scales that vary along K (one per column per k-block) are
  /// the one case staged in shared memory, by the producer's scale loader
  /// warp. Every other K-varying scale is few per thread and read by the
  /// consumers themselves (KScales below).
  static constexpr bool kScaleLoader =
      C::kSbMode == kScaleK && C::kSbOuterBlock == 1;
  static constexpr int kSbPerStage = kScaleLoader ? C::kBlockN : 0;
  /// Stage slots for K scales loaded by TMA (Cfg::kScaleTma): A's
  /// BLOCK_M row scales, and a 128-byte slot for B's kNb block scales (a
  /// 4-float box per block). TMA destinations are 128-byte aligned.
  /// A contiguous grouped GEMM's tile starts at any row, a TMA box only at
  /// a 16-byte aligned one: its box starts up to 3 rows early and is 4
  /// rows longer (kSaBox), in a slot of 32 more floats (kSaTma: slots stay
  /// 128-byte aligned).
  static constexpr int kSaPad = C::kGrouped == kGroupedContiguous ? 4 : 0;
  static constexpr int kSaBox = C::kBlockM + kSaPad;
  static constexpr int kSaTma =
      KScaleShape<C>::kA ? C::kBlockM + (kSaPad ? 32 : 0) : 0;
  static constexpr int kSbTma = KScaleShape<C>::kB ? 32 : 0;
  static constexpr int kSmemScaleTma = (kSmemD + kDBytes + 127) / 128 * 128;
  static constexpr int kSmemScales =
      kSmemScaleTma + C::kStages * (kSaTma + kSbTma) * 4;
  static constexpr int kScaleBytes = C::kStages * kSbPerStage * 4;
  static constexpr int kSmemBars = (kSmemScales + kScaleBytes + 7) / 8 * 8;
  static constexpr int kSmemFlag = kSmemBars + 2 * C::kStages * 8;
  /// Accumulate-into-C with a TMA store: each warpgroup's C comes by TMA
  /// into its staging buffers, completing on a barrier per warpgroup and
  /// buffer (store_tile).
  static constexpr bool kCTma = C::kAccumulate && C::kTmaStore;
  static constexpr int kSmemCBars = kSmemFlag + 16;
  static constexpr int kSmemTotal =
      kSmemCBars + (kCTma ? C::kMathWG * kEpiBuffers * 8 : 0);
};

/// The producer's TMA thread: for each k-block of this CTA's work units,
/// waits for the stage to be free and loads A, B and the K scales that
/// travel with the stage into it (multicast to the peer in a cluster).
template <class C>
__device__ __forceinline__ void
load_stages(const TmaDesc &tmap_a, const TmaDesc &tmap_b,
            const TmaDesc &tmap_sa, const TmaDesc &tmap_sb,
            const TmaDesc &tmap_a_tail, const TmaDesc &tmap_sa_tail,
            const GemmParams &p, Schedule<C> &sched, int my_units, u32 base,
            u32 bar_full, u32 bar_empty) {
  using L = Layout<C>;
  // Multicast halves: along M the pair shares B, along N it shares A.
  constexpr int kARows = C::kClusterN > 1 ? C::kBlockM / 2 : C::kBlockM;
  constexpr int kBRows = C::kClusterM > 1 ? C::kBlockN / 2 : C::kBlockN;
  // K scales that travel with the stage (this CTA's own, never
  // multicast): BLOCK_M floats of A, a 4 x kNb float box of B.
  using KS = KScaleShape<C>;
  constexpr int kSaKBlock = C::kSaKBlock > 0 ? C::kSaKBlock : 1 << 30;
  constexpr int kSbKBlock = C::kSbKBlock > 0 ? C::kSbKBlock : 1 << 30;
  constexpr int scale_tma =
      C::kScaleTma & ((KS::kA ? kScaleTmaA : 0) | (KS::kB ? kScaleTmaB : 0));
  // A dense GEMM's last M tile loads only A's rows up to M (rounded to
  // a swizzle atom) and their scales: boxes the host encoded a_box_rows
  // high (gemmABoxRows), so the stage's byte count is a launch argument.
  // Where M lies in one tile, A's own descriptors have that box; the
  // tail-box kernel (kATail, built for an M that leaves a ragged last
  // tile) loads that tile through descriptors of its own. With the
  // whole tile's box, the rows past M that the TMA unit fills with
  // zeros held a 64x64 tile's weight stream at 62% of DRAM bandwidth
  // at M = 16, against 70% with this box (H100,
  // docs/results/h100-2026-12-06-a-box/); a ragged last tile's zero
  // rows held 128x128 tiles at 1000x29568x8192 to 1165-1170 TFLOP/s,
  // against 1306 with the tail box (docs/results/
  // h100-2026-12-06-tail-box/).
  constexpr bool kSmallBox = C::kClusterN == 1 && C::kGrouped == kDenseGemm;
  const bool small_box = kSmallBox && p.a_box_rows > 0;
  auto bytes_of_stage = [&](bool boxed) {
    const int a_rows = boxed ? p.a_box_rows : C::kBlockM;
    return (u32)a_rows * 128 + L::kTileBBytes +
           ((scale_tma & kScaleTmaA) ? (boxed ? a_rows : L::kSaBox) * 4 : 0) +
           ((scale_tma & kScaleTmaB) ? KS::kNb * 16 : 0);
  };
  const u32 stage_bytes = bytes_of_stage(small_box && !C::kATail);
  const u32 tail_bytes = C::kATail ? bytes_of_stage(small_box) : 0;
  int it = 0;
  KTrace tr;
  tr.init(true, my_units);
  TileSpan t;
  int split, nsplit, tile_id, kb0, kb1;
  for (int u = sched.first(); sched.decode(p, u, t, split, nsplit, tile_id);
       u += sched.stride()) {
    unit_range<C>(t, split, nsplit, kb0, kb1);
    tr.next_unit();
    // B's group among the stacked scale tensors (groups along K share
    // one B).
    const int sb_group = C::kGrouped == kGroupedK ? 0 : t.g;
    // The tail-box kernel's descriptors, chosen once a work unit.
    const bool tail = C::kATail && small_box && t.m0 + C::kBlockM > p.m;
    const TmaDesc *map_a = tail ? &tmap_a_tail : &tmap_a;
    const TmaDesc *map_sa = tail ? &tmap_sa_tail : &tmap_sa;
    const u32 unit_bytes = tail ? tail_bytes : stage_bytes;
    for (int kb = kb0; kb < kb1; ++kb, ++it) {
      const int s = it % C::kStages;
      const u32 ph = (it / C::kStages) & 1;
      tr.block(kb - kb0);
      tr.stamp(0);
      mbar_wait(bar_empty + s * 8, ph ^ 1);
      tr.stamp(1);
      const u32 full = bar_full + s * 8;
      mbar_arrive_expect_tx(full, unit_bytes);
      if (scale_tma & kScaleTmaA)
        tma_load_2d(base + L::kSmemScaleTma + s * L::kSaTma * 4, map_sa, full,
                    L::kSaPad ? t.m0 & ~3 : t.m0, kb * 128 / kSaKBlock);
      // (A box's first element along the contiguous dimension must be
      // 16-byte aligned: the 4-float box starts at a multiple of 4.)
      if (scale_tma & kScaleTmaB)
        tma_load_2d(base + L::kSmemScaleTma +
                        (C::kStages * L::kSaTma + s * L::kSbTma) * 4,
                    &tmap_sb, full, (kb * 128 / kSbKBlock) & ~3,
                    KS::kRo == 0
                        ? sb_group
                        : sb_group * ((C::kN + KS::kRo - 1) / KS::kRo) +
                              t.n0 / KS::kRo);
      const u32 a_dst = base + L::kSmemA + s * L::kTileABytes;
      const u32 b_dst = base + L::kSmemB + s * L::kTileBBytes;
      if (C::kClusterN > 1)
        tma_load_2d_multicast(a_dst + sched.rank * kARows * 128, &tmap_a, full,
                              kb * 128, t.m0 + sched.rank * kARows, 0x3);
      else
        tma_load_2d(a_dst, map_a, full, kb * 128, t.m0);
      if (C::kClusterM > 1)
        tma_load_2d_multicast(b_dst + sched.rank * kBRows * 128, &tmap_b, full,
                              kb * 128, t.b_row0 + t.n0 + sched.rank * kBRows,
                              0x3);
      else
        tma_load_2d(b_dst, &tmap_b, full, kb * 128, t.b_row0 + t.n0);
    }
  }
  tr.flush(p.trace, kTraceProducer);
}

/// The producer's scale loader (Layout::kScaleLoader, warp 1): the
/// per-column B scales of each stage's k-block.
template <class C>
__device__ __forceinline__ void
load_stage_b_scales(const GemmParams &p, Schedule<C> &sched,
                    unsigned char *smem, u32 base, u32 bar_full, u32 bar_empty,
                    int lane) {
  using L = Layout<C>;
  // f32 scales travel with cp.async and arrive on the stage's barrier when
  // they land, so the loader runs ahead like the TMA thread; UE8M0 bytes
  // are loaded, decoded and stored synchronously.
  constexpr bool kAsync = !C::kSbE8;
  const u32 sb_base = base + L::kSmemScales;
  float *sb_smem = (float *)(smem + L::kSmemScales);
  int it = 0;
  TileSpan t;
  int split, nsplit, tile_id, kb0, kb1;
  for (int u = sched.first(); sched.decode(p, u, t, split, nsplit, tile_id);
       u += sched.stride()) {
    unit_range<C>(t, split, nsplit, kb0, kb1);
    for (int kb = kb0; kb < kb1; ++kb, ++it) {
      const int s = it % C::kStages;
      const u32 ph = (it / C::kStages) & 1;
      mbar_wait(bar_empty + s * 8, ph ^ 1);
#pragma unroll
      for (int c = lane; c < C::kBlockN; c += 32) {
        const int col = t.n0 + c;
        const bool valid = col < C::kN;
        const i64 idx =
            t.sb_off + scale_index<1, C::kSbKBlock>(valid ? col : 0, kb * 128,
                                                    p.sb_ld_outer, p.sb_ld_k);
        const int slot = s * L::kSbPerStage + c;
        if (kAsync)
          cp_async_4(sb_base + slot * 4, (const float *)p.sb + idx, valid);
        else
          sb_smem[slot] = valid ? load_scale<C::kSbE8>(p.sb, idx) : 0.0f;
      }
      if (kAsync)
        cp_async_arrive(bar_full + s * 8);
      else
        // The arrive has release semantics: the stores above are
        // visible to the consumers that wait on this barrier.
        mbar_arrive(bar_full + s * 8);
    }
  }
}

/// Split-K and split tails: publishes this slice's partial `res` of tile
/// `tile` to the workspace; the tile's last slice to arrive sums every
/// slice's partial in slice order into `res` (so the result does not depend
/// on which finished last) and returns true; the others return false.
/// `flag`: a shared word the consumers pass the verdict through.
template <class C>
__device__ __forceinline__ bool reduce_split(const GemmParams &p, float *res,
                                             int tile, int split, int nsplit,
                                             int ctid, volatile int *flag) {
  using L = Layout<C>;
  constexpr int kAcc = C::kAcc;
  const i64 slot_stride = (i64)(kAcc / 4) * L::kMathThreads * 4;
  float *ws = p.workspace + (i64)tile * nsplit * slot_stride;
#pragma unroll
  for (int q = 0; q < kAcc / 4; ++q)
    st_cg_v4(ws + split * slot_stride + ((i64)q * L::kMathThreads + ctid) * 4,
             res[4 * q], res[4 * q + 1], res[4 * q + 2], res[4 * q + 3]);
  __threadfence();
  named_barrier(1, L::kMathThreads);
  if (ctid == 0) {
    const int old = atomicAdd(p.counters + tile, 1);
    const int last = old == nsplit - 1;
    if (last)
      atomicExch(p.counters + tile, 0); // ready for the next launch
    *flag = last;
  }
  named_barrier(1, L::kMathThreads);
  if (!*flag)
    return false;
  __threadfence();
  // Sum the slices in slice order (this one's partial too, read back
  // from the workspace) into res: the result does not depend on which
  // slice finished last, and no second accumulator is needed.
#pragma unroll
  for (int i = 0; i < kAcc; ++i)
    res[i] = 0.0f;
  for (int t = 0; t < nsplit; ++t) {
#pragma unroll
    for (int q = 0; q < kAcc / 4; ++q) {
      float a, b, c, d;
      ld_cg_v4(ws + t * slot_stride + ((i64)q * L::kMathThreads + ctid) * 4, a,
               b, c, d);
      res[4 * q] += a;
      res[4 * q + 1] += b;
      res[4 * q + 2] += c;
      res[4 * q + 3] += d;
    }
  }
  return true;
}

template <class C>
__device__ __forceinline__ void
gemm_body(const TmaDesc &tmap_a, const TmaDesc &tmap_b, const TmaDesc &tmap_d,
          const TmaDesc &tmap_sa, const TmaDesc &tmap_sb, const TmaDesc &tmap_c,
          const TmaDesc &tmap_a_tail, const TmaDesc &tmap_sa_tail,
          const GemmParams &p) {
  using L = Layout<C>;
  constexpr int kAcc = C::kAcc; // accumulator floats per thread = BLOCK_N / 2
  extern __shared__ unsigned char smem_raw[];
  // Swizzled tiles need 1024-byte alignment; the launcher adds the slack.
  const u32 raw = smem_addr(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  unsigned char *smem = smem_raw + (base - raw);

  const u32 bar_full = base + L::kSmemBars;
  const u32 bar_empty = bar_full + C::kStages * 8;
  const int warp_group = threadIdx.x / 128;
  const int tid_in_wg = threadIdx.x % 128;

  constexpr int kCS = Schedule<C>::kCS;
#ifdef FP8_KERNEL_DEBUG
  // The host encodes the scale descriptors of the kernel variant it loaded.
  if (p.scale_tma != C::kScaleTma) {
    if (threadIdx.x == 0)
      printf("fp8 kernel: launched with scale_tma %d, built for %d\n",
             p.scale_tma, C::kScaleTma);
    asm volatile("trap;");
  }
#endif
  if (threadIdx.x == 0) {
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(bar_full + s * 8, 1 + (L::kScaleLoader ? 32 : 0));
      // A stage is free once every consumer warp of every CTA that the
      // stage's multicast writes into has released it.
      mbar_init(bar_empty + s * 8, kCS * C::kMathWG * 4);
    }
    if (L::kCTma)
      for (int b = 0; b < C::kMathWG * L::kEpiBuffers; ++b)
        mbar_init(base + L::kSmemCBars + b * 8, 1);
    mbar_fence_init();
  }
  if (threadIdx.x == C::kMathWG * 128) {
    tma_prefetch_desc(&tmap_a);
    tma_prefetch_desc(&tmap_b);
    if (C::kScaleTma & kScaleTmaA)
      tma_prefetch_desc(&tmap_sa);
    if (C::kScaleTma & kScaleTmaB)
      tma_prefetch_desc(&tmap_sb);
    if (C::kTmaStore)
      tma_prefetch_desc(&tmap_d);
    if (L::kCTma)
      tma_prefetch_desc(&tmap_c);
    if (C::kATail) {
      tma_prefetch_desc(&tmap_a_tail);
      if (C::kScaleTma & kScaleTmaA)
        tma_prefetch_desc(&tmap_sa_tail);
    }
  }
  // The peer's barriers must be initialised before any multicast or remote
  // arrive reaches them.
  if (kCS > 1)
    cluster_sync();
  else
    __syncthreads();
  // Launched after another kernel with programmatic dependent launch (a
  // plan's steps, runtime/Sm90Launch.cpp), the setup above overlaps that
  // kernel's tail; nothing below may touch global memory before it is done.
  wait_prior_grid();

  Schedule<C> sched(p);
  const int my_units = sched.my_units();

  if (warp_group == C::kMathWG) {
    //===------------------------------------------------------------------===//
    // Producer warpgroup.
    //===------------------------------------------------------------------===//
    if (C::kProducerRegs > 0)
      setmaxnreg_dec<C::kProducerRegs>();
    const int warp = tid_in_wg / 32;
    const int lane = tid_in_wg % 32;
    if (warp == 0 && lane == 0)
      load_stages<C>(tmap_a, tmap_b, tmap_sa, tmap_sb, tmap_a_tail,
                     tmap_sa_tail, p, sched, my_units, base, bar_full,
                     bar_empty);
    else if (L::kScaleLoader && warp == 1)
      load_stage_b_scales<C>(p, sched, smem, base, bar_full, bar_empty, lane);
    __syncwarp();
    // No early exit: in a cluster every thread meets the final cluster_sync
    // (the peer may still multicast into this CTA or arrive on its barriers).
    if (kCS > 1)
      cluster_sync();
    return;
  }

  //===--------------------------------------------------------------------===//
  // Consumer (math) warpgroups.
  //===--------------------------------------------------------------------===//
  if (C::kConsumerRegs > 0)
    setmaxnreg_inc<C::kConsumerRegs>();
  const int warp = tid_in_wg / 32;
  const int lane = tid_in_wg % 32;
  const int ctid = threadIdx.x; // 0 .. kMathThreads-1
  // Accumulator fragment coordinates (PTX ISA 9.7.15.5.4, m64nNk32 f32 D):
  // register i holds row r0 + 8*((i>>1)&1), column 8*(i>>2) + 2*(lane&3) +
  // (i&1) of this warpgroup's 64 x BLOCK_N slab.
  const int r0 = warp * 16 + lane / 4;
  const int c0 = 2 * (lane & 3);
  const float *sb_smem = (const float *)(smem + L::kSmemScales);
  volatile int *flag = (volatile int *)(smem + L::kSmemFlag);

  // A chunked tile reuses one chunk-wide tensor-core accumulator for each N
  // chunk in turn, promoting it into the full-width FP32 accumulator; this
  // is what lets a 128x256 tile fit in registers with promotion.
  static_assert(C::kNChunks == 1 ||
                    (C::kPromoSteps >= 1 && C::kPromoSteps <= 4 &&
                     4 % C::kPromoSteps == 0),
                "N chunks need a promotion at the end of every k-block");
  static_assert(C::kOverlap == 0 || C::kPromoSteps == 4,
                "overlapped promotion promotes every k-block");
  static_assert(C::kOverlap != 2 || C::kNChunks == 2,
                "overlap over N halves needs two N chunks");
  float tc[C::kAccChunk]; // wgmma accumulator (tensor-core precision)
  // The second one of overlapped promotion (C::kOverlap).
  float tc1[C::kOverlap != 0 ? C::kAccChunk : 1];
  float acc[kAcc]; // promoted FP32 accumulator
  int it = 0;
  int epi_round = 0; // epilogue rounds so far (staging buffer parity)

  // K-varying scales: `ks` holds the k-block being promoted. Scales that
  // come with the stage by TMA (Cfg::kScaleTma) are read from its slots; the
  // others are loaded by these threads one k-block ahead into `ks_next`.
  using KS = KScales<C>;
  constexpr bool kDirect = KS::kA || KS::kB;
  constexpr int kAllTma = (KS::kA ? kScaleTmaA : 0) | (KS::kB ? kScaleTmaB : 0);
  constexpr int tma = C::kScaleTma & kAllTma;
  const float *sa_tma = (const float *)(smem + L::kSmemScaleTma);
  const float *sb_tma = sa_tma + C::kStages * L::kSaTma;
  const int row_in_tile = warp_group * 64 + r0;
  // Overlapped promotion keeps one set per accumulator (ks for tc, ks1 for
  // tc1): a unit's scales are read when it is issued, before the wait.
  KS ks, ks1, ks_next;
  // Operands without K scales keep 1 (never written again).
  ks.a[0] = ks.a[1] = 1.0f;
#pragma unroll
  for (int v = 0; v < KS::kNb; ++v)
    ks.b[v] = 1.0f;
  ks1 = ks;
  // A stage can be handed back as soon as its wgmmas have completed, before
  // the promotion, unless the promotion reads the stage's per-column B
  // scales (the scale loader's slots).
  constexpr bool kEarlyRelease = !L::kScaleLoader;
  KTrace tr;
  tr.init(tid_in_wg == 0, my_units);
  TileSpan span;
  int split, nsplit, tile, kb0, kb1;
  for (int u = sched.first(); sched.decode(p, u, span, split, nsplit, tile);
       u += sched.stride()) {
    unit_range<C>(span, split, nsplit, kb0, kb1);
    tr.next_unit();
    // The tile's first column inside its B scale block (when not fixed).
    const int boff = KS::kFixed ? 0 : span.n0 % KS::kRo;
    const typename KS::Bases kbases = KS::bases(p, span, span.m0 + row_in_tile);
    // (The unit's first k-block waits for its loads once per unit.)
    if (kDirect && tma != kAllTma)
      ks_next.load(p, kbases, kb0, tma);
    // Moves `out` to k-block kb's scales (stage s) and starts loading its
    // successor's.
    // (`end`: the end of the k-block range being walked.)
    auto take_scales = [&](int kb, int s, KS &out, int end) {
      if (kDirect) {
        if (tma != kAllTma)
          out = ks_next;
        if (tma & kScaleTmaA) {
          const float *sa = sa_tma + s * L::kSaTma + row_in_tile +
                            (L::kSaPad ? span.m0 & 3 : 0);
          out.a[0] = sa[0];
          out.a[1] = sa[8];
        }
        if (tma & kScaleTmaB) {
          const int j = (C::kSbKBlock > 0 ? kb * 128 / C::kSbKBlock : 0) & 3;
#pragma unroll
          for (int v = 0; v < KS::kNb; ++v)
            out.b[v] = sb_tma[s * L::kSbTma + 4 * v + j];
        }
        if (tma != kAllTma && kb + 1 < end)
          ks_next.load(p, kbases, kb + 1, tma);
      }
    };

    // A tile this unit finishes alone has its C on the way during the main
    // loop (store_tile).
    const bool c_ahead = L::kCTma && C::kSplitK == 1 && nsplit == 1;
    if (c_ahead && tid_in_wg == 0)
      load_c_ahead<C, L>(tmap_c, base, warp_group, span, epi_round);
#pragma unroll
    for (int i = 0; i < kAcc; ++i)
      acc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < C::kAccChunk; ++i)
      tc[i] = 0.0f;
    bool fresh = true; // the next wgmma starts a new partial sum
    // Hands stage s back (to the peer CTA too, whose multicast writes into
    // this stage). In a cluster, lane r arrives on CTA r's barrier through
    // its cluster address: one instruction for both lanes. (Lane 0 arriving
    // locally and lane 1 remotely, two divergent paths, measured 4-5% slower
    // on 2-CTA clusters.)
    auto release = [&](int s) {
      __syncwarp();
      if (kCS > 1) {
        if (lane < kCS)
          mbar_arrive_cluster(bar_empty + s * 8, lane);
      } else if (lane == 0) {
        mbar_arrive(bar_empty + s * 8);
      }
    };

    if constexpr (C::kOverlap != 0) {
      // Promotion overlapped with the MMAs: units (one k-block of one N
      // chunk) alternate between accumulators t0 (even units) and t1 (odd
      // units); unit i + 1 is in flight while unit i is promoted. With N
      // halves (kOverlap 2) a k-block is two units, chunk 0 in t0 and chunk
      // 1 in t1; with alternating k-blocks (kOverlap 1) a unit is a whole
      // k-block.
      constexpr int kU = C::kOverlap == 2 ? 2 : 1; // units per k-block
      constexpr int kChunk1 = kU == 2 ? 1 : 0;     // t1's N chunk
      const int n_units = (kb1 - kb0) * kU;
      auto stage_of = [&](int i, int &s, u32 &ph) {
        const int itk = it + i / kU;
        s = itk % C::kStages;
        ph = (itk / C::kStages) & 1;
      };
      auto desc_a = [&](int s) {
        return make_desc_sw128(base + L::kSmemA + s * L::kTileABytes +
                               warp_group * 64 * 128);
      };
      auto desc_b = [&](int s, int chunk) {
        return make_desc_sw128(base + L::kSmemB + s * L::kTileBBytes) +
               (u64)(chunk * C::kMmaN * 128 / 16);
      };
      // Waits for unit i's stage (when it starts a k-block) and issues it.
      // With alternating k-blocks the unit's scales are read right after
      // the issue, into its accumulator's set (their latency overlaps the
      // tensor cores); N halves share one k-block's scales, read at the
      // first half's promotion. (Tiles whose B block boundary sits at a
      // run-time column read them at the promotion too: the extra live
      // registers made ptxas spill at 120 columns.)
      constexpr bool kScalesAtIssue = KS::kFixed;
      auto start = [&](int i, float (&t)[C::kAccChunk], int chunk, KS &set) {
        int s;
        u32 ph;
        stage_of(i, s, ph);
        tr.block(i / kU);
        tr.stamp(0);
        if (i % kU == 0)
          mbar_wait(bar_full + s * 8, ph);
        tr.stamp(1);
        issue_unit<C>(t, desc_a(s), desc_b(s, chunk));
        if (kU == 1 && kScalesAtIssue)
          take_scales(kb0 + i, s, set, kb1);
        tr.stamp(2);
      };
      // Promotes unit i from accumulator t (chunk kChunk); releases its
      // stage after the last unit of the k-block, before the promotion
      // when the promotion does not read the stage.
      auto finish0 = [&](int i) {
        tr.block(i / kU);
        tr.stamp(3);
        int s;
        u32 ph;
        reg_fence(tc);
        stage_of(i, s, ph);
        if (kU == 2 || !kScalesAtIssue)
          take_scales(kb0 + i / kU, s, ks, kb1);
        if (kU == 1 && kEarlyRelease)
          release(s);
        promote<C, 0>(acc, tc, ks, sb_smem + s * L::kSbPerStage, c0, boff);
        if (kU == 1 && !kEarlyRelease)
          release(s);
        tr.stamp(4);
      };
      // (With N halves the release stays after the promotion: handing the
      // stage back first made ptxas spill at 160 columns.)
      auto finish1 = [&](int i) {
        tr.block(i / kU);
        tr.stamp(3);
        int s;
        u32 ph;
        reg_fence(tc1);
        stage_of(i, s, ph);
        if (kU == 1 && !kScalesAtIssue)
          take_scales(kb0 + i, s, ks1, kb1);
        if (kU == 1 && kEarlyRelease)
          release(s);
        promote<C, kChunk1>(acc, tc1, kU == 1 ? ks1 : ks,
                            sb_smem + s * L::kSbPerStage, c0, boff);
        if (kU == 2 || !kEarlyRelease)
          release(s); // both units of a two-unit k-block are done
        tr.stamp(4);
      };
      // The issue/wait pattern is the same in every iteration (ptxas
      // serialises wgmmas whose completion it cannot prove at a use).
      if (n_units > 0 && kU == 1) {
        // Prologue, then pairs of units, leaving at whichever half has no
        // successor to issue. (A tail after the loop would hold a third
        // copy of the issue and promotion code: NVRTC takes 10-20% longer
        // on kernels built that way; docs/journal/2026-11-22-hopper-kernel.md,
        // 22h.)
        start(0, tc, 0, ks);
        for (int i = 0;; i += 2) {
          if (i + 1 >= n_units) {
            wgmma_wait<0>();
            finish0(i);
            break;
          }
          start(i + 1, tc1, kChunk1, ks1);
          wgmma_wait<1>();
          finish0(i);
          if (i + 2 >= n_units) {
            wgmma_wait<0>();
            finish1(i + 1);
            break;
          }
          start(i + 2, tc, 0, ks);
          wgmma_wait<1>();
          finish1(i + 1);
        }
      } else if (n_units > 0) {
        // N halves: prologue, steady state with both next units present,
        // then a tail. (The loop above spills at 192 columns with
        // accumulate-into-C here; dropping either branch of the tail, or
        // the lone-unit exit above, makes ptxas serialise the wgmmas.)
        start(0, tc, 0, ks);
        int i = 0;
        for (; i + 2 < n_units; i += 2) {
          start(i + 1, tc1, kChunk1, ks1);
          wgmma_wait<1>();
          finish0(i);
          start(i + 2, tc, 0, ks);
          wgmma_wait<1>();
          finish1(i + 1);
        }
        if (i + 1 < n_units) { // two units left (always with N halves)
          start(i + 1, tc1, kChunk1, ks1);
          wgmma_wait<1>();
          finish0(i);
          wgmma_wait<0>();
          finish1(i + 1);
        } else {
          wgmma_wait<0>();
          finish0(i);
        }
      }
      it += kb1 - kb0;
    } else {
      // Stage and phase advance by one per k-block (no division in the
      // loop); a stage's descriptors are the first stage's plus a constant
      // (the start address field is the byte address / 16, and every stage
      // lies below 256 KiB). The base address and the warpgroup index are
      // the same in every lane: read through a shuffle, ptxas keeps the
      // descriptors in uniform registers instead of moving each one there
      // (R2UR) before every wgmma: +1.5-3.4% on 128x128 tiles, H100. (Done
      // for the whole kernel it made ptxas spill in the overlapped path.)
      int next_s = it % C::kStages;
      u32 next_ph = (it / C::kStages) & 1;
      const u32 ubase = __shfl_sync(0xffffffffu, base, 0);
      const int uwg = __shfl_sync(0xffffffffu, warp_group, 0);
      const u64 da0 = make_desc_sw128(ubase + L::kSmemA + uwg * 64 * 128);
      const u64 db0 = make_desc_sw128(ubase + L::kSmemB);
      // One loop for whole tiles and the slices of a split tail: a second
      // copy with compile-time bounds for whole tiles would cost a third of
      // these kernels' NVRTC time for at most 1.1% on the H100
      // (4096x4096x7168; docs/results/h100-2026-11-22k/).
      for (int kb = kb0; kb < kb1; ++kb, ++it) {
        const int s = next_s;
        const u32 ph = next_ph;
        if (++next_s == C::kStages) {
          next_s = 0;
          next_ph ^= 1;
        }
        tr.block(kb - kb0);
        tr.stamp(0);
        mbar_wait(bar_full + s * 8, ph);
        tr.stamp(1);
        const u64 da = da0 + (u64)(s * (L::kTileABytes / 16));
        const u64 db = db0 + (u64)(s * (L::kTileBBytes / 16));
        const bool group_end = ((kb - kb0 + 1) % C::kGroupBlocks) == 0;
        mma_all_chunks<C>(
            acc, tc, da, db, fresh, ks, sb_smem + s * L::kSbPerStage, c0, boff,
            4 * (kb - kb0), kb == kb1 - 1, group_end,
            [&] {
              tr.stamp(2);
              take_scales(kb, s, ks, kb1);
            },
            [&] {
              tr.stamp(3);
              if (kEarlyRelease)
                release(s);
            });
        if (!kEarlyRelease)
          release(s);
        tr.stamp(4);
      }
    }
    float *res = C::kPromoSteps > 0 ? acc : tc;

    //===------------------------------------------------------------------===//
    // Split-K: publish the partial; the last slice of the tile reduces.
    //===------------------------------------------------------------------===//
    if (C::kSplitK > 1 || (C::kTailSplit > 1 && nsplit > 1))
      if (!reduce_split<C>(p, res, tile, split, nsplit, ctid, flag))
        continue;

    //===------------------------------------------------------------------===//
    // Epilogue: scales constant along K, C, conversion, store.
    //===------------------------------------------------------------------===//
    store_tile<C, L>(p, tmap_d, tmap_c, res, span, base, warp_group, tid_in_wg,
                     epi_round, c_ahead);
  }
  if (C::kTmaStore && tid_in_wg == 0)
    tma_store_wait_all();
  tr.flush(p.trace, warp_group);
  __syncwarp();
  if (kCS > 1)
    cluster_sync();
}

} // namespace fp8k
