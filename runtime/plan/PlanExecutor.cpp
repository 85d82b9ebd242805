//===- PlanExecutor.cpp - A plan on the GPU -------------------------------===//

#include "runtime/plan/PlanExecutor.h"

#include "codegen/Elementwise.h"
#include "codegen/Gemm.h"
#include "codegen/kernels/elementwise_params.h"
#include "runtime/ElementwiseLaunch.h"
#include "runtime/Gemm.h"
#include "runtime/GroupedGemm.h"
#include "runtime/LoadedKernels.h"
#include "runtime/plan/PlanKernels.h"

#include <algorithm>

namespace fp8 {

namespace {
int64_t bufferBytes(const PlanBuffer &b, const Shape &s) {
  return bytesOf(b.dtype, elementCount(s));
}

int64_t scaleBytes(const Granularity &g) {
  return g.scale == ScaleFormat::UE8M0 ? 1 : 4;
}
} // namespace

//===----------------------------------------------------------------------===//
// Compiling without a GPU
//===----------------------------------------------------------------------===//

Expected<std::vector<CompiledPlanKernel>>
compilePlanKernels(const Plan &plan, const ResolvedPlan &shapes, int smCount,
                   const TuningDevice *device) {
  std::vector<CompiledPlanKernel> out;
  for (const PlanStep &s : plan.steps) {
    GeneratedKernel kernel;
    std::string name, tileSource;
    std::optional<TileConfig> tile, heuristicTile;
    if (s.kind == StepKind::Gemm) {
      const Shape &as = shapes.shapes.at(s.inputs[0]);
      const Geometry a = geometry(as);
      // The source fp8::gemm generates at run time (the spec it launches,
      // with the actual M and tile: the disk cache then serves the run).
      GemmOptions o;
      o.selectTile = s.runtimeTile;
      // A grouped GEMM's tile is chosen for the rows it launches with (a
      // masked GEMM's expected rows), as fp8::groupedGemm chooses it.
      const KernelSpec launch = gemmLaunchValues(s, as);
      const int64_t rows = launch.kind == GemmKind::Dense
                               ? a.rows
                               : groupedTileRows(launch, a.rows);
      // On a known GPU, the tile GpuPlan::gemmOptions will launch with: a
      // database entry of that GPU over the compiled-in one.
      if (device && !s.runtimeTile) {
        Expected<std::optional<TileConfig>> t =
            knownTuningTile(launch, rows, *device);
        if (!t)
          return t.status().withContext("step '" + s.name + "'");
        if (*t) {
          o.tile = **t;
          tileSource = "tuning database";
        }
      }
      Expected<KernelSpec> spec = gemmLaunchSpec(launch, rows, smCount, o);
      if (!spec)
        return spec.status().withContext("step '" + s.name + "'");
      auto g = emitGemm(*spec);
      if (!g)
        return g.status().withContext("step '" + s.name + "'");
      kernel = std::move(*g);
      name = kernel.name;
      tile = spec->tile;
      // A dense GEMM whose tile the heuristic chose when the plan was
      // compiled, for another M (m-hint) or SM count: what the runtime would
      // pick for this M, so that fp8-run can say so.
      if (!s.runtimeTile && tileSource.empty() &&
          launch.kind == GemmKind::Dense &&
          s.tileSource.rfind(kHeuristicTileSource, 0) == 0) {
        GemmOptions h;
        h.selectTile = true;
        Expected<KernelSpec> chosen = gemmLaunchSpec(launch, rows, smCount, h);
        if (chosen && chosen->tile != spec->tile)
          heuristicTile = chosen->tile;
      }
    } else {
      auto ks = emitElementwise(s.aux);
      if (!ks)
        return ks.status().withContext("step '" + s.name + "'");
      kernel = (*ks)[0]; // one translation unit for every entry point
      name = s.aux.kernelName();
    }
    auto cubin = KernelCache::global().get(kernel);
    if (!cubin)
      return cubin.status().withContext("step '" + s.name + "'");
    CompiledPlanKernel c;
    c.step = s.name;
    c.name = name;
    c.tileSource = tileSource;
    c.tile = tile;
    c.heuristicTile = heuristicTile;
    c.origin = cubin->origin;
    c.seconds = cubin->seconds;
    c.cubinBytes = cubin->kernel->cubin.size();
    c.registers = cubin->kernel->registers;
    c.spillBytes = cubin->kernel->spillBytes;
    out.push_back(c);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// GpuPlan
//===----------------------------------------------------------------------===//

GpuPlan::GpuPlan(const Plan &plan, const ResolvedPlan &shapes)
    : plan_(plan), shapes_(shapes) {}

GpuPlan::~GpuPlan() {
  if (graph_ && device_)
    device_->driver->cuGraphExecDestroy(graph_);
  if (ownStream_ && device_)
    device_->driver->cuStreamDestroy(ownStream_);
}

Expected<std::unique_ptr<GpuPlan>>
GpuPlan::create(const Plan &plan, const ResolvedPlan &shapes,
                const GpuPlanMemory &external) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  const CudaDevice &d = **dev;
  const int want = plan.arch == Arch::SM90a ? 90 : 100;
  if (d.ccMajor * 10 + d.ccMinor != want)
    return errorf("the plan is compiled for ", toString(plan.arch),
                  " but device ", d.ordinal, " (", d.name,
                  ") has compute capability ", d.ccMajor, ".", d.ccMinor);
  for (const PlanStep &s : plan.steps)
    if (s.kind == StepKind::Gemm && s.gemm.arch != Arch::SM90a)
      return errorf("step '", s.name, "' is a ", toString(s.gemm.arch),
                    " GEMM: the runtime's launcher (runtime/Gemm.h) runs "
                    "sm_90a GEMMs only (fp8-run --compile-only compiles the "
                    "plan, --cpu runs it on the CPU oracle)");
  std::unique_ptr<GpuPlan> g(new GpuPlan(plan, shapes));
  g->device_ = &d;
  g->mirrors_ = planScaleMirrors(plan, shapes);
  // Everything the plan allocates, compared with the device's free memory
  // before the first allocation.
  for (const auto &[name, ptr] : external.buffers)
    if (!plan.buffer(name))
      return errorf("the plan has no buffer '", name, "' to bind");
  int64_t total = 0;
  for (const PlanBuffer &b : plan.buffers)
    if (!external.buffers.count(b.name))
      total = addBytes(total, bufferBytes(b, shapes.shapes.at(b.name)));
  for (const ScaleMirror &m : g->mirrors_.mirrors)
    if (!external.mirrors.count(m.writer))
      total = addBytes(total, m.bytes());
  for (const PlanStep &s : plan.steps)
    total = addBytes(total, auxScratchBytes(s, shapes.shapes));
  FP8_RETURN_IF_ERROR(checkDeviceMemory("holding the plan's buffers", total));
  // NOTE: a blocking stream: it waits for work on the legacy default
  // stream, where the synchronous-looking cuMemsetD8 of DeviceBuffer::fill
  // and of fp8::gemm's split-K workspace actually run (memsets are
  // asynchronous to the host), so no kernel of the plan overtakes them.
  FP8_RETURN_IF_ERROR(
      cuCheck(d.driver->cuStreamCreate(&g->ownStream_, CU_STREAM_DEFAULT),
              "cuStreamCreate"));
  g->stream_ = g->ownStream_;
  g->external_ = external.buffers;
  for (const PlanBuffer &b : plan.buffers) {
    if (external.buffers.count(b.name))
      continue;
    auto buf =
        DeviceBuffer::alloc(size_t(bufferBytes(b, shapes.shapes.at(b.name))));
    if (!buf)
      return buf.status().withContext("allocating buffer '" + b.name + "'");
    g->buffers_.emplace(b.name, std::move(*buf));
  }
  g->deviceBytes_ = size_t(total);
  // NOTE: the mirrors' padding (A: rows M..Mpad, B: columns K/128..pad4)
  // is never written; the GEMM's TMA box clips it (its global extent is the
  // scales'), zero keeps it finite.
  for (const ScaleMirror &m : g->mirrors_.mirrors) {
    if (auto it = external.mirrors.find(m.writer);
        it != external.mirrors.end()) {
      g->mirrorAddress_.push_back(it->second);
      continue;
    }
    auto buf = DeviceBuffer::alloc(size_t(m.bytes()));
    if (!buf)
      return buf.status().withContext("allocating the mirror of the scales '" +
                                      m.scales + "'");
    FP8_RETURN_IF_ERROR(buf->fill(0));
    g->mirrorAddress_.push_back(buf->ptr());
    g->mirrorScratch_.push_back(std::move(*buf));
  }
  for (const PlanStep &s : plan.steps) {
    DeviceBuffer scratch;
    if (const int64_t bytes = auxScratchBytes(s, shapes.shapes)) {
      auto buf = DeviceBuffer::alloc(size_t(bytes));
      if (!buf)
        return buf.status().withContext("allocating the scratch of "
                                        "step '" +
                                        s.name + "'");
      FP8_RETURN_IF_ERROR(buf->fill(0));
      scratch = std::move(*buf);
    }
    g->auxScratch_.push_back(std::move(scratch));
  }
  g->auxLaunches_.resize(plan.steps.size());
  g->dbTiles_.resize(plan.steps.size());
  g->gemmKernels_.assign(plan.steps.size(), "");
  g->gemmScaleATma_.assign(plan.steps.size(), 0);
  g->gemmScaleBTma_.assign(plan.steps.size(), 0);
  return g;
}

CUdeviceptr GpuPlan::address(const std::string &name) const {
  auto it = buffers_.find(name);
  if (it != buffers_.end())
    return it->second.ptr();
  auto ext = external_.find(name);
  return ext == external_.end() ? 0 : ext->second;
}

CUdeviceptr GpuPlan::scaleSourceAddress(const ScaleSource &src) const {
  if (src.mirror >= 0)
    return mirrorAddress_[size_t(src.mirror)];
  return src.buffer.empty() ? 0 : address(src.buffer);
}

CUdeviceptr GpuPlan::mirrorAddress(size_t writer) const {
  for (size_t i = 0; i < mirrors_.mirrors.size(); ++i)
    if (mirrors_.mirrors[i].writer == writer)
      return mirrorAddress_[i];
  return 0;
}

Status GpuPlan::rebind(const std::string &name, CUdeviceptr ptr) {
  auto it = external_.find(name);
  if (it == external_.end())
    return errorf("buffer '", name, "' is not bound to external memory");
  if (it->second != ptr && graph_) {
    // The captured graph holds the old address.
    device_->driver->cuGraphExecDestroy(graph_);
    graph_ = nullptr;
  }
  it->second = ptr;
  return Status::ok();
}

const std::string &GpuPlan::gemmKernel(size_t index) const {
  return gemmKernels_.at(index);
}

bool GpuPlan::gemmScaleATma(size_t index) const {
  return gemmScaleATma_.at(index) != 0;
}

bool GpuPlan::gemmScaleBTma(size_t index) const {
  return gemmScaleBTma_.at(index) != 0;
}

Status GpuPlan::upload(const HostBuffers &host, bool zeroMissing) {
  for (const PlanBuffer &b : plan_.buffers) {
    if (external_.count(b.name))
      continue;
    DeviceBuffer &dst = buffers_.at(b.name);
    if (b.role == BufferRole::State) {
      FP8_RETURN_IF_ERROR(dst.fill(0));
      continue;
    }
    if (b.role == BufferRole::Temp || b.role == BufferRole::Output) {
      // Zeros where no step writes (a grouped GEMM's rows after the last
      // group), as in the oracle's buffers.
      FP8_RETURN_IF_ERROR(dst.fill(0));
      continue;
    }
    if (b.role != BufferRole::Input && b.role != BufferRole::Weight &&
        b.role != BufferRole::Constant)
      continue;
    auto it = host.find(b.name);
    if (it == host.end() && zeroMissing) {
      FP8_RETURN_IF_ERROR(dst.fill(0));
      continue;
    }
    if (it == host.end())
      return errorf("no host data for ", toString(b.role), " '", b.name, "'");
    if (it->second.data.size() != dst.size())
      return errorf("expected ", dst.size(), " bytes for ", toString(b.role),
                    " '", b.name, "', found ", it->second.data.size());
    FP8_RETURN_IF_ERROR(dst.upload(it->second.data.data(), dst.size())
                            .withContext("uploading '" + b.name + "'"));
  }
  for (DeviceBuffer &s : auxScratch_)
    if (s.ptr())
      FP8_RETURN_IF_ERROR(s.fill(0));
  return cuCheck(device_->driver->cuCtxSynchronize(),
                 "cuCtxSynchronize (after the uploads)");
}

Status GpuPlan::download(const std::string &name, HostTensor &out) const {
  const PlanBuffer *b = plan_.buffer(name);
  if (!b)
    return errorf("the plan has no buffer '", name, "'");
  out = HostTensor::zeros(b->dtype, shapes_.shapes.at(name));
  auto it = buffers_.find(name);
  if (it != buffers_.end())
    return it->second.download(out.data.data(), out.data.size())
        .withContext("downloading '" + name + "'");
  const CUdeviceptr ptr = address(name);
  if (!ptr)
    return errorf("buffer '", name, "' is bound to no memory yet");
  return cuCheck(device_->driver->cuMemcpyDtoH(out.data.data(), ptr,
                                               out.data.size()),
                 "cuMemcpyDtoH")
      .withContext("downloading '" + name + "'");
}

Status GpuPlan::launchAux(const PlanStep &s, size_t index) {
  void *mirror = nullptr;
  int64_t strideRows = 0, strideCols = 0;
  const int mi = mirrors_.writes[index];
  if (s.kind == StepKind::Quantize && mi >= 0) {
    const ScaleMirror &m = mirrors_.mirrors[size_t(mi)];
    mirror = reinterpret_cast<void *>(mirrorAddress_[size_t(mi)]);
    strideRows = m.strideRows;
    strideCols = m.strideCols;
  }
  fp8k::EwParams p = auxStepParams(
      s, shapes_.shapes,
      [&](const std::string &name) {
        return reinterpret_cast<void *>(address(name));
      },
      reinterpret_cast<void *>(auxScratch_[index].ptr()), mirror, strideRows,
      strideCols);
  // The launches' names hash the spec's JSON: made once for each alignment
  // the step's tensors have had (a rebind may change it), not per launch.
  std::vector<ElementwiseEntryLaunch> &launches =
      auxLaunches_[index][auxParamsAligned(s.aux, p) ? 1 : 0];
  if (launches.empty())
    launches = auxStepLaunches(s, shapes_.shapes, device_->smCount, p);
  Status ls = launchElementwise(s.aux, launches, p, stream_,
                                overlapsPriorStep(p.batch * p.rows));
  if (!ls.isOk())
    return ls.withContext("step '" + s.name + "'");
  return Status::ok();
}

bool GpuPlan::overlapsPriorStep(int64_t rows) const {
  // NOTE: measured on an H100 as one CUDA graph, alternated with the steps
  // in the stream's order (docs/results/h100-2026-12-05-step-overlap/):
  // every step overlapped, mlp and the Llama layer at M = 16 took 3.4-4%
  // less; the GEMM steps alone at M = 64 and 128, 1-4% less; at M = 256
  // and more, the GEMM steps overlapped took 0-4% more (M = 256, 512) and
  // 3-8% more (M = 4096), the other steps alone 0-0.8% more (M = 4096).
  // Without the graph (fp8-run's steps between events) no difference.
  return overlapSteps_ && rows <= kOverlapMaxRows;
}

Expected<GemmOptions> GpuPlan::gemmOptions(const PlanStep &s,
                                           const KernelSpec &spec, size_t index,
                                           int64_t m) {
  GemmOptions o;
  o.selectTile = s.runtimeTile;
  o.checkExtents = checkExtents_;
  o.afterPriorKernel = overlapsPriorStep(m);
  if (!s.runtimeTile) {
    // A tile measured on this GPU beats the one compiled into the plan (a
    // runtime-chosen tile consults the database in fp8::gemm already).
    std::optional<std::optional<TileConfig>> &db = dbTiles_[index];
    if (!db) {
      // Tuning on first use (setFirstUseTuner) waits for a launch outside
      // a graph capture: until then the answer is not kept.
      bool deferred = false;
      Expected<std::optional<TileConfig>> t = tuningDbTile(
          spec, spec.kind == GemmKind::Dense ? m : groupedTileRows(spec, m),
          stream_, &deferred);
      if (!t)
        return t.status().withContext("step '" + s.name + "'");
      if (deferred)
        o.tile = *t;
      else
        db = *t;
    }
    if (db)
      o.tile = *db;
  }
  return o;
}

void GpuPlan::recordGemm(size_t index, const GemmReport &rep) {
  gemmKernels_[index] = rep.kernel;
  gemmScaleATma_[index] = rep.scaleATma;
  gemmScaleBTma_[index] = rep.scaleBTma;
}

Status GpuPlan::launchGroupedGemm(const PlanStep &s, size_t index) {
  // A [R, K] with its [R, K/128] scales (masked: G stacked slabs and
  // scales), B [G, N, K] with G stacked scale tensors (along K: A [M, K],
  // B [N, K] and their scales), all packed; the group tensor (offsets from
  // the permute step or an input, or valid rows).
  GroupedGemmTensors t;
  t.a = reinterpret_cast<const void *>(address(s.inputs[0]));
  t.scaleA = reinterpret_cast<const void *>(address(s.inputs[1]));
  t.b = reinterpret_cast<const void *>(address(s.inputs[2]));
  t.scaleB = reinterpret_cast<const void *>(address(s.inputs[3]));
  t.groups = reinterpret_cast<const int32_t *>(address(s.inputs[4]));
  t.d = reinterpret_cast<void *>(address(s.outputs[0]));
  // Along K, the scales as they were before the FP8 transposes of A and
  // B: [K/128][M], which the kernel takes by TMA, and [K/128][N], which its
  // loader warp reads contiguously.
  // A transposed quantize's scales: the same layout, in its mirror.
  const ScaleSource sa = scaleSource(mirrors_, index, /*isA=*/true);
  if (const CUdeviceptr a = scaleSourceAddress(sa)) {
    t.scaleA = reinterpret_cast<const void *>(a);
    t.scaleALdOuter = sa.ldOuter;
    t.scaleALdK = sa.ldK;
  }
  const ScaleSource sb = scaleSource(mirrors_, index, /*isA=*/false);
  if (const CUdeviceptr b = scaleSourceAddress(sb)) {
    t.scaleB = reinterpret_cast<const void *>(b);
    t.scaleBLdOuter = sb.ldOuter;
    t.scaleBLdK = sb.ldK;
  }
  GemmReport rep;
  // M: contiguous, every group's rows; masked, the rows of a slab; along K,
  // A's rows, with K (every group's) the launch's.
  const Shape &a = shapes_.shapes.at(s.inputs[0]);
  const int64_t m = geometry(a).rows;
  const KernelSpec spec = gemmLaunchValues(s, a);
  Expected<GemmOptions> o = gemmOptions(s, spec, index, m);
  if (!o)
    return o.status();
  Status st = groupedGemm(spec, m, t, stream_, *o, &rep);
  if (!st.isOk())
    return st.withContext("step '" + s.name + "'");
  recordGemm(index, rep);
  return Status::ok();
}

Status GpuPlan::launchGemm(const PlanStep &s, size_t index) {
  const KernelSpec &k = s.gemm;
  if (k.kind != GemmKind::Dense)
    return launchGroupedGemm(s, index);
  const Shape &as = shapes_.shapes.at(s.inputs[0]);
  const Shape &bs = shapes_.shapes.at(s.inputs[2]);
  const Geometry ga = geometry(as), gb = geometry(bs);
  const int64_t m = ga.rows, n = gb.rows, kk = ga.cols;
  Expected<GemmOptions> options = gemmOptions(s, k, index, m);
  if (!options)
    return options.status();
  const GemmOptions &o = *options;
  const Granularity &gA = k.a.granularity, &gB = k.b.granularity;
  const int64_t saBytes = gA.scaleRows(m) * gA.scaleCols(kk) * scaleBytes(gA);
  const int64_t sbBytes = gB.scaleRows(n) * gB.scaleCols(kk) * scaleBytes(gB);
  const int64_t ob = sizeOf(k.out);
  // Scales written by a quantize step of this plan in a layout the kernel
  // cannot take by TMA (1x128 A scales; B scales whose pitch is not 16
  // bytes): read their mirror instead.
  const ScaleSource sa = scaleSource(mirrors_, index, /*isA=*/true);
  const ScaleSource sb = scaleSource(mirrors_, index, /*isA=*/false);
  for (int64_t b = 0; b < s.batch; ++b) {
    GemmTensors t;
    t.a = reinterpret_cast<const void *>(address(s.inputs[0]) + b * m * kk);
    t.scaleA =
        reinterpret_cast<const void *>(address(s.inputs[1]) + b * saBytes);
    // Batch 1 (mirroredAScaleWriter, transposedQuantizeWriter,
    // untransposedScales).
    if (const CUdeviceptr saAddress = scaleSourceAddress(sa)) {
      t.scaleA = reinterpret_cast<const void *>(saAddress);
      t.scaleALdOuter = sa.ldOuter;
      t.scaleALdK = sa.ldK;
    }
    t.b = reinterpret_cast<const void *>(address(s.inputs[2]) + b * n * kk);
    t.scaleB =
        reinterpret_cast<const void *>(address(s.inputs[3]) + b * sbBytes);
    if (const CUdeviceptr sbAddress = scaleSourceAddress(sb)) {
      t.scaleB = reinterpret_cast<const void *>(sbAddress);
      t.scaleBLdOuter = sb.ldOuter;
      t.scaleBLdK = sb.ldK;
    }
    t.d = reinterpret_cast<void *>(address(s.outputs[0]) + b * m * n * ob);
    if (k.epilogue) { // batch 1 (PlanValidate): codes, scales, mirror
      t.d = reinterpret_cast<void *>(address(s.outputs[0]));
      t.scaleD = reinterpret_cast<void *>(address(s.outputs[1]));
      if (const int mi = mirrors_.writes[index]; mi >= 0) {
        const ScaleMirror &mm = mirrors_.mirrors[size_t(mi)];
        t.scaleDMirror = reinterpret_cast<void *>(mirrorAddress_[size_t(mi)]);
        t.mirrorStrideRows = mm.strideRows;
        t.mirrorStrideCols = mm.strideCols;
      }
    }
    if (k.accumulate)
      t.c =
          reinterpret_cast<const void *>(address(s.inputs[4]) + b * m * n * ob);
    if (k.amaxOut) // one f32 a matrix
      t.amaxD = reinterpret_cast<float *>(address(s.outputs[1]) + b * 4);
    GemmReport rep;
    Status st = gemm(k, m, t, stream_, o, &rep);
    if (!st.isOk())
      return st.withContext("step '" + s.name + "'");
    recordGemm(index, rep);
  }
  return Status::ok();
}

Status GpuPlan::launch(size_t index) {
  const PlanStep &s = plan_.steps.at(index);
  return s.kind == StepKind::Gemm ? launchGemm(s, index) : launchAux(s, index);
}

Status GpuPlan::sync(double timeoutSeconds, const std::string &what) {
  return waitStream(stream_, timeoutSeconds, what);
}

Status GpuPlan::run(Phase phase, bool checkEachStep, double timeoutSeconds) {
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep &s = plan_.steps[i];
    if (s.phase != phase)
      continue;
    FP8_RETURN_IF_ERROR(launch(i));
    if (checkEachStep)
      FP8_RETURN_IF_ERROR(sync(timeoutSeconds, "step '" + s.name + "' (" +
                                                   s.kernelName() + ")"));
  }
  return sync(timeoutSeconds,
              std::string("the ") + std::string(toString(phase)) + " steps");
}

Expected<std::vector<std::vector<double>>> GpuPlan::timeRun(int warmup,
                                                            int iters) {
  const CudaDriver &d = *device_->driver;
  const std::vector<size_t> steps = plan_.stepsOf(Phase::Run);
  // The buffers were checked on the first launches; timed launches skip
  // the driver queries (microseconds of CPU per GEMM).
  checkExtents_ = false;
  for (int w = 0; w < warmup; ++w)
    FP8_RETURN_IF_ERROR(run(Phase::Run, false));
  // Every iteration is queued before the stream is drained, so the host's
  // launches run ahead of the GPU: the time of a step is the GPU's, not the
  // host's latency to enqueue it (which an iteration started from an empty
  // stream would charge to its first step).
  // NOTE: with the stream drained after each iteration, mlp's first step
  // (a 4096x4096 quantize) measured 0.069 ms; queued, 0.032 ms (H100,
  // docs/results/h100-2026-11-25-queued-bench/).
  const size_t perIter = steps.size() + 1;
  std::vector<CUevent> events(perIter * size_t(std::max(iters, 0)), nullptr);
  Status status;
  for (CUevent &e : events) {
    status = cuCheck(d.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    if (!status.isOk())
      break;
  }
  for (int it = 0; it < iters && status.isOk(); ++it) {
    CUevent *ev = events.data() + size_t(it) * perIter;
    status = cuCheck(d.cuEventRecord(ev[0], stream_), "cuEventRecord");
    for (size_t j = 0; j < steps.size() && status.isOk(); ++j) {
      status = launch(steps[j]);
      if (status.isOk())
        status = cuCheck(d.cuEventRecord(ev[j + 1], stream_), "cuEventRecord");
    }
  }
  if (status.isOk())
    status = sync(60, "the timed iterations");
  std::vector<std::vector<double>> times;
  for (int it = 0; it < iters && status.isOk(); ++it) {
    CUevent *ev = events.data() + size_t(it) * perIter;
    std::vector<double> row;
    for (size_t j = 0; j < steps.size() && status.isOk(); ++j) {
      float ms = 0;
      status = cuCheck(d.cuEventElapsedTime(&ms, ev[j], ev[j + 1]),
                       "cuEventElapsedTime");
      row.push_back(ms);
    }
    float total = 0;
    if (status.isOk())
      status = cuCheck(d.cuEventElapsedTime(&total, ev[0], ev[steps.size()]),
                       "cuEventElapsedTime");
    row.push_back(total);
    times.push_back(row);
  }
  for (CUevent e : events)
    if (e)
      d.cuEventDestroy(e);
  if (!status.isOk())
    return status;
  return times;
}

} // namespace fp8
