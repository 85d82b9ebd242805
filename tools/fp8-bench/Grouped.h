//===- Grouped.h - fp8-bench's grouped (MoE) section ------------*- C++ -*-===//
//
// fp8-bench --grouped: the grouped GEMMs of the shape file's
// "grouped_contiguous", "grouped_masked" and "grouped_masked_decode" lists
// ({"groups": G, "M_per_group": M, "N": N, "K": K}), each group's rows drawn
// +-30% around M with a fixed seed, and of "grouped_k" ({"groups": G, "M":
// M, "N": N, "K_min": lo, "K_max": hi}: the weight gradients, each group's K
// drawn in [lo, hi] in multiples of 128; GroupedK.cpp). Our one launch
// (fp8::groupedGemm) is timed against what a user would otherwise write: a
// loop of cuBLASLt block-scaled GEMMs, one per group, on the same data (each
// group's rows padded to a multiple of 16 where cuBLASLt refuses the exact
// count). TFLOP/s count the valid rows only; decode rows also report the
// bandwidth on the weight bytes (every expert's B is read once).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8_BENCH_GROUPED_H
#define FP8_TOOLS_FP8_BENCH_GROUPED_H

#include "tools/fp8-bench/Measure.h"
#include "tools/fp8-bench/ShapeFile.h"

#include "runtime/GroupedGemm.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fp8::bench {

/// 1 - the similarity of two bf16 vectors (1 when either holds a
/// non-finite value), as fp8-bench's rows report it.
double bf16Difference(const uint16_t *a, const uint16_t *b, size_t count);

/// One grouped_k row (GroupedK.cpp), of the file's `index`th grouped entry.
nlohmann::json measureAlongK(Context &ctx, const ShapeFile &file,
                             const GroupedShape &s, size_t index);

/// Times our one launch of `shape` (a first call compiles the kernel and
/// checks the extents; the timed calls skip that check): the row's kernel,
/// tile, grid, ms, TFLOP/s of `flops` and % of the roofline; `ms` too.
nlohmann::json timeOurs(Context &ctx, const ShapeFile &file,
                        const GroupedGemmShape &shape,
                        const GroupedGemmTensors &t, double flops, double &ms);

/// Measures every grouped shape of `file`, prints a table, returns the JSON
/// rows and a summary (geomeans per list).
nlohmann::json runGrouped(Context &ctx, const ShapeFile &file);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_GROUPED_H
