//===- PlanBinding.cpp - A plan bound to the caller's device memory -------===//

#include "runtime/plan/PlanBinding.h"

namespace fp8 {

namespace {

int64_t bytesAt(const PlanBuffer &b, const ResolvedPlan &shapes) {
  return bytesOf(b.dtype, elementCount(shapes.shapes.at(b.name)));
}

std::string shapeText(const ShapeExpr &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].toString();
  return out + "]";
}

bool isCallers(const PlanBuffer &b) {
  return b.role == BufferRole::Input || b.role == BufferRole::Weight ||
         b.role == BufferRole::Output;
}

/// Whether a step of this kind may leave part of its output unwritten
/// (GpuPlan::upload zeroes its own buffers for them).
bool writesInPart(const PlanStep &s) {
  return s.kind == StepKind::Permute ||
         (s.kind == StepKind::Gemm && s.gemm.kind != GemmKind::Dense);
}

/// Zeroes the outputs of `gpu` that a run step may write only in part.
Status zeroPartialOutputs(GpuPlan &gpu, const Plan &p,
                          const ResolvedPlan &shapes, CUstream stream) {
  const CudaDriver &d = *gpu.device().driver;
  for (const PlanStep &s : p.steps)
    if (s.phase == Phase::Run && writesInPart(s))
      for (const std::string &o : s.outputs)
        if (const PlanBuffer *b = p.buffer(o); b->role == BufferRole::Output)
          FP8_RETURN_IF_ERROR(
              cuCheck(d.cuMemsetD8Async(gpu.address(o), 0,
                                        size_t(bytesAt(*b, shapes)), stream),
                      "cuMemsetD8Async (an output written in part)"));
  return Status::ok();
}

} // namespace

struct BoundPlan::Instance {
  const ResolvedPlan *shapes = nullptr; ///< in BoundPlan::shapes_
  std::unique_ptr<GpuPlan> gpu;         ///< on the caller's tensors
  /// With buffers of its own for the inputs and outputs, run as a graph.
  std::unique_ptr<GpuPlan> graphed;
  bool graphWarm = false; ///< `graphed` launched once, step by step
};

BoundPlan::~BoundPlan() {
  // The first instance owns the shared buffers the others point into.
  for (auto it = instances_.begin(); it != instances_.end();)
    it = it->second.get() == first_ ? std::next(it) : instances_.erase(it);
}

Expected<std::unique_ptr<BoundPlan>>
BoundPlan::create(std::shared_ptr<const Plan> plan,
                  const std::map<std::string, DeviceSpan> &weights) {
  std::unique_ptr<BoundPlan> bp(new BoundPlan());
  bp->plan_ = std::move(plan);
  const Plan &p = *bp->plan_;
  for (const auto &[name, span] : weights) {
    const PlanBuffer *b = p.buffer(name);
    if (!b || b->role != BufferRole::Weight)
      return errorf("'", name, "' is not a weight of the plan");
  }
  // Shared across dims: constants, states, and temps only prepare steps
  // write (the weights quantized or transposed).
  std::map<std::string, bool> preparedOnly;
  for (const PlanStep &s : p.steps)
    for (const std::string &o : s.outputs) {
      auto [it, fresh] = preparedOnly.emplace(o, s.phase == Phase::Prepare);
      if (!fresh)
        it->second = it->second && s.phase == Phase::Prepare;
    }
  for (const PlanBuffer &b : p.buffers) {
    if (b.role == BufferRole::Weight) {
      auto it = weights.find(b.name);
      if (it == weights.end())
        return errorf("missing weight '", b.name, "'");
      for (const DimExpr &d : b.shape)
        if (!d.isStatic())
          return errorf("weight '", b.name, "' has a dynamic shape (",
                        d.toString(),
                        "): a bound plan takes weights of "
                        "static shape");
      bp->weights_[b.name] = it->second;
      continue;
    }
    const bool shared = b.role == BufferRole::Constant ||
                        b.role == BufferRole::State ||
                        (b.role == BufferRole::Temp &&
                         preparedOnly.count(b.name) && preparedOnly.at(b.name));
    if (shared)
      bp->shared_[b.name] = true;
  }
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  return bp;
}

