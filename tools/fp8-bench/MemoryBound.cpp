//===- MemoryBound.cpp - fp8-bench's memory-bound section -----------------===//
//
// Every quantize form, the FP8 transpose and an elementwise add, each on
// one [rows, cols] tensor (default 8192 x 8192: 128 MiB of bf16, over twice
// the H100's L2), each the one step of a plan run by the plan executor (the
// very kernels and launches a plan makes). Before it is timed, a step's
// outputs are compared bit for bit with the CPU oracle's (runStepOnCpu).
// Time: CUDA events around the step, L2 flushed before every launch, median
// of --iters. A step's bytes are its buffers' (what a step at the limit
// moves once); the rate is against the target's DRAM bandwidth and the
// issue's bar of 80%.
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-bench/MemoryBound.h"

#include "core/RecipeRules.h"
#include "core/Target.h"
#include "numerics/DelayedScaling.h"
#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanOracle.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace fp8::bench {

namespace {
using A = EwArg;

EwProgram addProgram() {
  EwProgram p;
  p.inputs = {DType::BF16, DType::BF16};
  p.instrs = {{EwOp::Add, {A::input(0), A::input(1)}, DType::BF16}};
  p.result = A::result(0);
  return p;
}

/// RMSNorm over rows of `cols`, the quantize summing the rows itself
/// (ElementwiseSpec::rowSum).
ElementwiseSpec rmsnormQuantize(int64_t cols) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = rmsnormProgram(1.0f / float(cols), 1e-5f);
  s.rowSum = sumOfSquaresProgram();
  s.quant.format = DType::E4M3FN;
  s.quant.granularity = Granularity::block(1, 128);
  return s;
}

/// One measured form: the step's kind and spec.
struct Form {
  std::string name;
  StepKind kind;
  ElementwiseSpec spec;
  /// Delayed scaling: the history starts full (as in a run past its first
  /// historyLength steps) rather than empty.
  bool fullHistory = false;
};

ElementwiseSpec quantize(EwProgram p, Granularity g,
                         ScalingMode mode = ScalingMode::Current,
                         int64_t history = 16) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = std::move(p);
  s.quant.format = DType::E4M3FN;
  s.quant.granularity = g;
  s.quant.mode = mode;
  if (mode == ScalingMode::Delayed)
    s.quant.delayed.historyLength = history;
  return s;
}

/// Per-tensor current scaling whose amax is an input (ElementwiseSpec::
/// amaxIn).
ElementwiseSpec quantizeWithAmax(EwProgram p) {
  ElementwiseSpec s = quantize(std::move(p), Granularity::perTensor());
  s.amaxIn = true;
  return s;
}

std::vector<Form> forms(int64_t cols) {
  const EwProgram x = EwProgram::identity(DType::BF16);
  std::vector<Form> out = {
      {"quantize 1x128", StepKind::Quantize,
       quantize(x, Granularity::block(1, 128))},
      {"quantize per-row", StepKind::Quantize,
       quantize(x, Granularity::perRow())},
      {"quantize mx (1x32 ue8m0)", StepKind::Quantize,
       quantize(x, Granularity::mx())},
      {"quantize 128x1", StepKind::Quantize,
       quantize(x, Granularity::block(128, 1))},
      {"quantize 128x128", StepKind::Quantize,
       quantize(x, Granularity::block(128, 128))},
      {"quantize per-tensor", StepKind::Quantize,
       quantize(x, Granularity::perTensor())},
      // The amax given, as a GEMM's epilogue writes it (KernelSpec::
      // amaxOut): the codes pass alone, one read of x.
      {"quantize per-tensor, amax given", StepKind::Quantize,
       quantizeWithAmax(x)},
      {"quantize per-tensor delayed", StepKind::Quantize,
       quantize(x, Granularity::perTensor(), ScalingMode::Delayed)},
      // Transformer Engine's default history, full: every step reduces
      // 1024 recorded amaxes for its prediction.
      {"quantize per-tensor delayed, full history of 1024", StepKind::Quantize,
       quantize(x, Granularity::perTensor(), ScalingMode::Delayed, 1024), true},
      {"SwiGLU + quantize 1x128", StepKind::Quantize,
       quantize(swigluProgram(), Granularity::block(1, 128))},
      {"SwiGLU + quantize 128x1", StepKind::Quantize,
       quantize(swigluProgram(), Granularity::block(128, 1))},
      {"RMSNorm + quantize 1x128 (one pass)", StepKind::Quantize,
       rmsnormQuantize(cols)},
  };
  // The quantize that writes its codes transposed (the weight gradients'
  // tokens: the FP8 transpose fused in).
  for (Form f : {Form{"quantize 128x1", StepKind::Quantize,
                      quantize(x, Granularity::block(128, 1))},
                 Form{"SwiGLU + quantize 128x1", StepKind::Quantize,
                      quantize(swigluProgram(), Granularity::block(128, 1))}}) {
    f.name += " transposed";
    f.spec.transposed = true;
    out.push_back(f);
  }
  Form t{"transpose (codes, 1x128 scales)", StepKind::Transpose, {}};
  t.spec.kind = AuxKind::Transpose;
  t.spec.quant.format = DType::E4M3FN;
  t.spec.quant.granularity = Granularity::block(1, 128);
  out.push_back(t);
  Form add{"elementwise add (bf16)", StepKind::Elementwise, {}};
  add.spec.kind = AuxKind::Elementwise;
  add.spec.program = addProgram();
  add.spec.out = DType::BF16;
  out.push_back(add);
  return out;
}

