//===- Timing.h - fp8-bench's kernel timer ----------------------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_TIMING_H
#define FP8_TOOLS_FP8_BENCH_TIMING_H

#include "runtime/CudaDriver.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fp8::bench {

/// Times `launch` with events: median over `iters` runs, each after an L2
/// flush (a 256 MiB memset, outside the timed region).
template <typename F>
double medianMs(const CudaDriver &d, CUstream s, int iters, bool flush,
                CUdeviceptr flushBuf, size_t flushBytes, F launch) {
  CUevent e0, e1;
  d.cuEventCreate(&e0, CU_EVENT_DEFAULT);
  d.cuEventCreate(&e1, CU_EVENT_DEFAULT);
  for (int i = 0; i < 3; ++i)
    launch();
  std::vector<float> ms;
  for (int i = 0; i < iters; ++i) {
    if (flush)
      d.cuMemsetD8Async(flushBuf, uint8_t(i), flushBytes, s);
    d.cuEventRecord(e0, s);
    launch();
    d.cuEventRecord(e1, s);
    d.cuEventSynchronize(e1);
    float t = 0;
    d.cuEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  d.cuEventDestroy(e0);
  d.cuEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_TIMING_H
