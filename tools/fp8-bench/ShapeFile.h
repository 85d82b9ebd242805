//===- ShapeFile.h - fp8-bench's shapes and roofline ------------*- C++ -*-===//
//
// bench/shapes.json: {"dense": [{"M": .., "N": .., "K": ..}, ...],
// "roofline_h100_sxm": {"fp8_dense_tflops": .., "hbm_tb_per_s": ..}}, the
// shapes filtered by --m and --only.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8_BENCH_SHAPEFILE_H
#define FP8_TOOLS_FP8_BENCH_SHAPEFILE_H

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/Options.h"

#include <vector>

namespace fp8::bench {

/// The shapes to run and the roofline they are held to.
struct ShapeFile {
  std::vector<Shape> shapes;
  double peakTflops = 1979; ///< H100 SXM dense FP8
  double tbps = 3.35;       ///< H100 SXM HBM3
};

/// Reads `opt.shapes` and keeps the shapes --m and --only select; prints a
/// message and exits 2 on a file that cannot be read or is malformed.
ShapeFile readShapeFile(const Options &opt);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_SHAPEFILE_H