Expected<DimValues>
BoundPlan::dimsOf(const std::map<std::string, Shape> &inputs,
                  const std::map<std::string, int64_t> &given) {
  DimValues found;
  for (const auto &[name, shape] : inputs) {
    const PlanBuffer *b = plan_->buffer(name);
    if (!b || b->role != BufferRole::Input)
      return errorf("'", name, "' is not an input of the plan");
    if (shape.size() != b->shape.size())
      return errorf("input '", name, "': expected rank ", b->shape.size(), " (",
                    shapeText(b->shape), "), found shape ", formatShape(shape));
    for (size_t i = 0; i < shape.size(); ++i) {
      const DimExpr &d = b->shape[i];
      if (!d.isPlain() || given.count(d.dim))
        continue;
      auto [it, fresh] = found.emplace(d.dim, shape[i]);
      if (!fresh && it->second != shape[i])
        return errorf("input '", name, "': dimension ", i, " is ", d.dim,
                      ", which another input gives as ", it->second, ", found ",
                      shape[i]);
    }
  }
  for (const auto &[name, size] : given)
    found[name] = size;
  std::vector<std::pair<std::string, int64_t>> pairs(found.begin(),
                                                     found.end());
  Expected<DimValues> dims = resolveDims(*plan_, pairs);
  if (!dims)
    return dims.status();
  Expected<const ResolvedPlan *> resolved = shapes(*dims);
  if (!resolved)
    return resolved.status();
  for (const auto &[name, shape] : inputs)
    if ((*resolved)->shapes.at(name) != shape)
      return errorf("input '", name, "': expected shape ",
                    formatShape((*resolved)->shapes.at(name)), " at ",
                    formatDims(*dims), ", found ", formatShape(shape));
  return *dims;
}

Expected<const ResolvedPlan *> BoundPlan::shapes(const DimValues &dims) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = shapes_.find(dims); it != shapes_.end())
    return &it->second;
  Expected<ResolvedPlan> r = resolvePlan(*plan_, dims);
  if (!r)
    return r.status();
  return &shapes_.emplace(dims, std::move(*r)).first->second;
}

Expected<std::unique_ptr<GpuPlan>>
BoundPlan::makeGpuPlan(const ResolvedPlan &shapes, bool ownIo) {
  const Plan &p = *plan_;
  GpuPlanMemory external;
  for (const PlanBuffer &b : p.buffers) {
    if (b.role == BufferRole::Weight) {
      const DeviceSpan &w = weights_.at(b.name);
      if (w.bytes < bytesAt(b, shapes))
        return errorf("weight '", b.name, "': expected ", bytesAt(b, shapes),
                      " bytes, found ", w.bytes);
      external.buffers[b.name] = w.ptr;
    } else if (isCallers(b)) {
      if (!ownIo)
        external.buffers[b.name] = 0; // rebound at each run
    } else if (first_ && shared_.count(b.name)) {
      if (first_->shapes->shapes.at(b.name) != shapes.shapes.at(b.name))
        return errorf("buffer '", b.name,
                      "' is shared by every set of dims but its shape "
                      "depends on them (",
                      formatShape(first_->shapes->shapes.at(b.name)), " at ",
                      formatDims(first_->shapes->dims), ", ",
                      formatShape(shapes.shapes.at(b.name)), " at ",
                      formatDims(shapes.dims), ")");
      external.buffers[b.name] = first_->gpu->address(b.name);
    }
  }
  if (first_)
    for (const ScaleMirror &m : first_->gpu->scaleMirrors().mirrors)
      if (p.steps[m.writer].phase == Phase::Prepare)
        external.mirrors[m.writer] = first_->gpu->mirrorAddress(m.writer);
  auto gpu = GpuPlan::create(p, shapes, external);
  if (!gpu)
    return gpu.status().withContext("cannot set the plan up at " +
                                    formatDims(shapes.dims));
  // Constants from the plan; the GpuPlan zeroes its own states and temps.
  HostBuffers constants;
  for (const PlanBuffer &b : p.buffers)
    if (b.role == BufferRole::Constant && !external.buffers.count(b.name)) {
      HostTensor t = HostTensor::zeros(b.dtype, shapes.shapes.at(b.name));
      t.data = b.data;
      constants.emplace(b.name, std::move(t));
    }
  FP8_RETURN_IF_ERROR((*gpu)->upload(constants, /*zeroMissing=*/true));
  return gpu;
}

