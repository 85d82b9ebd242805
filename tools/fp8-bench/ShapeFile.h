//===- ShapeFile.h - fp8-bench's shapes -------------------------*- C++ -*-===//
//
// The shape file (tools/shapes/ShapeFile.h says what it holds), its dense
// shapes filtered by --m and --only.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8_BENCH_SHAPEFILE_H
#define FP8_TOOLS_FP8_BENCH_SHAPEFILE_H

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/Options.h"

namespace fp8::bench {

/// Reads `opt.shapes` and keeps the dense shapes --m and --only select, and
/// every grouped shape; prints a message and exits 2 on a file that cannot
/// be read or is malformed.
ShapeFile readShapeFile(const Options &opt);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_SHAPEFILE_H