PlanBuffer buffer(const std::string &name, DType t, const fp8::Shape &shape,
                  BufferRole role) {
  PlanBuffer b;
  b.name = name;
  b.dtype = t;
  for (int64_t d : shape)
    b.shape.push_back(DimExpr::constant(d));
  b.role = role;
  return b;
}

/// The one-step plan of `f` on [rows, cols].
Plan planOf(const Form &f, int64_t rows, int64_t cols) {
  Plan p;
  p.function = "memory_bound";
  PlanStep s;
  s.name = "step";
  s.kind = f.kind;
  s.aux = f.spec;
  const fp8::Shape x = {rows, cols};
  const Granularity &g = f.spec.quant.granularity;
  if (f.kind == StepKind::Transpose) {
    const fp8::Shape sc = scaleShapeFor(x, g);
    p.buffers = {
        buffer("codes", DType::E4M3FN, x, BufferRole::Input),
        buffer("scales", DType::F32, sc, BufferRole::Input),
        buffer("codes_t", DType::E4M3FN, {cols, rows}, BufferRole::Output),
        buffer("scales_t", DType::F32, {sc[1], sc[0]}, BufferRole::Output)};
    s.inputs = {"codes", "scales"};
    s.outputs = {"codes_t", "scales_t"};
  } else {
    for (size_t i = 0; i < programTensorInputs(f.spec); ++i) {
      const std::string name = "x" + std::to_string(i);
      const EwBroadcast bc = f.spec.program.broadcastOf(i);
      const fp8::Shape shape = bc == EwBroadcast::Row   ? fp8::Shape{rows}
                               : bc == EwBroadcast::Col ? fp8::Shape{cols}
                                                        : x;
      p.buffers.push_back(
          buffer(name, f.spec.program.inputs[i], shape, BufferRole::Input));
      s.inputs.push_back(name);
    }
    if (f.spec.amaxIn) { // (measure sets it to x0's)
      p.buffers.push_back(
          buffer("amax", DType::F32, {1, 1}, BufferRole::Input));
      s.inputs.push_back("amax");
    }
    if (f.kind == StepKind::Elementwise) {
      p.buffers.push_back(buffer("y", f.spec.out, x, BufferRole::Output));
      s.outputs = {"y"};
    } else {
      const auto [codes, scales] = quantizeOutputShapes(f.spec, x);
      p.buffers.push_back(
          buffer("codes", DType::E4M3FN, codes, BufferRole::Output));
      p.buffers.push_back(buffer(
          "scales", g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32,
          scales, BufferRole::Output));
      s.outputs = {"codes", "scales"};
      if (f.spec.quant.mode == ScalingMode::Delayed) {
        PlanBuffer h =
            buffer("history", DType::F32,
                   {f.spec.quant.delayed.historyLength + 4}, BufferRole::State);
        h.history = f.spec.quant.delayed.historyLength;
        p.buffers.push_back(h);
        s.state = "history";
      }
    }
  }
  p.steps = {s};
  return p;
}

