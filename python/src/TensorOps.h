//===- TensorOps.h - What the tensor bindings share -------------*- C++ -*-===//
//
// The checks and conversions that the GEMM bindings (TensorOps.cpp: gemm;
// GroupedOps.cpp: grouped_gemm) both apply to their arguments.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PYTHON_TENSOROPS_H
#define FP8_PYTHON_TENSOROPS_H

#include "python/src/Arrays.h"

#include "runtime/CudaDriver.h"
#include "runtime/Gemm.h"

#include <cstdint>

namespace fp8::python {

/// The runtime's device, which the CUDA array `a` must be on; RuntimeError
/// naming `fn` where there is no GPU.
const CudaDevice &expectRuntimeDevice(const Array &a, const char *fn);

/// The CUDA stream a binding was given as an integer.
CUstream toStream(uintptr_t stream);

/// The element type of a granularity's scales (f32 or UE8M0).
DType scaleTypeOf(const Granularity &g);

/// A GEMM operand's scales over [rows, cols]: the shape of its granularity,
/// any non-negative strides; a per-tensor scale may be 0-d. Gives the
/// strides as the runtime takes them (GemmTensors::scaleALdOuter, ...).
void readScales(const Array &s, const Array &ref, const Granularity &g,
                int64_t rows, int64_t cols, int64_t &ldOuter, int64_t &ldK);

/// The runtime's recipe of a Python Recipe: K-major operands (the codes as
/// fp8kit.quantize writes them), accumulating into C when one is given.
GemmRecipe gemmRecipeOf(const MatmulRecipe &mr, bool accumulate);

} // namespace fp8::python

#endif // FP8_PYTHON_TENSOROPS_H
