//===- TensorMap.h - TMA descriptors ----------------------------*- C++ -*-===//
//
// CUtensorMap construction for 2-D row-major tensors (cuTensorMapEncodeTiled).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_TENSORMAP_H
#define FP8_RUNTIME_TENSORMAP_H

#include "core/Status.h"
#include "runtime/CudaDriver.h"

#include <cstdint>

namespace fp8 {

/// Encodes a TMA descriptor for a row-major [rows, cols] tensor of
/// `elemBytes`-byte elements with a row pitch of `rowStrideBytes`, loading
/// or storing boxes of [boxRows, boxCols] with the given swizzle span (0, 32,
/// 64 or 128 bytes). Out-of-bounds elements read as zero and are not written.
// NOTE: CUDA driver API, cuTensorMapEncodeTiled: the global address must be
// 16-byte aligned, strides multiples of 16 bytes, box extents <= 256, and
// the inner box extent times the element size must not exceed the swizzle
// span.
Expected<CUtensorMap> encodeTensorMap2D(const CudaDriver &d, const void *base,
                                        int elemBytes, uint64_t rows,
                                        uint64_t cols, uint64_t rowStrideBytes,
                                        uint32_t boxRows, uint32_t boxCols,
                                        int swizzleBytes, const char *what);

} // namespace fp8

#endif // FP8_RUNTIME_TENSORMAP_H
