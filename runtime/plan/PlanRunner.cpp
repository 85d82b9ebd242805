//===- PlanRunner.cpp - Running a plan on the CPU oracle ------------------===//

#include "runtime/plan/PlanRunner.h"

#include "runtime/MemoryBudget.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/stat.h>

namespace fp8 {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// Writes the inputs and weights to `dir`.
Status saveInputs(const Plan &plan, const HostBuffers &host,
                  const std::string &dir) {
  FP8_RETURN_IF_ERROR(makeDirectory(dir));
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Input || b.role == BufferRole::Weight)
      FP8_RETURN_IF_ERROR(writeTensorNpy(dir, b.name, host.at(b.name)));
  return Status::ok();
}
} // namespace

int verifyIterations(const Plan &plan) {
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::State)
      return 3;
  return 1;
}

Status checkRunMemory(const Plan &plan, const ResolvedPlan &shapes,
                      const DimValues &dims, RunOn where, bool verify) {
  const std::string what =
      where == RunOn::Cpu
          ? "running the plan on the CPU oracle (dims " + formatDims(dims) + ")"
          : "staging the plan's buffers on the host (dims " + formatDims(dims) +
                ")";
  Status s = checkHostMemory(what, hostRunBytes(plan, shapes, where, verify));
  return s.withContext("cannot run the plan");
}

Expected<HostBuffers> preparePlanInputs(const Plan &plan,
                                        const ResolvedPlan &shapes,
                                        const PlanInputOptions &options) {
  HostBuffers host = allocateHostBuffers(plan, shapes);
  if (Status s = fillInputs(plan, host, options.inputs); !s)
    return s.withContext("cannot read the inputs");
  if (!options.saveInputs.empty())
    if (Status s = saveInputs(plan, host, options.saveInputs); !s)
      return s.withContext("cannot save the inputs");
  return host;
}

Expected<CpuPlanRun> runPlanOnCpuOracle(const Plan &plan,
                                        const ResolvedPlan &shapes,
                                        const DimValues &dims,
                                        const PlanInputOptions &options,
                                        bool verify) {
  FP8_RETURN_IF_ERROR(checkRunMemory(plan, shapes, dims, RunOn::Cpu, verify));
  Expected<HostBuffers> host = preparePlanInputs(plan, shapes, options);
  if (!host)
    return host.status();
  CpuPlanRun run;
  run.inputs = *host;
  run.values = std::move(*host);
  run.iterations = verify ? verifyIterations(plan) : 1;
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = runPlanOnCpu(plan, run.values, run.iterations); !s)
    return s.withContext("the CPU run failed");
  run.seconds = secondsSince(t0);
  return run;
}

Status makeDirectory(const std::string &dir) {
  if (::mkdir(dir.c_str(), 0755) == 0)
    return Status::ok();
  const int err = errno;
  struct stat st;
  if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::ok();
  if (err == EEXIST)
    return errorf("expected '", dir, "' to be a directory, found a file");
  return errorf("cannot create the directory '", dir,
                "': ", std::strerror(err));
}

Expected<std::string> writePlanOutputs(const Plan &plan,
                                       const HostBuffers &values,
                                       const std::string &dir) {
  if (Status s = makeDirectory(dir); !s)
    return s.withContext("cannot write the outputs");
  std::string names;
  for (const std::string &n : plan.outputs) {
    if (Status s = writeTensorNpy(dir, n, values.at(n)); !s)
      return s.withContext("cannot write the outputs");
    names += (names.empty() ? "" : ", ") + n + ".npy";
  }
  return names;
}

} // namespace fp8
