//===- Plans.cpp - Plans from Python --------------------------------------===//
//
// fp8kit.Plan: a plan (runtime/plan/Plan.h) loaded from a file or JSON text,
// or compiled from a model (Compiler.cpp); its buffers, steps and shapes;
// its kernels JIT-compiled without a GPU (fp8-run --compile-only); a run on
// the CPU oracle (fp8-run --cpu) or on the GPU (fp8-run's GPU run, through
// runtime/plan/PlanGpuRunner.h) with the inputs given as arrays or drawn
// at random, the outputs returned as NumPy arrays.
//
//===----------------------------------------------------------------------===//

#include "python/src/Plans.h"
#include "python/src/Arrays.h"
#include "python/src/Bindings.h"

#include "core/Target.h"
#include "runtime/CudaDriver.h"
#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanGpuRunner.h"
#include "runtime/plan/PlanRunner.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace nb = nanobind;

namespace fp8::python {

namespace {

void check(const Status &s, const char *fn) { throwIfError(s, fn); }

nb::list shapeExpr(const ShapeExpr &shape) {
  nb::list out;
  for (const DimExpr &d : shape) {
    if (d.isStatic())
      out.append(d.value);
    else
      out.append(d.toString());
  }
  return out;
}

/// The dims given as {name: size}, every one of the plan's needed.
DimValues dimsOf(const Plan &plan, const std::map<std::string, int64_t> &given,
                 const char *fn) {
  std::vector<std::pair<std::string, int64_t>> pairs(given.begin(),
                                                     given.end());
  Expected<DimValues> dims = resolveDims(plan, pairs);
  check(dims.status(), fn);
  return *dims;
}

ResolvedPlan resolved(const Plan &plan, const DimValues &dims, const char *fn) {
  Expected<ResolvedPlan> r = resolvePlan(plan, dims);
  check(r.status(), fn);
  return *r;
}

/// A host array as a .npy file would hold it (the plan's input readers
/// take that form).
numerics::NpyArray npyOf(const Array &a) {
  expectContiguous(a);
  if (a.where != Where::Host)
    fail(a, "expected an array in host memory, found one on " + a.deviceName());
  numerics::NpyArray n;
  if (a.dtype == DType::F32)
    n.descr = "<f4";
  else if (a.dtype == DType::F16)
    n.descr = "<f2";
  else if (a.dtype == DType::BF16)
    n.descr = "<V2";
  else if (a.dtype == DType::I32)
    n.descr = "<i4";
  else
    fail(a,
         "expected float32, float16, bfloat16 or int32, found " + a.dtypeName);
  n.shape = a.shape;
  n.data.resize(size_t(a.elements() * a.itemBytes));
  std::memcpy(n.data.data(), a.data, n.data.size());
  return n;
}

/// A buffer as a NumPy array: f32 for bf16, f16 and f32 (widened exactly),
/// uint8 for FP8 codes and UE8M0 scales, int32.
nb::object toNumpy(const HostTensor &t) {
  std::vector<size_t> shape(t.shape.begin(), t.shape.end());
  if (t.dtype == DType::I32 || isFP8(t.dtype) || t.dtype == DType::UE8M0 ||
      t.dtype == DType::F32) {
    auto *copy = new std::vector<uint8_t>(t.data);
    nb::capsule owner(copy, [](void *p) noexcept {
      delete static_cast<std::vector<uint8_t> *>(p);
    });
    nb::dlpack::dtype dt = t.dtype == DType::I32   ? nb::dtype<int32_t>()
                           : t.dtype == DType::F32 ? nb::dtype<float>()
                                                   : nb::dtype<uint8_t>();
    return nb::cast(nb::ndarray<nb::numpy>(copy->data(), shape.size(),
                                           shape.data(), owner, nullptr, dt));
  }
  auto *values = new std::vector<float>(t.toFloat());
  nb::capsule owner(values, [](void *p) noexcept {
    delete static_cast<std::vector<float> *>(p);
  });
  return nb::cast(nb::ndarray<nb::numpy, float>(values->data(), shape.size(),
                                                shape.data(), owner));
}

nb::dict buffersOf(const Plan &plan) {
  nb::dict out;
  for (const PlanBuffer &b : plan.buffers) {
    nb::dict d;
    d["role"] = std::string(toString(b.role));
    d["dtype"] = std::string(toString(b.dtype));
    d["shape"] = shapeExpr(b.shape);
    out[b.name.c_str()] = d;
  }
  return out;
}

nb::list stepsOf(const Plan &plan) {
  nb::list out;
  for (const PlanStep &s : plan.steps) {
    nb::dict d;
    d["name"] = s.name;
    d["kind"] = std::string(toString(s.kind));
    d["phase"] = std::string(toString(s.phase));
    d["inputs"] = s.inputs;
    d["outputs"] = s.outputs;
    d["kernel"] = s.kernelName();
    out.append(d);
  }
  return out;
}

nb::list compileKernels(const PlanHandle &p,
                        const std::map<std::string, int64_t> &given,
                        int smCount) {
  const char *fn = "fp8kit.Plan.compile";
  if (smCount < 1 || smCount > 4096)
    throw nb::value_error(("fp8kit.Plan.compile: expected sm_count in [1, "
                           "4096], found " +
                           std::to_string(smCount))
                              .c_str());
  const ResolvedPlan shapes = resolved(*p.plan, dimsOf(*p.plan, given, fn), fn);
  Expected<std::vector<CompiledPlanKernel>> kernels = [&] {
    nb::gil_scoped_release release;
    return compilePlanKernels(*p.plan, shapes, smCount);
  }();
  throwIfFailed(kernels.status(), fn);
  nb::list out;
  for (const CompiledPlanKernel &k : *kernels) {
    nb::dict d;
    d["step"] = k.step;
    d["kernel"] = k.name;
    d["origin"] = std::string(toString(k.origin));
    d["seconds"] = k.seconds;
    d["cubin_bytes"] = k.cubinBytes;
    d["registers"] = k.registers;
    d["spill_bytes"] = k.spillBytes;
    out.append(d);
  }
  return out;
}

/// What a run of the plan takes: its dims and shapes, and its inputs:
/// `inputs` (every input and weight by name, viewed into `arrays`, which
/// `options` points to) or, without them, random values drawn with `seed`.
/// Filled in place (`options` points into it).
struct RunArgs {
  DimValues dims;
  ResolvedPlan shapes;
  std::map<std::string, numerics::NpyArray> arrays;
  PlanInputOptions options;
};

void readRunArgs(
    RunArgs &a, const Plan &plan, const std::map<std::string, int64_t> &given,
    const std::optional<std::map<std::string, nb::ndarray<>>> &inputs,
    uint64_t seed, const char *fn) {
  a.dims = dimsOf(plan, given, fn);
  a.shapes = resolved(plan, a.dims, fn);
  a.options.inputs.seed = seed;
  if (!inputs)
    return;
  for (const auto &[name, array] : *inputs) {
    const PlanBuffer *b = plan.buffer(name);
    if (!b || (b->role != BufferRole::Input && b->role != BufferRole::Weight))
      throw nb::value_error((std::string(fn) + ": inputs: '" + name +
                             "' is not an input or a weight of the plan")
                                .c_str());
    const std::string arg = "inputs['" + name + "']"; // outlives the view
    a.arrays[name] = npyOf(viewArray(array, fn, arg.c_str()));
  }
  a.options.inputs.arrays = &a.arrays;
}

nb::dict outputsOf(const Plan &plan, const HostBuffers &values) {
  nb::dict out;
  for (const std::string &name : plan.outputs)
    out[name.c_str()] = toNumpy(values.at(name));
  return out;
}

nb::dict runOnCpu(const PlanHandle &p,
                  const std::map<std::string, int64_t> &given,
                  std::optional<std::map<std::string, nb::ndarray<>>> inputs,
                  uint64_t seed) {
  const char *fn = "fp8kit.Plan.run_cpu";
  const Plan &plan = *p.plan;
  RunArgs a;
  readRunArgs(a, plan, given, inputs, seed, fn);
  Expected<CpuPlanRun> run = [&] {
    nb::gil_scoped_release release;
    return runPlanOnCpuOracle(plan, a.shapes, a.dims, a.options,
                              /*verify=*/false);
  }();
  check(run.status(), fn);
  return outputsOf(plan, run->values);
}

/// fp8-run's GPU run: the plan set up on the runtime's device (buffers
/// allocated, inputs uploaded), its prepare steps, one run, the outputs
/// read back. A machine without a GPU gets RuntimeError with the driver's
/// message.
nb::dict runOnGpu(const PlanHandle &p,
                  const std::map<std::string, int64_t> &given,
                  std::optional<std::map<std::string, nb::ndarray<>>> inputs,
                  uint64_t seed) {
  const char *fn = "fp8kit.Plan.run_gpu";
  const Plan &plan = *p.plan;
  RunArgs a;
  readRunArgs(a, plan, given, inputs, seed, fn);
  Expected<HostBuffers> values = [&]() -> Expected<HostBuffers> {
    nb::gil_scoped_release release;
    if (Expected<const CudaDevice *> dev = CudaDevice::get(); !dev)
      return Status::error("no GPU to run the plan on: " + dev.message() +
                           " (run_cpu runs it on the CPU oracle)");
    HostBuffers host;
    auto gpu = setUpGpuPlan(plan, a.shapes, a.dims, a.options, false, host);
    if (!gpu)
      return gpu.status();
    if (auto prepared = runPrepareSteps(**gpu); !prepared)
      return prepared.status();
    HostBuffers statesBefore;
    if (Status s =
            runIterations(**gpu, plan, 1, statesBefore, [](int, double) {});
        !s)
      return s;
    return readResults(**gpu, plan, false);
  }();
  throwIfFailed(values.status(), fn);
  return outputsOf(plan, *values);
}

PlanHandle loaded(Expected<Plan> plan, const std::string &where) {
  throwIfError(plan.status(), "fp8kit.Plan");
  return {std::make_shared<const Plan>(std::move(*plan)), where};
}

} // namespace

PlanHandle planHandle(Plan plan, std::string where) {
  return {std::make_shared<const Plan>(std::move(plan)), std::move(where)};
}

void bindPlans(nb::module_ &m) {
  nb::class_<PlanHandle> cls(
      m, "Plan",
      "A compiled model graph: buffers, steps, kernel specs (fp8-translate "
      "--fp8-to-plan writes one, fp8-run runs one).");
  bindPlanBind(cls);
  cls.def_static(
         "load",
         [](const std::string &path) { return loaded(loadPlan(path), path); },
         nb::arg("path"), "Reads and validates a plan file.")
      .def_static(
          "from_json",
          [](const std::string &text, const std::string &where) {
            return loaded(parsePlan(text, where), where);
          },
          nb::arg("text"), nb::arg("where") = "<string>",
          "Parses and validates a plan's JSON text.")
      .def_prop_ro("function",
                   [](const PlanHandle &p) { return p.plan->function; })
      .def_prop_ro("arch",
                   [](const PlanHandle &p) {
                     return std::string(toString(p.plan->arch));
                   })
      .def_prop_ro(
          "dims", [](const PlanHandle &p) { return p.plan->dims; },
          "The names of the dynamic dimensions.")
      .def_prop_ro("outputs",
                   [](const PlanHandle &p) { return p.plan->outputs; })
      .def_prop_ro(
          "buffers", [](const PlanHandle &p) { return buffersOf(*p.plan); },
          "{name: {'role', 'dtype', 'shape'}}, shapes symbolic.")
      .def_prop_ro("steps",
                   [](const PlanHandle &p) { return stepsOf(*p.plan); })
      .def("to_json", [](const PlanHandle &p) { return toJSON(*p.plan); })
      .def(
          "shapes",
          [](const PlanHandle &p, const std::map<std::string, int64_t> &dims) {
            const char *fn = "fp8kit.Plan.shapes";
            const ResolvedPlan r =
                resolved(*p.plan, dimsOf(*p.plan, dims, fn), fn);
            std::map<std::string, std::vector<int64_t>> out;
            for (const PlanBuffer &b : p.plan->buffers)
              out[b.name] = r.shapes.at(b.name);
            return out;
          },
          nb::arg("dims") = std::map<std::string, int64_t>{},
          "Every buffer's shape for these dimension sizes.")
      .def("compile", &compileKernels,
           nb::arg("dims") = std::map<std::string, int64_t>{},
           nb::arg("sm_count") = targetInfo(Arch::SM90a).smCount,
           "JIT-compiles every kernel of the plan (no GPU needed; "
           "fp8-run --compile-only) and describes each.")
      .def("run_cpu", &runOnCpu,
           nb::arg("dims") = std::map<std::string, int64_t>{},
           nb::arg("inputs").none() = nb::none(), nb::arg("seed") = 1,
           "Runs the plan on the CPU oracle; returns the graph outputs "
           "(float32 for bf16, uint8 FP8 codes). inputs: every input and "
           "weight by name, or None to draw them all at random (seeded).")
      .def("run_gpu", &runOnGpu,
           nb::arg("dims") = std::map<std::string, int64_t>{},
           nb::arg("inputs").none() = nb::none(), nb::arg("seed") = 1,
           "Runs the plan on the GPU as fp8-run does (set up, prepare steps, "
           "one run) and returns the graph outputs as run_cpu does; the "
           "same inputs (or seed) give the oracle's run to compare with.")
      .def("__repr__", [](const PlanHandle &p) {
        return "<fp8kit.Plan @" + p.plan->function + " for " +
               std::string(toString(p.plan->arch)) + ": " +
               std::to_string(p.plan->steps.size()) + " steps, " +
               std::to_string(p.plan->buffers.size()) + " buffers (" + p.where +
               ")>";
      });
}

} // namespace fp8::python
