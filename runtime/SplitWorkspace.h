//===- SplitWorkspace.h - Split-K scratch of the sm_90a GEMMs ---*- C++ -*-===//
//
// The f32 partial tiles and arrival counters that split-K and split-tail
// launches exchange between CTAs: one pair of buffers per stream
// (concurrent streams must not share them), grown on demand and kept for
// the process. Internal to runtime/.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_SPLITWORKSPACE_H
#define FP8_RUNTIME_SPLITWORKSPACE_H

#include "core/Status.h"
#include "runtime/CudaDriver.h"

#include <cstddef>

namespace fp8 {

struct SplitWorkspace {
  CUdeviceptr partials = 0;
  size_t partialBytes = 0;
  CUdeviceptr counters = 0;
  size_t counterBytes = 0;
};

/// The workspace of `stream` with at least these sizes. Growing it first
/// waits for the stream (earlier launches may still use the old buffers);
/// new counters are zeroed on the stream, and the kernels leave them zero.
Status splitWorkspace(const CudaDriver &d, CUstream stream, size_t partialBytes,
                      size_t counterBytes, SplitWorkspace &out);

} // namespace fp8

#endif // FP8_RUNTIME_SPLITWORKSPACE_H
