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

BenchReport describePlanSteps(const GpuPlan &gpu, const Plan &plan,
                              const ResolvedPlan &shapes) {
  BenchReport r;
  for (size_t j : plan.stepsOf(Phase::Run)) {
    const PlanStep &s = plan.steps[j];
    BenchStep b;
    b.step = s.name;
    b.kind = std::string(toString(s.kind));
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
      b.kernel = gpu.gemmKernel(j);
      b.scaleATma = gpu.gemmScaleATma(j);
      b.scaleBTma = gpu.gemmScaleBTma(j);
    } else {
      b.kernel = s.kernelName();
      for (const auto *names : {&s.inputs, &s.outputs})
        for (const std::string &n : *names)
          if (const PlanBuffer *buf = plan.buffer(n))
            b.bytes += bytesOf(buf->dtype, elementCount(shapes.shapes.at(n)));
    }
    r.steps.push_back(b);
  }
  return r;
}

Status timePlanSteps(GpuPlan &gpu, const Plan &plan, int iters, BenchReport &r,
                     const BenchRound &alsoEachRound) {
  r.iters = iters;
  const std::vector<size_t> runSteps = plan.stepsOf(Phase::Run);
  if (r.steps.size() != runSteps.size())
    return errorf("expected the report of describePlanSteps (", runSteps.size(),
                  " run steps), found ", r.steps.size());
  // Turns of five iterations; a failed capture is reported, not fatal (the
  // step times stand).
  constexpr int kRound = 5;
  std::vector<std::vector<double>> rows;
  std::vector<double> graphTimes;
  Status captured = errorf("not captured");
  for (int done = 0; done < iters;) {
    const int n = std::min(kRound, iters - done);
    const bool first = done == 0;
    auto times = gpu.timeRun(first ? 3 : 1, n);
    if (!times)
      return times.status();
    rows.insert(rows.end(), times->begin(), times->end());
    done += n;
    if (first) // captured once the timed runs have chosen every tile
      captured = gpu.captureRun();
    if (captured.isOk()) {
      auto graph = gpu.timeGraph(first ? 3 : 1, n);
      if (graph)
        graphTimes.insert(graphTimes.end(), graph->begin(), graph->end());
      else
        captured = graph.status();
    }
    if (alsoEachRound)
      FP8_RETURN_IF_ERROR(alsoEachRound(first ? 3 : 1, n));
  }
  if (captured.isOk() && !graphTimes.empty())
    r.graphMs = medianOf(graphTimes);
  else
    r.graphNote = captured.message();
  r.totalMs = r.stepSumMs = r.gemmMs = 0;
  for (size_t j = 0; j <= runSteps.size(); ++j) {
    std::vector<double> col;
    for (const std::vector<double> &row : rows)
      col.push_back(row[j]);
    if (j == runSteps.size()) {
      r.totalMs = medianOf(col);
      break;
    }
    BenchStep &b = r.steps[j];
    b.ms = medianOf(col);
    if (plan.steps[runSteps[j]].kind == StepKind::Gemm) {
      b.tflops = b.ms > 0 ? 2.0 * double(b.batch) * double(b.m) * double(b.n) *
                                double(b.k) / (b.ms * 1e-3) / 1e12
                          : 0;
      r.gemmMs += b.ms;
    } else {
      b.gbPerS = b.ms > 0 ? double(b.bytes) / (b.ms * 1e-3) / 1e9 : 0;
    }
    r.stepSumMs += b.ms;
  }
  return Status::ok();
}

} // namespace fp8
