//===- KernelTiming.cpp - Kernel times by CUDA events ---------------------===//

#include "runtime/KernelTiming.h"

#include <algorithm>

namespace fp8 {

Expected<std::vector<float>> timeKernel(const CudaDriver &d, CUstream stream,
                                        const KernelTiming &t,
                                        const std::function<Status()> &launch) {
  if (t.runs < 1)
    return errorf("expected at least one timed run, found ", t.runs);
  for (int w = 0; w < t.warmup; ++w)
    FP8_RETURN_IF_ERROR(launch().withContext("a warm-up launch"));
  CUevent e0 = nullptr, e1 = nullptr;
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuEventCreate(&e0, CU_EVENT_DEFAULT), "cuEventCreate"));
  Status s = cuCheck(d.cuEventCreate(&e1, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<float> ms;
  for (int i = 0; i < t.runs && s.isOk(); ++i) {
    if (t.flush && t.flushBytes)
      s = cuCheck(d.cuMemsetD8Async(t.flush, uint8_t(i), t.flushBytes, stream),
                  "cuMemsetD8Async (L2 flush)");
    if (s.isOk())
      s = cuCheck(d.cuEventRecord(e0, stream), "cuEventRecord");
    if (s.isOk())
      s = launch();
    if (s.isOk())
      s = cuCheck(d.cuEventRecord(e1, stream), "cuEventRecord");
    if (s.isOk())
      s = cuCheck(d.cuEventSynchronize(e1), "cuEventSynchronize");
    float v = 0;
    if (s.isOk())
      s = cuCheck(d.cuEventElapsedTime(&v, e0, e1), "cuEventElapsedTime");
    if (s.isOk())
      ms.push_back(v);
  }
  d.cuEventDestroy(e0);
  if (e1)
    d.cuEventDestroy(e1);
  if (!s.isOk())
    return s;
  std::sort(ms.begin(), ms.end());
  return ms;
}

Expected<std::vector<double>> timeQueued(const CudaDriver &d, CUstream stream,
                                         int warmup, int iters,
                                         const std::function<Status()> &launch,
                                         const std::function<Status()> &drain) {
  if (iters < 1)
    return errorf("expected at least one timed run, found ", iters);
  for (int w = 0; w < warmup; ++w)
    FP8_RETURN_IF_ERROR(launch().withContext("a warm-up launch"));
  std::vector<CUevent> events(size_t(iters) + 1, nullptr);
  Status s;
  for (CUevent &e : events) {
    s = cuCheck(d.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    if (!s.isOk())
      break;
  }
  if (s.isOk())
    s = cuCheck(d.cuEventRecord(events[0], stream), "cuEventRecord");
  for (int i = 0; i < iters && s.isOk(); ++i) {
    s = launch();
    if (s.isOk())
      s = cuCheck(d.cuEventRecord(events[size_t(i) + 1], stream),
                  "cuEventRecord");
  }
  if (s.isOk())
    s = drain();
  std::vector<double> ms;
  for (int i = 0; i < iters && s.isOk(); ++i) {
    float v = 0;
    s = cuCheck(
        d.cuEventElapsedTime(&v, events[size_t(i)], events[size_t(i) + 1]),
        "cuEventElapsedTime");
    ms.push_back(v);
  }
  for (CUevent e : events)
    if (e)
      d.cuEventDestroy(e);
  if (!s.isOk())
    return s;
  return ms;
}

double percentileOf(const std::vector<float> &sorted, double p) {
  if (sorted.empty())
    return 0;
  const size_t i = size_t(p * double(sorted.size()));
  return sorted[std::min(sorted.size() - 1, i)];
}

} // namespace fp8
