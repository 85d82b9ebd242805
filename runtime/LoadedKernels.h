//===- LoadedKernels.h - Generated kernels resident on the GPU --*- C++ -*-===//
//
// The in-memory dispatch layer: a generated kernel, compiled (or found in the
// JIT cache) and loaded as a CUmodule once per process, then found by name.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_LOADEDKERNELS_H
#define FP8_RUNTIME_LOADEDKERNELS_H

#include "codegen/GeneratedKernel.h"
#include "runtime/CudaDriver.h"
#include "runtime/KernelCache.h"

#include <functional>

namespace fp8 {

/// A kernel ready to launch.
struct LoadedKernel {
  std::string name;
  CUfunction function = nullptr;
  LaunchInfo launch;
  Arch arch = Arch::SM90a;
  CubinOrigin origin = CubinOrigin::Compiled; ///< of the first load
  double jitSeconds = 0;                      ///< compile or disk-load time
  double moduleLoadSeconds = 0;
  int registers = -1, spillBytes = -1;
  int maxActiveClusters = 0; ///< clusters resident at once (cluster kernels)
};

/// Returns the loaded kernel named `name`, building it with `make` on the
/// first request (emit -> cache/NVRTC -> cuModuleLoadData). Checks that the
/// device can run the kernel's arch. Thread-safe.
Expected<const LoadedKernel *>
loadKernel(const std::string &name,
           const std::function<Expected<GeneratedKernel>()> &make);

/// Forgets every loaded kernel (modules stay loaded until exit); the next
/// request goes to the JIT cache again. For JIT timing measurements.
void forgetLoadedKernels();

} // namespace fp8

#endif // FP8_RUNTIME_LOADEDKERNELS_H
