//===- PlanBench.cpp - Step times of a plan on the GPU --------------------===//

#include "runtime/plan/PlanBench.h"

#include <algorithm>

namespace fp8 {

double medianOf(std::vector<double> samples) {
  if (samples.empty())
    return 0;
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

Expected<BenchReport> benchPlanSteps(GpuPlan &gpu, const Plan &plan,
                                     const ResolvedPlan &shapes, int iters) {
  BenchReport r;
  r.iters = iters;
  auto times = gpu.timeRun(3, iters);
  if (!times)
    return times.status();
  std::vector<size_t> runSteps;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (plan.steps[i].phase == Phase::Run)
      runSteps.push_back(i);
  for (size_t j = 0; j <= runSteps.size(); ++j) {
    std::vector<double> col;
    for (const std::vector<double> &row : *times)
      col.push_back(row[j]);
    if (j == runSteps.size()) {
      r.totalMs = medianOf(col);
      break;
    }
    const PlanStep &s = plan.steps[runSteps[j]];
    BenchStep b;
    b.step = s.name;
    b.kind = std::string(toString(s.kind));
    b.ms = medianOf(col);
    if (s.kind == StepKind::Gemm) {
      const Shape &a = shapes.shapes.at(s.inputs[0]);
      const Shape &bs = shapes.shapes.at(s.inputs[2]);
      // A contiguous grouped GEMM: A [R, K] holds every group's rows (the
      // FLOPs count all R, a routing's padding rows included), B [G, N, K].
      // Along K: A [M, K] and B [N, K] hold every group's K (counted in
      // full).
      const size_t lead = a.size() == 3 ? 1 : 0;
      const size_t leadB = bs.size() == 3 ? 1 : 0;
      b.batch = s.batch;
      b.m = a[lead];
      b.k = a[lead + 1];
      b.n = bs[leadB];
      b.gemmKind = s.gemm.kind;
      // Masked: G slabs of maxM rows (the FLOPs count every row).
      if (s.gemm.kind == GemmKind::GroupedMasked)
        b.batch = a[0];
      b.kernel = gpu.gemmKernel(runSteps[j]);
      b.scaleATma = gpu.gemmScaleATma(runSteps[j]);
      b.scaleBTma = gpu.gemmScaleBTma(runSteps[j]);
      b.tflops = b.ms > 0 ? 2.0 * double(b.batch) * double(b.m) * double(b.n) *
                                double(b.k) / (b.ms * 1e-3) / 1e12
                          : 0;
      r.gemmMs += b.ms;
    } else {
      b.kernel = s.kernelName();
      for (const auto *names : {&s.inputs, &s.outputs})
        for (const std::string &n : *names)
          if (const PlanBuffer *buf = plan.buffer(n))
            b.bytes += bytesOf(buf->dtype, elementCount(shapes.shapes.at(n)));
      b.gbPerS = b.ms > 0 ? double(b.bytes) / (b.ms * 1e-3) / 1e9 : 0;
    }
    r.stepSumMs += b.ms;
    r.steps.push_back(b);
  }
  // The same run as one CUDA graph; a failed capture is reported, not
  // fatal (the step times stand).
  Status captured = gpu.captureRun();
  auto graph =
      captured.isOk() ? gpu.timeGraph(3, iters) : Expected<double>(captured);
  if (graph)
    r.graphMs = *graph;
  else
    r.graphNote = graph.status().message();
  return r;
}

} // namespace fp8
