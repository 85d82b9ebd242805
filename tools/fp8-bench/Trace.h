//===- Trace.h - fp8-bench --trace: a kernel's timeline ---------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_TRACE_H
#define FP8_TOOLS_FP8_BENCH_TRACE_H

#include <cstdint>
#include <vector>

namespace fp8::bench {

/// Prints the medians of a GemmReport::trace (FP8_KERNEL_TRACE): per
/// k-block intervals of the consumer warpgroups and of the producer, in SM
/// clocks, over every traced CTA.
void printTrace(const std::vector<uint32_t> &trace);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_TRACE_H
