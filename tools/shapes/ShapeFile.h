//===- ShapeFile.h - The GEMM shape files of bench/ --------------*- C++
//-*-===//
//
// bench/shapes.json and its kind: {"dense": [{"M": .., "N": .., "K": ..}],
// "grouped_contiguous" | "grouped_masked" | "grouped_masked_decode":
// [{"groups", "M_per_group", "N", "K"}], "grouped_k": [{"groups", "M", "N",
// "K_min", "K_max"}], "roofline_h100_sxm": {"fp8_dense_tflops",
// "hbm_tb_per_s"}}. fp8-bench runs them; fp8-tune tunes them. A grouped
// entry's rows (or K) per group are drawn from a seed that follows the
// entry's place in the file, so that both tools launch, and key a tuning
// database entry at, the same problem.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_SHAPES_SHAPEFILE_H
#define FP8_TOOLS_SHAPES_SHAPEFILE_H

#include "core/KernelSpec.h"
#include "core/Status.h"
#include "runtime/GroupedGemm.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fp8 {

/// The largest M of a dense entry and the largest N and K of any entry.
inline constexpr int64_t kMaxShapeM = int64_t(1) << 20;
inline constexpr int64_t kMaxShapeNK = int64_t(1) << 17;

/// One dense GEMM, M x N x K.
struct DenseShape {
  int64_t m, n, k;
};

/// One entry of a grouped list.
struct GroupedShape {
  std::string list; ///< the shape file's list it came from
  GemmKind kind = GemmKind::GroupedContiguous;
  int64_t groups = 1, mPerGroup = 0, n = 0, k = 0;
  int64_t kMin = 0, kMax = 0; ///< grouped_k: each group's K range (M:
                              ///< mPerGroup)
  bool decode = false;        ///< judged by the bandwidth on the weights
};

/// A shape file's entries, in file order, and the roofline it states.
struct ShapeFile {
  std::vector<DenseShape> dense;
  std::vector<GroupedShape> grouped;
  double peakTflops = 1979; ///< H100 SXM dense FP8
  double tbps = 3.35;       ///< H100 SXM HBM3
};

/// Reads the shape file at `path` (a regular file of at most 1 MiB); the
/// error names the file and what was expected of it.
Expected<ShapeFile> readShapeFile(const std::string &path);

/// One grouped entry's problem as fp8-bench launches it: the
/// GroupedGemmShape's rows (contiguous: every group's; masked: each group's
/// slab; along K: M), K (along K: every group's) and the rows a masked
/// group is expected to hold, with the draws behind them.
struct GroupedDraw {
  int64_t m = 0, k = 0, expectedM = 0;
  std::vector<int32_t> rows; ///< contiguous, masked: each group's rows
  std::vector<int32_t> ks;   ///< along K: each group's K
};

/// The draw of the `index`th grouped entry of a file: rows +-30% around
/// M_per_group (at least 1), K a multiple of 128 in [K_min, K_max]; a
/// masked slab the most rows a draw can give, in whole 64-row tiles.
GroupedDraw drawGrouped(const GroupedShape &s, size_t index);

/// The grouped GEMM an entry and its draw describe: what fp8-bench launches
/// and what fp8-tune tunes and keys its database entry at.
GroupedGemmShape launchShape(const GroupedShape &s, const GroupedDraw &d);

} // namespace fp8

#endif // FP8_TOOLS_SHAPES_SHAPEFILE_H
