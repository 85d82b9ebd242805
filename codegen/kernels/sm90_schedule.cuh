//===- sm90_schedule.cuh - Work units of the sm_90a GEMM ------*- CUDA -*-===//
//
// The persistent schedule of sm90_gemm.cuh: which output tile and which K
// slice each work unit is (tiles, cluster groups, split-K slices, the split
// tail of the last partial wave), and the k-block range of a slice. The
// producer and the consumers walk the same units in the same order.
//
// Needs the generated Cfg (kN, kK, kBlockM, kBlockN, kClusterM, kClusterN,
// kSplitK, kTailSplit, kPromoSteps, kRasterAlongN, kGroup) and
// sm90_common.cuh (tile_coords, cluster_ctarank). The unit count is
// gemmUnits (sm90_params.h), which the runtime sizes the grid with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/sm90_common.cuh"
#include "fp8/sm90_params.h"

namespace fp8k {

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
template <class C> struct Schedule {
  static constexpr int kCS = C::kClusterM * C::kClusterN;
  static constexpr int kNTiles = (C::kN + C::kBlockN - 1) / C::kBlockN;
  static constexpr int kNGroups = (kNTiles + C::kClusterN - 1) / C::kClusterN;
  static constexpr int kNTilesPadded = kNGroups * C::kClusterN;
  static constexpr bool kTail = C::kTailSplit > 1;
  int m_groups;
  int units;
  int rank;
  int tail_first; // kTail: the first split tile
  int tail_split; // kTail: its K slices (1: nothing split)

  /// M rows; the split tail's first tile and slice count (GemmParams).
  __device__ __forceinline__ Schedule(int m, int p_tail_first,
                                      int p_tail_split) {
    m_groups = gemmTileGroups<int>(m, C::kBlockM, C::kClusterM);
    const int tiles = m_groups * kNGroups;
    tail_first = tiles;
    tail_split = 1;
    if (kTail && p_tail_split > 1 && p_tail_first <= tiles) {
      tail_first = p_tail_first;
      tail_split = p_tail_split;
    }
    units =
        gemmUnits<int>(tiles, kTail ? 1 : C::kSplitK, tail_first, tail_split);
    rank = kCS > 1 ? (int)cluster_ctarank() : 0;
  }
  __device__ __forceinline__ int first() const { return blockIdx.x / kCS; }
  __device__ __forceinline__ int stride() const { return gridDim.x / kCS; }
  /// This CTA's tile of unit `u`: block coordinates, K slice and slice
  /// count, and a tile id for the split-K workspace (row-major over the
  /// padded grid with split-K; the split tile's index in the tail, times
  /// the cluster size, plus the rank with a split tail).
  __device__ __forceinline__ void decode(int u, int &mb, int &nb, int &split,
                                         int &nsplit, int &tile_id) const {
    int g, slot = 0;
    if (kTail) {
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
    mb = gm * C::kClusterM + (C::kClusterM > 1 ? rank : 0);
    nb = gn * C::kClusterN + (C::kClusterN > 1 ? rank : 0);
    tile_id = kTail ? slot * kCS + rank : mb * kNTilesPadded + nb;
  }
};

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
