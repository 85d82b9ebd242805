//===- PlanGpuRunner.cpp - Running a plan on the GPU ----------------------===//

#include "runtime/plan/PlanGpuRunner.h"

#include <chrono>

namespace fp8 {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}
} // namespace

Expected<std::unique_ptr<GpuPlan>>
setUpGpuPlan(const Plan &plan, const ResolvedPlan &shapes,
             const DimValues &dims, const PlanInputOptions &options,
             bool verify, HostBuffers &host) {
  FP8_RETURN_IF_ERROR(checkRunMemory(plan, shapes, dims, RunOn::Gpu, verify));
  auto gpu = GpuPlan::create(plan, shapes);
  if (!gpu)
    return Status(gpu.status())
        .withContext("cannot set up the plan on the GPU");
  Expected<HostBuffers> inputs = preparePlanInputs(plan, shapes, options);
  if (!inputs)
    return inputs.status();
  host = std::move(*inputs);
  if (Status s = (*gpu)->upload(host); !s)
    return s.withContext("cannot upload the inputs");
  return std::move(*gpu);
}

std::vector<ScaleMirrorUse> scaleMirrorUses(const GpuPlan &gpu,
                                            const Plan &plan) {
  const ScaleMirrorPlan &mp = gpu.scaleMirrors();
  std::vector<ScaleMirrorUse> uses;
  for (size_t mi = 0; mi < mp.mirrors.size(); ++mi) {
    const ScaleMirror &m = mp.mirrors[mi];
    ScaleMirrorUse u;
    u.scales = m.scales;
    u.writer = plan.steps[m.writer].name;
    u.isA = m.transposed();
    for (size_t i = 0; i < plan.steps.size(); ++i)
      if (scaleSource(mp, i, u.isA).mirror == int(mi))
        u.readers += (u.readers.empty() ? "" : ", ") + plan.steps[i].name;
    u.outer = m.outer();
    u.pitch = m.pitch();
    uses.push_back(u);
  }
  return uses;
}

Expected<double> runPrepareSteps(GpuPlan &gpu) {
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = gpu.run(Phase::Prepare, true); !s)
    return s.withContext("a prepare step failed");
  return secondsSince(t0);
}

Status runIterations(GpuPlan &gpu, const Plan &plan, int iterations,
                     HostBuffers &statesBefore,
                     const std::function<void(int, double)> &onRun) {
  for (int it = 0; it < iterations; ++it) {
    if (it + 1 == iterations)
      for (const PlanBuffer &b : plan.buffers)
        if (b.role == BufferRole::State) {
          HostTensor t;
          if (Status s = gpu.download(b.name, t); !s)
            return s.withContext("cannot read a state");
          statesBefore[b.name] = std::move(t);
        }
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = gpu.run(Phase::Run, true); !s)
      return s.withContext("a step failed");
    onRun(it, secondsSince(t0));
  }
  return Status::ok();
}

Expected<HostBuffers> readResults(const GpuPlan &gpu, const Plan &plan,
                                  bool all) {
  HostBuffers values;
  for (const PlanBuffer &b : plan.buffers) {
    if (!all && b.role != BufferRole::Output)
      continue;
    HostTensor t;
    if (Status s = gpu.download(b.name, t); !s)
      return s.withContext("cannot read the results");
    values[b.name] = std::move(t);
  }
  return values;
}

} // namespace fp8
