//===- MemoryBudget.h - Will this fit? Host and device memory ---*- C++ -*-===//
//
// Tools size what a run will hold before allocating it, and compare that
// with the memory available: a plan at M = 2^30 rows is refused with the
// numbers instead of dying in std::bad_alloc or the kernel's OOM killer.
// The comparison is a pure function (unit-tested); the host's available
// memory comes from /proc/meminfo and the cgroup's limit, the device's from
// cuMemGetInfo (runtime/CudaDriver.h, which this file does not need).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_MEMORYBUDGET_H
#define FP8_RUNTIME_MEMORYBUDGET_H

#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8 {

/// "1.5 GiB (1610612736 bytes)": a size for messages, exact in bytes.
std::string formatBytes(int64_t bytes);

/// Whether `needed` bytes fit in the `available` bytes of `where` ("host",
/// "device 0 (NVIDIA H100)"): an error "`what` needs N bytes of `where`
/// memory, X available" when they do not.
Status checkMemoryFits(std::string_view what, int64_t needed,
                       std::string_view where, int64_t available);

/// The host memory a new allocation can use: MemAvailable of /proc/meminfo,
/// lowered to what the cgroup (v2 memory.max minus memory.current) still
/// allows; nullopt when neither can be read.
std::optional<int64_t> availableHostMemory();

/// checkMemoryFits against availableHostMemory(); no check when it is
/// unknown.
Status checkHostMemory(std::string_view what, int64_t needed);

} // namespace fp8

#endif // FP8_RUNTIME_MEMORYBUDGET_H
