//===- SplitWorkspace.cpp - Split-K scratch of the sm_90a GEMMs -----------===//

#include "runtime/SplitWorkspace.h"

#include <mutex>
#include <unordered_map>

namespace fp8 {

namespace {
std::mutex gWorkspaceMutex;
std::unordered_map<CUstream, SplitWorkspace> gWorkspaces;
} // namespace

Status splitWorkspace(const CudaDriver &d, CUstream stream, size_t partialBytes,
                      size_t counterBytes, SplitWorkspace &out) {
  std::lock_guard<std::mutex> lock(gWorkspaceMutex);
  SplitWorkspace &w = gWorkspaces[stream];
  const bool grow =
      w.partialBytes < partialBytes || w.counterBytes < counterBytes;
  // Earlier launches on this stream may still use the old buffers.
  if (grow && (w.partials || w.counters))
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuStreamSynchronize(stream), "cuStreamSynchronize"));
  if (w.partialBytes < partialBytes) {
    if (w.partials)
      d.cuMemFree(w.partials);
    w.partials = 0;
    w.partialBytes = 0;
    FP8_RETURN_IF_ERROR(cuCheck(d.cuMemAlloc(&w.partials, partialBytes),
                                "cuMemAlloc(split-K workspace)"));
    w.partialBytes = partialBytes;
  }
  if (w.counterBytes < counterBytes) {
    if (w.counters)
      d.cuMemFree(w.counters);
    w.counters = 0;
    w.counterBytes = 0;
    FP8_RETURN_IF_ERROR(cuCheck(d.cuMemAlloc(&w.counters, counterBytes),
                                "cuMemAlloc(split-K counters)"));
    // Zeroed on the launch's own stream (a non-blocking stream would not
    // wait for the legacy stream); the kernel leaves every counter at zero
    // when it finishes.
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuMemsetD8Async(w.counters, 0, counterBytes, stream),
                "cuMemsetD8Async(split-K counters)"));
    w.counterBytes = counterBytes;
  }
  out = w;
  return Status::ok();
}

} // namespace fp8
