//===- ElementwiseLaunch.cpp - Launching quantize and elementwise kernels -===//

#include "runtime/ElementwiseLaunch.h"

#include "runtime/CudaDriver.h"
#include "runtime/LoadedKernels.h"

namespace fp8 {

Status launchElementwise(const ElementwiseSpec &spec,
                         const std::vector<ElementwiseEntryLaunch> &launches,
                         const fp8k::EwParams &p, CUstream stream,
                         bool afterPriorKernel) {
  auto drv = CudaDriver::get();
  if (!drv)
    return drv.status();
  fp8k::EwParams param = p;
  // A step's second and later kernels start while the one before runs
  // (programmatic dependent launch): each entry point waits for its
  // predecessor before touching memory (fp8k::after_prior_grid), so their
  // launches and table fills overlap its tail. The first kernel keeps the
  // stream's full order with whatever precedes the step, unless the caller
  // allows it (a plan's steps, all built to wait).
  CUlaunchAttribute overlap{};
  overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  overlap.value.programmaticStreamSerializationAllowed = 1;
  for (const ElementwiseEntryLaunch &l : launches) {
    auto k = loadKernel(l.kernel, [&]() -> Expected<GeneratedKernel> {
      auto ks = emitElementwise(spec);
      if (!ks)
        return ks.status();
      return (*ks)[l.entry];
    });
    if (!k)
      return k.status();
    CUlaunchConfig cfg{};
    cfg.gridDimX = l.launch.grid[0];
    cfg.gridDimY = l.launch.grid[1];
    cfg.gridDimZ = l.launch.grid[2];
    cfg.blockDimX = l.launch.block[0];
    cfg.blockDimY = l.launch.block[1];
    cfg.blockDimZ = l.launch.block[2];
    cfg.sharedMemBytes = unsigned((*k)->launch.sharedBytes);
    cfg.hStream = stream;
    // A kernel that waits grid-wide inside needs every CTA resident at
    // once, which a cooperative launch guarantees (or refuses).
    CUlaunchAttribute attrs[2];
    unsigned n = 0;
    if (&l != &launches.front() || afterPriorKernel)
      attrs[n++] = overlap;
    if ((*k)->launch.gridSync) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      attrs[n++].value.cooperative = 1;
    }
    cfg.attrs = n ? attrs : nullptr;
    cfg.numAttrs = n;
    void *args[] = {&param};
    Status ls =
        cuCheck((*drv)->cuLaunchKernelEx(&cfg, (*k)->function, args, nullptr),
                "cuLaunchKernelEx");
    if (!ls.isOk())
      return ls.withContext("kernel " + l.kernel);
  }
  return Status::ok();
}

} // namespace fp8