/// Measures one form; an error names the stage that failed.
Expected<MemoryBoundRow> measure(const Context &ctx, const Form &f,
                                 int64_t rows, int64_t cols) {
  const Plan plan = planOf(f, rows, cols);
  auto shapes = resolvePlan(plan, {});
  if (!shapes)
    return shapes.status();
  HostBuffers host = allocateHostBuffers(plan, *shapes);
  FP8_RETURN_IF_ERROR(fillInputs(plan, host, InputOptions{}));
  if (f.spec.amaxIn) { // the amax of x0, as the GEMM that wrote it gives it
    const HostTensor &x = host.at("x0");
    float m = 0;
    for (int64_t i = 0; i < x.elements(); ++i)
      m = std::max(m, std::fabs(x.get(i)));
    host.at("amax").set(0, m);
  }
  if (f.fullHistory) {
    // Amaxes near the input's (fillInputs draws it from N(0, 1): about 5
    // over millions of values).
    numerics::AmaxHistory h(f.spec.quant.delayed);
    for (int64_t j = 0; j < f.spec.quant.delayed.historyLength; ++j) {
      h.record(4.5f + float(j % 5) / 4.0f);
      h.advance();
    }
    stateFromHistory(h, host.at("history"));
  }
  auto gpu = GpuPlan::create(plan, *shapes);
  if (!gpu)
    return gpu.status();
  FP8_RETURN_IF_ERROR((*gpu)->upload(host));
  if (f.fullHistory) { // (upload starts every state empty)
    const HostTensor &h = host.at("history");
    FP8_RETURN_IF_ERROR(
        cuCheck(ctx.d->cuMemcpyHtoD((*gpu)->address("history"), h.data.data(),
                                    h.data.size()),
                "cuMemcpyHtoD(history)"));
  }
  FP8_RETURN_IF_ERROR((*gpu)->run(Phase::Run, true));

  MemoryBoundRow r;
  r.name = f.name;
  r.kernel = f.spec.kernelName();
  HostBuffers oracle = host;
  FP8_RETURN_IF_ERROR(runStepOnCpu(plan, plan.steps[0], oracle));
  r.identical = true;
  for (const std::string &out : plan.steps[0].outputs) {
    HostTensor got;
    FP8_RETURN_IF_ERROR((*gpu)->download(out, got));
    if (compareBits(got, oracle.at(out)).mismatches != 0)
      r.identical = false;
  }
  for (const PlanBuffer &b : plan.buffers)
    if (b.role != BufferRole::State)
      r.bytes += bytesOf(b.dtype, elementCount(shapes->shapes.at(b.name)));
  Status launched;
  r.ms = medianMs(*ctx.d, (*gpu)->stream(), ctx.opt.iters, ctx.opt.flush,
                  ctx.flushBuf.ptr(), ctx.flushBytes, [&] {
                    if (launched.isOk())
                      launched = (*gpu)->launch(0);
                  });
  FP8_RETURN_IF_ERROR(launched);
  FP8_RETURN_IF_ERROR((*gpu)->sync(60, "the timed launches"));
  r.gbPerS = r.ms > 0 ? double(r.bytes) / (r.ms * 1e-3) / 1e9 : 0;
  return r;
}
} // namespace

bool memoryStepSelected(const std::string &name, const std::string &text) {
  auto lower = [](std::string v) {
    for (char &ch : v)
      ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return v;
  };
  return lower(name).find(lower(text)) != std::string::npos;
}

std::vector<std::string> memoryBoundSteps() {
  std::vector<std::string> out;
  for (const Form &f : forms(8192)) // (the names do not depend on the size)
    out.push_back(f.name);
  return out;
}

nlohmann::json runMemoryBound(const Context &ctx) {
  const int64_t rows = ctx.opt.memoryRows, cols = ctx.opt.memoryCols;
  const DramRoofline target = dramRoofline(ctx.dev->name.c_str(), Arch::SM90a);
  std::printf("memory-bound steps on [%lld, %lld] (bf16 input %.1f MiB), "
              "median of %d, L2 %s; against the %s's %.2f TB/s (bar: 80%%)\n",
              static_cast<long long>(rows), static_cast<long long>(cols),
              double(rows * cols * 2) / double(1 << 20), ctx.opt.iters,
              ctx.opt.flush ? "flushed before each launch" : "not flushed",
              target.gpu, target.dramBytesPerSecond / 1e12);
  if (!ctx.opt.memoryOnly.empty())
    std::printf("  (the steps whose name holds '%s')\n",
                ctx.opt.memoryOnly.c_str());
  std::printf("  %-36s %10s %10s %9s %7s  %s\n", "step", "ms", "MB", "GB/s",
              "% DRAM", "oracle");
  nlohmann::json rowsJson = nlohmann::json::array();
  int failures = 0;
  for (const Form &f : forms(cols)) {
    if (!memoryStepSelected(f.name, ctx.opt.memoryOnly))
      continue;
    auto r = measure(ctx, f, rows, cols);
    if (!r) {
      ++failures;
      std::printf("  %-36s FAILED: %s\n", f.name.c_str(),
                  r.status().message().c_str());
      rowsJson.push_back({{"step", f.name}, {"error", r.status().message()}});
      continue;
    }
    const double pct = 100.0 * r->gbPerS * 1e9 / target.dramBytesPerSecond;
    failures += r->identical ? 0 : 1;
    std::printf("  %-36s %10.4f %10.1f %9.0f %6.1f%%  %s%s\n", f.name.c_str(),
                r->ms, double(r->bytes) / 1e6, r->gbPerS, pct,
                r->identical ? "bit-identical" : "DIFFERS",
                pct >= 80.0 ? "" : "  (below 80%)");
    rowsJson.push_back({{"step", r->name},
                        {"kernel", r->kernel},
                        {"ms", r->ms},
                        {"bytes", r->bytes},
                        {"gb_per_s", r->gbPerS},
                        {"dram_percent", pct},
                        {"bit_identical", r->identical}});
  }
  return {{"rows", rows},
          {"cols", cols},
          {"iters", ctx.opt.iters},
          {"l2_flushed", ctx.opt.flush},
          {"only", ctx.opt.memoryOnly},
          {"gpu", target.gpu},
          {"dram_bytes_per_second", target.dramBytesPerSecond},
          {"steps", rowsJson},
          {"failures", failures}};
}

} // namespace fp8::bench
