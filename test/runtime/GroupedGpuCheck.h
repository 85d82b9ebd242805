//===- GroupedGpuCheck.h - A grouped GEMM case vs the oracle ----*- C++ -*-===//
#ifndef FP8_TEST_RUNTIME_GROUPEDGPUCHECK_H
#define FP8_TEST_RUNTIME_GROUPEDGPUCHECK_H

#include "runtime/GroupedGemm.h"

#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// A grouped GEMM to run on the GPU and check.
struct GroupedGpuCase {
  GemmRecipe recipe;
  GemmKind kind = GemmKind::GroupedContiguous;
  /// Contiguous: each group's row count (A's rows are their sum plus
  /// `trailingRows`). Masked: each group's valid rows. Along K: each
  /// group's K (multiples of 128).
  std::vector<int32_t> rows;
  int64_t maxM = 0; ///< masked: rows of each group's slab
  int64_t m = 0;    ///< along K: rows of A and of each group's D
  /// Along K: D = A * B^T + C in place (C random, f32, in D's buffer).
  bool accumulate = false;
  int64_t trailingRows = 0; ///< contiguous: rows of A in no group
  int64_t n = 0, k = 0;
  int64_t expectedM = 0; ///< masked: the tile's hint
  std::optional<TileConfig> tile;
  /// Store A's scales [K blocks][rows] (the layout whose K scales come by
  /// TMA) instead of [rows][K blocks].
  bool aScalesOuterContiguous = false;
  uint64_t seed = 1;
};

/// What the check found.
struct GroupedGpuCaseResult {
  bool passed = false;
  std::string kernel;
  double relErr = 0;        ///< max |d - ref| / max |ref| over group rows
  int64_t untouchedBad = 0; ///< rows outside every group that were written
  int64_t nonFinite = 0;    ///< non-finite outputs in group rows
  std::string summary;
};

/// "contiguous G=4 rows [0,1,129,300] x 256 x 512 ..." for messages.
std::string describe(const GroupedGpuCase &c);

/// Quantizes random data with the oracle, runs fp8::groupedGemm, compares
/// every group row with groupedReferenceGemm (tolerance as GpuCheck.h:
/// 8e-3 for bf16, 2e-3 for f32) and checks that D's rows outside every
/// group keep their NaN poison. Errors are setup or launch failures.
Expected<GroupedGpuCaseResult> runGroupedGpuCase(const GroupedGpuCase &c);

} // namespace fp8

#endif // FP8_TEST_RUNTIME_GROUPEDGPUCHECK_H
