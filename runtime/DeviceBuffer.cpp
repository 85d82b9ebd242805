//===- DeviceBuffer.cpp - Owned device memory -----------------------------===//

#include "runtime/DeviceBuffer.h"

#include "runtime/MemoryBudget.h"

#include <algorithm>
#include <utility>

namespace fp8 {

Status checkDeviceMemory(std::string_view what, int64_t needed) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  size_t freeBytes = 0, totalBytes = 0;
  if ((*dev)->driver->cuMemGetInfo(&freeBytes, &totalBytes) != CUDA_SUCCESS)
    return Status::ok();
  const std::string where =
      "device " + std::to_string((*dev)->ordinal) + " (" + (*dev)->name + ")";
  return checkMemoryFits(what, needed, where,
                         int64_t(std::min<size_t>(freeBytes, INT64_MAX)));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    auto dev = CudaDevice::get();
    if (dev)
      (*dev)->driver->cuMemFree(ptr_);
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    DeviceBuffer tmp(std::move(*this));
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

Expected<DeviceBuffer> DeviceBuffer::alloc(size_t bytes) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  FP8_RETURN_IF_ERROR(checkDeviceMemory(
      "a device buffer", int64_t(std::min<size_t>(bytes, INT64_MAX))));
  DeviceBuffer b;
  FP8_RETURN_IF_ERROR(cuCheck(
      (*dev)->driver->cuMemAlloc(&b.ptr_, bytes ? bytes : 1), "cuMemAlloc"));
  b.bytes_ = bytes;
  return b;
}

Expected<DeviceBuffer> DeviceBuffer::fromHost(const void *data, size_t bytes) {
  auto b = alloc(bytes);
  if (!b)
    return b;
  FP8_RETURN_IF_ERROR(b->upload(data, bytes));
  return b;
}

Status DeviceBuffer::upload(const void *data, size_t bytes) {
  if (bytes > bytes_)
    return errorf("upload of ", bytes, " bytes into a buffer of ", bytes_);
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  return cuCheck((*dev)->driver->cuMemcpyHtoD(ptr_, data, bytes),
                 "cuMemcpyHtoD");
}

Status DeviceBuffer::download(void *data, size_t bytes) const {
  if (bytes > bytes_)
    return errorf("download of ", bytes, " bytes from a buffer of ", bytes_);
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  return cuCheck((*dev)->driver->cuMemcpyDtoH(data, ptr_, bytes),
                 "cuMemcpyDtoH");
}

Status DeviceBuffer::fill(unsigned char byte) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  return cuCheck((*dev)->driver->cuMemsetD8(ptr_, byte, bytes_), "cuMemsetD8");
}

} // namespace fp8
