//===- CudaDriver.h - The CUDA driver API, loaded at first use --*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen the first time a GPU is needed, so every
// tool starts (and compiles kernels) on a machine without a GPU, where the
// first GPU call reports "no CUDA driver found" instead of a loader failure.
// Entry points are resolved with cuGetProcAddress, which returns the ABI
// version matching the cuda.h we compiled against (cuMemAlloc -> _v2, ...).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_CUDADRIVER_H
#define FP8_RUNTIME_CUDADRIVER_H

#include "core/Status.h"

#include <cuda.h>

#include <string>

namespace fp8 {

// X-macro of the driver entry points the runtime uses.
#define FP8_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncGetAttribute)                                                        \
  X(cuLaunchKernelEx)                                                          \
  X(cuOccupancyMaxActiveClusters)                                              \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyDtoD)                                                              \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemsetD8)                                                                \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD32Async)                                                          \
  X(cuPointerGetAttribute)                                                     \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuEventElapsedTime)                                                        \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuStreamIsCapturing)                                                       \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)

/// The driver's function table.
struct CudaDriver {
#define FP8_DECLARE_FN(name) decltype(&::name) name = nullptr;
  FP8_CUDA_DRIVER_FUNCTIONS(FP8_DECLARE_FN)
#undef FP8_DECLARE_FN

  /// Loads libcuda.so.1 once and calls cuInit; later calls return the same
  /// table or the same error ("no CUDA driver found ..." on a GPU-less host).
  static Expected<const CudaDriver *> get();
};

/// Turns a CUresult into a Status naming the call.
Status cuCheck(CUresult r, const char *what);

/// The device the runtime uses (FP8_DEVICE, default 0), its primary context
/// made current on the calling thread.
struct CudaDevice {
  const CudaDriver *driver = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int ordinal = 0;
  int smCount = 0;
  int ccMajor = 0, ccMinor = 0;
  int maxSharedPerBlockOptin = 0;
  std::string name;

  /// Initializes once; makes the context current on every call.
  static Expected<const CudaDevice *> get();
};

/// Waits for the work queued on `stream` so far, polling for at most
/// `timeoutSeconds`. A kernel that has not finished by then is reported as
/// probably deadlocked (with the hint to rerun under FP8_KERNEL_DEBUG=1)
/// instead of hanging the process; a kernel error is returned as such.
Status waitStream(CUstream stream, double timeoutSeconds,
                  const std::string &what);

} // namespace fp8

#endif // FP8_RUNTIME_CUDADRIVER_H
