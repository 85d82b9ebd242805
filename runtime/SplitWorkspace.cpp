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
  // Replaces `buf` by one of `bytes` (nothing held if that fails).
  auto regrow = [&](CUdeviceptr &buf, size_t &held, size_t bytes,
                    const char *what) {
    if (buf)
      d.cuMemFree(buf);
    buf = 0;
    held = 0;
    FP8_RETURN_IF_ERROR(cuCheck(d.cuMemAlloc(&buf, bytes), what));
    held = bytes;
    return Status::ok();
  };
  if (w.partialBytes < partialBytes)
    FP8_RETURN_IF_ERROR(regrow(w.partials, w.partialBytes, partialBytes,
                               "cuMemAlloc(split-K workspace)"));
  if (w.counterBytes < counterBytes) {
    FP8_RETURN_IF_ERROR(regrow(w.counters, w.counterBytes, counterBytes,
                               "cuMemAlloc(split-K counters)"));
    // Zeroed on the launch's own stream (a non-blocking stream would not
    // wait for the legacy stream); the kernel leaves every counter at zero
    // when it finishes.
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuMemsetD8Async(w.counters, 0, counterBytes, stream),
                "cuMemsetD8Async(split-K counters)"));
  }
  out = w;
  return Status::ok();
}

} // namespace fp8
