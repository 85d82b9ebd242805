//===- LoadedKernels.cpp - Generated kernels resident on the GPU ----------===//

#include "runtime/LoadedKernels.h"
#include "core/Env.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace fp8 {

namespace {
std::mutex gMutex;
std::unordered_map<std::string, std::unique_ptr<LoadedKernel>> gKernels;

Status checkArch(const CudaDevice &dev, Arch arch, const std::string &name) {
  const int want = arch == Arch::SM90a ? 90 : 100;
  const int have = dev.ccMajor * 10 + dev.ccMinor;
  if (have != want)
    return errorf("kernel ", name, " is built for ", toString(arch),
                  " but device ", dev.ordinal, " (", dev.name,
                  ") has compute capability ", dev.ccMajor, ".", dev.ccMinor,
                  "; expected ", want / 10, ".", want % 10);
  return Status::ok();
}
} // namespace

Expected<const LoadedKernel *>
loadKernel(const std::string &name,
           const std::function<Expected<GeneratedKernel>()> &make) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (auto it = gKernels.find(name); it != gKernels.end())
    return static_cast<const LoadedKernel *>(it->second.get());

  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  auto gen = make();
  if (!gen)
    return gen.status();
  FP8_RETURN_IF_ERROR(checkArch(**dev, gen->arch, gen->name));
  if (gen->launch.sharedBytes > (*dev)->maxSharedPerBlockOptin)
    return errorf("kernel ", gen->name, " needs ", gen->launch.sharedBytes,
                  " bytes of shared memory; device ", (*dev)->name, " allows ",
                  (*dev)->maxSharedPerBlockOptin);
  auto cubin = KernelCache::global().get(*gen);
  if (!cubin)
    return cubin.status();
  const CudaDriver &d = *(*dev)->driver;
  auto t0 = std::chrono::steady_clock::now();
  CUmodule module;
  Status s = cuCheck(d.cuModuleLoadData(&module, cubin->kernel->cubin.data()),
                     "cuModuleLoadData");
  if (!s.isOk())
    return s.withContext("loading kernel " + gen->name + " (cache entry " +
                         cubin->path + ")");
  auto k = std::make_unique<LoadedKernel>();
  k->name = gen->name;
  k->launch = gen->launch;
  k->arch = gen->arch;
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuModuleGetFunction(&k->function, module, gen->name.c_str()),
              "cuModuleGetFunction"));
  FP8_RETURN_IF_ERROR(cuCheck(
      d.cuFuncSetAttribute(k->function,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           gen->launch.sharedBytes),
      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"));
  if (gen->launch.clusterX > 1) {
    CUlaunchConfig cfg{};
    cfg.gridDimX = unsigned(gen->launch.clusterX * (*dev)->smCount);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = unsigned(gen->launch.threads);
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = unsigned(gen->launch.sharedBytes);
    CUlaunchAttribute attr;
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = unsigned(gen->launch.clusterX);
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (d.cuOccupancyMaxActiveClusters(&clusters, k->function, &cfg) ==
            CUDA_SUCCESS &&
        clusters > 0)
      k->maxActiveClusters = clusters;
    else
      k->maxActiveClusters = (*dev)->smCount / gen->launch.clusterX;
  }
  k->moduleLoadSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  k->origin = cubin->origin;
  k->jitSeconds = cubin->seconds;
  k->registers = cubin->kernel->registers;
  k->spillBytes = cubin->kernel->spillBytes;
  const LoadedKernel *out = k.get();
  gKernels.emplace(name, std::move(k));
  return out;
}

void forgetLoadedKernels() {
  std::lock_guard<std::mutex> lock(gMutex);
  gKernels.clear();
}

} // namespace fp8
