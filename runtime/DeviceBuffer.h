//===- DeviceBuffer.h - Owned device memory ---------------------*- C++ -*-===//
#ifndef FP8_RUNTIME_DEVICEBUFFER_H
#define FP8_RUNTIME_DEVICEBUFFER_H

#include "runtime/CudaDriver.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fp8 {

/// Compares `needed` bytes with the free memory of the runtime's device
/// (cuMemGetInfo): "`what` needs N bytes of device 0 (NAME) memory, X
/// available" when they do not fit (runtime/MemoryBudget.h). No check when
/// the driver cannot say.
Status checkDeviceMemory(std::string_view what, int64_t needed);

/// A cuMemAlloc'd buffer, freed on destruction. Move-only.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&o) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  /// Allocates `bytes` (at least 1) on the runtime's device, after checking
  /// that they fit in its free memory.
  static Expected<DeviceBuffer> alloc(size_t bytes);
  /// Allocates and uploads.
  static Expected<DeviceBuffer> fromHost(const void *data, size_t bytes);
  template <typename T>
  static Expected<DeviceBuffer> fromHost(const std::vector<T> &v) {
    return fromHost(v.data(), v.size() * sizeof(T));
  }

  Status upload(const void *data, size_t bytes);
  Status download(void *data, size_t bytes) const;
  template <typename T> Status download(std::vector<T> &v) const {
    return download(v.data(), v.size() * sizeof(T));
  }
  /// Sets every byte (synchronously).
  Status fill(unsigned char byte);

  void *get() const { return reinterpret_cast<void *>(ptr_); }
  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return bytes_; }

private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

} // namespace fp8

#endif // FP8_RUNTIME_DEVICEBUFFER_H