Expected<BoundPlan::Instance *> BoundPlan::instance(const DimValues &dims,
                                                    CUstream stream) {
  if (auto it = instances_.find(dims); it != instances_.end())
    return it->second.get();
  auto inst = std::make_unique<Instance>();
  auto it = shapes_.find(dims); // run() resolved them
  if (it == shapes_.end())
    return errorf("no shapes resolved at ", formatDims(dims));
  inst->shapes = &it->second;
  auto gpu = makeGpuPlan(*inst->shapes, /*ownIo=*/false);
  if (!gpu)
    return gpu.status();
  inst->gpu = std::move(*gpu);
  inst->gpu->setStream(stream);
  if (!first_) {
    // The weights are the caller's: prepared on the caller's stream, after
    // what it still has queued for them.
    FP8_RETURN_IF_ERROR(inst->gpu->run(Phase::Prepare, false)
                            .withContext("a prepare step failed"));
    first_ = inst.get();
  }
  Instance *raw = inst.get();
  instances_.emplace(dims, std::move(inst));
  return raw;
}

Status BoundPlan::run(const DimValues &dims,
                      const std::map<std::string, DeviceSpan> &io,
                      CUstream stream, bool graph) {
  const Plan &p = *plan_;
  Expected<const ResolvedPlan *> resolved = shapes(dims);
  if (!resolved)
    return resolved.status();
  const ResolvedPlan &shapes = **resolved;
  for (const PlanBuffer &b : p.buffers) {
    if (b.role != BufferRole::Input && b.role != BufferRole::Output)
      continue;
    auto it = io.find(b.name);
    if (it == io.end())
      return errorf("missing ", toString(b.role), " '", b.name, "'");
    const int64_t need = bytesAt(b, shapes);
    if (it->second.bytes < need)
      return errorf(toString(b.role), " '", b.name, "': expected ", need,
                    " bytes (", formatShape(shapes.shapes.at(b.name)),
                    "), found ", it->second.bytes);
  }
  for (const auto &[name, span] : io) {
    const PlanBuffer *b = p.buffer(name);
    if (!b || (b->role != BufferRole::Input && b->role != BufferRole::Output))
      return errorf("'", name, "' is not an input or an output of the plan");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  Expected<Instance *> found = instance(dims, stream);
  if (!found)
    return found.status();
  Instance &inst = **found;
  if (graph)
    return runGraph(inst, io, stream);
  GpuPlan &gpu = *inst.gpu;
  gpu.setStream(stream);
  for (const auto &[name, span] : io)
    FP8_RETURN_IF_ERROR(gpu.rebind(name, span.ptr));
  FP8_RETURN_IF_ERROR(zeroPartialOutputs(gpu, p, shapes, stream));
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].phase == Phase::Run)
      FP8_RETURN_IF_ERROR(gpu.launch(i));
  // The sizes were checked above; fp8::gemm need not ask the driver again.
  gpu.setCheckExtents(false);
  return Status::ok();
}

Status BoundPlan::runGraph(Instance &inst,
                           const std::map<std::string, DeviceSpan> &io,
                           CUstream stream) {
  const Plan &p = *plan_;
  if (!inst.graphed) {
    auto gpu = makeGpuPlan(*inst.shapes, /*ownIo=*/true);
    if (!gpu)
      return gpu.status();
    inst.graphed = std::move(*gpu);
  }
  GpuPlan &gpu = *inst.graphed;
  gpu.setStream(stream);
  const CudaDriver &d = *gpu.device().driver;
  auto copy = [&](CUdeviceptr to, CUdeviceptr from, const PlanBuffer &b) {
    return cuCheck(d.cuMemcpyDtoDAsync(
                       to, from, size_t(bytesAt(b, *inst.shapes)), stream),
                   "cuMemcpyDtoDAsync")
        .withContext("copying '" + b.name + "'");
  };
  for (const PlanBuffer &b : p.buffers)
    if (b.role == BufferRole::Input)
      FP8_RETURN_IF_ERROR(copy(gpu.address(b.name), io.at(b.name).ptr, b));
  FP8_RETURN_IF_ERROR(zeroPartialOutputs(gpu, p, *inst.shapes, stream));
  if (!inst.graphWarm) {
    for (size_t i = 0; i < p.steps.size(); ++i)
      if (p.steps[i].phase == Phase::Run)
        FP8_RETURN_IF_ERROR(gpu.launch(i));
    inst.graphWarm = true;
  } else {
    FP8_RETURN_IF_ERROR(gpu.captureRun()); // once
    FP8_RETURN_IF_ERROR(gpu.launchGraph());
  }
  for (const PlanBuffer &b : p.buffers)
    if (b.role == BufferRole::Output)
      FP8_RETURN_IF_ERROR(copy(io.at(b.name).ptr, gpu.address(b.name), b));
  return Status::ok();
}

} // namespace fp8
