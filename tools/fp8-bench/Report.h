//===- Report.h - fp8-bench's table, summary and JSON -----------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_REPORT_H
#define FP8_TOOLS_FP8_BENCH_REPORT_H

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/Options.h"
#include "tools/fp8-bench/ShapeFile.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fp8::bench {

/// The measurements of one shape: median milliseconds of ours and of each
/// peer (0: not measured), the similarity of the block-scaled (or, with a
/// per-tensor recipe, the per-tensor) peer's result to ours.
struct Row {
  Shape s;
  double ours = 0, block = 0, tensor = 0, bf16 = 0; // ms
  double sim = -1;
  std::string kernel, peerLayout, note;
};

/// TFLOP/s of `s` done in `ms` (0 when not measured).
double tflops(const Shape &s, double ms);

/// Prints the table line of `row` and returns its JSON (with the sweep's
/// timings, `sweep`).
nlohmann::json reportRow(const Row &row, const ShapeFile &file,
                         const nlohmann::json &sweep);

/// Prints the geometric means per M and returns them as JSON.
nlohmann::json reportSummary(const std::vector<Row> &rows);

/// The JSON of --json: the run's settings, rows, summary and JIT figures.
nlohmann::json benchJson(const Options &opt, const std::string &device,
                         int smCount, const ShapeFile &file,
                         nlohmann::json rows, nlohmann::json summary,
                         nlohmann::json jit);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_REPORT_H
