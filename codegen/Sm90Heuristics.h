//===- Sm90Heuristics.h - sm_90a tiles without tuning -----------*- C++ -*-===//
//
// The configuration a GEMM gets when the tuning database has nothing for its
// shape: a small cost model over the legal tiles (wave quantisation across
// the SMs, tile efficiency, split-K for problems with few output tiles).
// Kept apart from the kernel generators, like DeepGEMM's heuristics/.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_SM90HEURISTICS_H
#define FP8_CODEGEN_SM90HEURISTICS_H

#include "codegen/GeneratedKernel.h"
#include "core/KernelSpec.h"

#include <string>
#include <vector>

namespace fp8 {

/// Picks a tile configuration for `spec` (its m must be known) on a GPU with
/// `smCount` SMs. The result always passes the generator's checks.
ConfigChoice selectSm90Config(const KernelSpec &spec, int smCount);

/// The widths (BLOCK_N) of 128-row sm_90a tiles whose k-block cost was
/// measured: the cost model's table, and the widths a sweep times unless
/// told otherwise.
std::vector<int> sm90MeasuredBlockNs();

/// A grid of sm_90a tiles to time, the data the cost model is fitted to
/// (fp8-bench --sweep): widths x promotion overlap x clusters x split-K.
struct Sm90TileGrid {
  std::vector<int> widths = sm90MeasuredBlockNs();
  std::vector<int> splits = {1, 2, 4, 8}; ///< split-K slices (M <= 1024)
  /// Also 2x1 and 1x2 clusters and overlap over N halves (without: 1x1
  /// clusters, no overlap or overlap over k-blocks).
  bool full = false;
};

/// The tiles of `grid` the generator accepts for `spec` (its tile is
/// replaced; its m is left as given) with `m` rows on `smCount` SMs, in
/// grid order: height, width, overlap, cluster, split. 64-row tiles (one
/// consumer warpgroup) only for m <= 64. Split-K only for m <= 1024
/// and at most 2 * smCount work units; stages as deep as fit (at most 8).
std::vector<TileConfig> sm90CandidateTiles(const KernelSpec &spec, int64_t m,
                                           int smCount,
                                           const Sm90TileGrid &grid);

} // namespace fp8

#endif // FP8_CODEGEN_SM90HEURISTICS_H
