//===- MemoryBound.h - fp8-bench's memory-bound section ---------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_MEMORYBOUND_H
#define FP8_TOOLS_FP8_BENCH_MEMORYBOUND_H

#include "tools/fp8-bench/Measure.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fp8::bench {

/// One memory-bound step measured: its time, bytes (its buffers) and rate,
/// and whether its outputs equal the CPU oracle's bit for bit.
struct MemoryBoundRow {
  std::string name, kernel;
  double ms = 0, gbPerS = 0;
  int64_t bytes = 0;
  bool identical = false;
};

/// fp8-bench --memory-bound: every quantize form, the FP8 transpose and an
/// elementwise add on one [rows, cols] tensor, each checked against the
/// oracle, then timed; prints the table, returns it as JSON ("failures":
/// steps that failed or differ from the oracle).
nlohmann::json runMemoryBound(const Context &ctx);

/// The names of the steps runMemoryBound measures, in its order.
std::vector<std::string> memoryBoundSteps();

/// Whether --memory-only's `text` selects the step `name`: part of it,
/// ignoring case ("MX" and "swiglu" select "quantize mx (1x32 ue8m0)" and
/// "SwiGLU + quantize 1x128").
bool memoryStepSelected(const std::string &name, const std::string &text);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_MEMORYBOUND_H
