//===- ShapeFile.h - fp8-bench's shapes and roofline ------------*- C++ -*-===//
//
// bench/shapes.json: {"dense": [{"M": .., "N": .., "K": ..}, ...],
// "roofline_h100_sxm": {"fp8_dense_tflops": .., "hbm_tb_per_s": ..}}, the
// shapes filtered by --m and --only; and the grouped lists of fp8-bench
// --grouped (tools/fp8-bench/Grouped.h says what they hold).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8_BENCH_SHAPEFILE_H
#define FP8_TOOLS_FP8_BENCH_SHAPEFILE_H

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/Options.h"

#include "core/KernelSpec.h"

#include <vector>

namespace fp8::bench {

/// One grouped shape of the shape file.
struct GroupedShape {
  std::string list; ///< the shape file's list it came from
  GemmKind kind = GemmKind::GroupedContiguous;
  int64_t groups = 1, mPerGroup = 0, n = 0, k = 0;
  int64_t kMin = 0, kMax = 0; ///< grouped_k: each group's K range (M:
                              ///< mPerGroup)
  bool decode = false;        ///< judged by the bandwidth on the weights
};

/// The shapes to run and the roofline they are held to.
struct ShapeFile {
  std::vector<Shape> shapes;
  /// The grouped lists (fp8-bench --grouped), in file order.
  std::vector<GroupedShape> grouped;
  double peakTflops = 1979; ///< H100 SXM dense FP8
  double tbps = 3.35;       ///< H100 SXM HBM3
};

/// Reads `opt.shapes` and keeps the dense shapes --m and --only select, and
/// every grouped shape; prints a message and exits 2 on a file that cannot
/// be read or is malformed.
ShapeFile readShapeFile(const Options &opt);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_SHAPEFILE_H
