//===- sm90_schedule.cuh - Work units of the sm_90a GEMM ------*- CUDA -*-===//
//
// The persistent schedule of sm90_gemm.cuh: which output tile and which K
// slice each work unit is (tiles, cluster groups, split-K slices, the split
// tail of the last partial wave, the groups of a grouped GEMM), and the
// k-block range of a slice. The
// producer and the consumers walk the same units in the same order.
//
// Needs the generated Cfg (kN, kK, kBlockM, kBlockN, kClusterM, kClusterN,
// kSplitK, kTailSplit, kPromoSteps, kRasterAlongN, kGroup, kGrouped) and
// sm90_common.cuh (tile_coords, cluster_ctarank). The unit count is
// gemmUnits (sm90_params.h), which the runtime sizes the grid with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/sm90_common.cuh"
#include "fp8/sm90_params.h"

namespace fp8k {

/// Where one work unit's tile lies. A grouped GEMM's groups share A and D
/// (stacked along M: the rows of every group in one tensor) and B (G
/// stacked [N, K] matrices); a dense GEMM is one group of rows [0, m).
struct TileSpan {
  int m0, n0;  ///< the tile's first row of A (and D), first column of D
  int row_end; ///< rows from here on are no group's rows: never stored
  int srow0;   ///< A's scale rows count from this row (masked: the group's)
  int b_row0;  ///< the group's first row of B, g * N
  int g;       ///< the group (0 for a dense GEMM)
  i64 sa_off;  ///< the group's A scales: element offset (masked)
  i64 sb_off;  ///< the group's B scales: element offset
  int d_shift; ///< D's row of A's row r is r + d_shift (K-grouped: g * M)
  int kb_begin, kb_end; ///< K-grouped: the group's k-blocks
};

/// The persistent schedule. Work units are (cluster tile group, K slice):
/// a cluster of 2 along M takes m blocks 2g and 2g+1 of one n block (they
/// share B through multicast), a cluster along N takes two n blocks of one
/// m block (sharing A). A trailing odd block gives its CTA a phantom tile:
/// all its loads are out of bounds (zeros) and its stores are clipped.
/// With split-K every tile is kSplitK units. With a split tail (kTailSplit)
/// the tiles before tail_first are one unit each and every later tile
/// (the last partial wave's) is tail_split units, chosen at launch
/// (codegen/Sm90Gemm.cpp, sm90TailSchedule) so that the slices fill the
/// wave; each CTA of the grid then takes at most one of them.
///
/// A grouped GEMM (Cfg::kGrouped) numbers the tiles of group 0, then those
/// of group 1, and so on, each group rasterised on its own; the group
/// sizes are device data, so each thread walks them with a cursor as its
/// units advance (units only grow) and the walk ends after the last group.
/// A phantom tile of a group reads the next group's rows and stores
/// nothing. Groups along K (kGroupedK) share A's rows and B: every group
/// has the same tiles, so the units are known up front; each unit reads
/// its group's k-blocks and writes the group's slab of D. Grouped kernels
/// take no split-K and no split tail.
template <class C> struct Schedule {
  static constexpr int kCS = C::kClusterM * C::kClusterN;
  static constexpr int kNTiles = (C::kN + C::kBlockN - 1) / C::kBlockN;
  static constexpr int kNGroups = (kNTiles + C::kClusterN - 1) / C::kClusterN;
  static constexpr int kNTilesPadded = kNGroups * C::kClusterN;
  static constexpr bool kTail = C::kTailSplit > 1;
  static constexpr bool kGrouped = C::kGrouped != kDenseGemm;
  /// Groups along M: tile counts are device data, walked with a cursor.
  static constexpr bool kWalk =
      C::kGrouped == kGroupedContiguous || C::kGrouped == kGroupedMasked;
  static_assert(!kGrouped || (C::kSplitK == 1 && !kTail),
                "grouped GEMMs take no split-K and no split tail");
  int m_groups;
  int units;
  int rank;
  int tail_first; // kTail: the first split tile
  int tail_split; // kTail: its K slices (1: nothing split)
  // Grouped: the cursor's group, its first unit and its end, and its rows.
  int cur_g, cur_u0, cur_u1, cur_row0, cur_rows;

  /// M rows; the split tail's first tile and slice count (GemmParams).
  __device__ __forceinline__ Schedule(const GemmParams &p) {
    rank = kCS > 1 ? (int)cluster_ctarank() : 0;
    tail_first = 0;
    tail_split = 1;
    if (kWalk) {
      cur_g = -1;
      cur_u0 = cur_u1 = 0;
      cur_row0 = cur_rows = 0;
      m_groups = 0;
      units = 0;
      return;
    }
    m_groups = gemmTileGroups<int>(p.m, C::kBlockM, C::kClusterM);
    const int tiles = m_groups * kNGroups * (kGrouped ? p.num_groups : 1);
    tail_first = tiles;
    if (kTail && p.tail_split > 1 && p.tail_first <= tiles) {
      tail_first = p.tail_first;
      tail_split = p.tail_split;
    }
    units =
        gemmUnits<int>(tiles, kTail ? 1 : C::kSplitK, tail_first, tail_split);
  }
  __device__ __forceinline__ int first() const { return blockIdx.x / kCS; }
  __device__ __forceinline__ int stride() const { return gridDim.x / kCS; }
  /// This CTA's units, for the trace (grouped: not known up front, 2 picks
  /// the second unit).
  __device__ __forceinline__ int my_units() const {
    if (kWalk)
      return 2;
    return first() < units ? (units - first() + stride() - 1) / stride() : 0;
  }

  /// Moves the cursor to the group holding unit `u`; false past the last.
  __device__ __forceinline__ bool seek(const GemmParams &p, int u) {
    while (u >= cur_u1) {
      if (++cur_g >= p.num_groups)
        return false;
      int row0, rows;
      if (C::kGrouped == kGroupedContiguous) {
        row0 = min(max(__ldg(p.groups + cur_g), 0), p.m);
        const int end = min(max(__ldg(p.groups + cur_g + 1), row0), p.m);
        rows = end - row0;
      } else {
        row0 = cur_g * p.group_rows;
        rows = min(max(__ldg(p.groups + cur_g), 0), p.group_rows);
      }
      cur_row0 = row0;
      cur_rows = rows;
      m_groups = gemmTileGroups<int>(rows, C::kBlockM, C::kClusterM);
      cur_u0 = cur_u1;
      cur_u1 += m_groups * kNGroups;
    }
    return true;
  }

  /// This CTA's tile of unit `u`, or false past the last unit: where it
  /// lies, its K slice and slice count, and a tile id for the split-K
  /// workspace (row-major over the padded grid with split-K; the split
  /// tile's index in the tail, times the cluster size, plus the rank with
  /// a split tail).
  __device__ __forceinline__ bool decode(const GemmParams &p, int u,
                                         TileSpan &t, int &split, int &nsplit,
                                         int &tile_id) {
    int g, slot = 0, group = 0;
    if (kWalk) {
      if (!seek(p, u))
        return false;
      g = u - cur_u0;
      split = 0;
      nsplit = 1;
    } else if (u >= units) {
      return false;
    } else if (kGrouped) { // along K
      const int per = m_groups * kNGroups;
      group = u / per;
      g = u - group * per;
      split = 0;
      nsplit = 1;
    } else if (kTail) {
      if (u < tail_first) {
        g = u;
        split = 0;
        nsplit = 1;
      } else {
        slot = (u - tail_first) / tail_split;
        split = (u - tail_first) - slot * tail_split;
        g = tail_first + slot;
        nsplit = tail_split;
      }
    } else {
      g = u / C::kSplitK;
      split = u % C::kSplitK;
      nsplit = C::kSplitK;
    }
    int gm, gn;
    tile_coords<C>(g, m_groups, kNGroups, gm, gn);
    const int mb = gm * C::kClusterM + (C::kClusterM > 1 ? rank : 0);
    const int nb = gn * C::kClusterN + (C::kClusterN > 1 ? rank : 0);
    t.n0 = nb * C::kBlockN;
    t.d_shift = 0;
    t.kb_begin = t.kb_end = 0;
    if (C::kGrouped == kGroupedK) {
      const int k0 = min(max(__ldg(p.groups + group), 0), p.k);
      const int k1 = min(max(__ldg(p.groups + group + 1), k0), p.k);
      t.m0 = mb * C::kBlockM;
      t.row_end = p.m;
      t.srow0 = 0;
      t.g = group;
      t.b_row0 = 0;
      t.sa_off = 0;
      t.sb_off = 0;
      t.d_shift = group * p.m;
      t.kb_begin = k0 / 128;
      t.kb_end = (k1 + 127) / 128;
      tile_id = 0;
    } else if (kWalk) {
      t.m0 = cur_row0 + mb * C::kBlockM;
      t.row_end = cur_row0 + cur_rows;
      const bool masked = C::kGrouped == kGroupedMasked;
      t.srow0 = masked ? cur_row0 : 0;
      t.g = cur_g;
      t.b_row0 = cur_g * C::kN;
      t.sa_off = masked ? (i64)cur_g * p.sa_ld_group : 0;
      t.sb_off = (i64)cur_g * p.sb_ld_group;
      tile_id = 0;
    } else {
      t.m0 = mb * C::kBlockM;
      t.row_end = p.m;
      t.srow0 = 0;
      t.g = 0;
      t.b_row0 = 0;
      t.sa_off = 0;
      t.sb_off = 0;
      tile_id = kTail ? slot * kCS + rank : mb * kNTilesPadded + nb;
    }
    return true;
  }
};

template <class C>
__device__ __forceinline__ void split_range(int s, int n, int &begin, int &end);

/// The k-block range [begin, end) of a unit: its group's along K, else
/// slice `s` of `n` (split_range).
template <class C>
__device__ __forceinline__ void unit_range(const TileSpan &t, int s, int n,
                                           int &begin, int &end) {
  if (C::kGrouped == kGroupedK) {
    begin = t.kb_begin;
    end = t.kb_end;
    return;
  }
  split_range<C>(s, n, begin, end);
}

/// The k-block range [begin, end) of slice `s` of `n`, balanced in units of
/// whole promotion groups so that no promotion batch straddles two slices.
/// A whole tile (n == 1) takes constants. 32-bit arithmetic: a 64-bit
/// division is a subroutine call, and a call in the kernel costs 3-6% on
/// every shape, split or not (H100, docs/results/h100-2026-11-22g/).
template <class C>
__device__ __forceinline__ void split_range(int s, int n, int &begin,
                                            int &end) {
  constexpr int kBlocks = (C::kK + 127) / 128;
  constexpr int kGroupBlocks = C::kGroupBlocks;
  constexpr int kGroups = (kBlocks + kGroupBlocks - 1) / kGroupBlocks;
  static_assert(kGroups < (1 << 27), "slice bounds overflow 32 bits");
  if (n == 1) {
    begin = 0;
    end = kBlocks;
    return;
  }
  const int g0 = s * kGroups / n;
  const int g1 = (s + 1) * kGroups / n;
  begin = g0 * kGroupBlocks;
  end = min(kBlocks, g1 * kGroupBlocks);
}

} // namespace fp8k
