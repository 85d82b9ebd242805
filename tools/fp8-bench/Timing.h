//===- Timing.h - fp8-bench's kernel timer ----------------------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_TIMING_H
#define FP8_TOOLS_FP8_BENCH_TIMING_H

#include "runtime/KernelTiming.h"
#include "tools/fp8-bench/Bench.h"

#include <cstdint>
#include <type_traits>

namespace fp8::bench {

/// The median of `iters` timed runs of `launch` after three untimed ones,
/// each after an L2 flush when `flush` (runtime/KernelTiming.h). A
/// `launch` that returns a Status has its first error end the benchmark,
/// as a driver error does; one that returns nothing keeps its own.
template <typename F>
double medianMs(const CudaDriver &d, CUstream s, int iters, bool flush,
                CUdeviceptr flushBuf, size_t flushBytes, F launch) {
  KernelTiming t;
  t.runs = iters;
  t.warmup = 3;
  if (flush) {
    t.flush = flushBuf;
    t.flushBytes = flushBytes;
  }
  Expected<std::vector<float>> ms = timeKernel(d, s, t, [&]() -> Status {
    if constexpr (std::is_same_v<decltype(launch()), Status>) {
      return launch();
    } else {
      launch();
      return Status::ok();
    }
  });
  if (!ms)
    die(ms.status(), "timing");
  return percentileOf(*ms, 0.5);
}

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_TIMING_H
