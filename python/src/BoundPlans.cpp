//===- BoundPlans.cpp - Plans bound to torch tensors ----------------------===//
//
// fp8kit.BoundPlan (Plan.bind): a plan whose weights are torch CUDA tensors,
// bound once (runtime/plan/PlanBinding.h); each call takes the inputs as
// torch CUDA tensors, allocates the outputs with torch on the inputs'
// device and runs the plan's steps on the current CUDA stream, without
// copies. The tensors are checked first (role, element type, shape,
// contiguity, device), with errors naming the argument.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"
#include "python/src/Bindings.h"
#include "python/src/Plans.h"

#include "runtime/plan/PlanBinding.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <list>

namespace nb = nanobind;
using namespace nb::literals;

namespace fp8::python {

namespace {

const char *const kBind = "fp8kit.Plan.bind";
const char *const kCall = "fp8kit.BoundPlan";

nb::module_ torchModule(const char *fn) {
  try {
    return nb::module_::import_("torch");
  } catch (nb::python_error &) {
    throw nb::value_error((std::string(fn) + ": needs PyTorch (torch CUDA "
                                             "tensors in, torch tensors out)")
                              .c_str());
  }
}

/// A torch CUDA tensor for plan buffer `b`, on the runtime's device,
/// packed, of b's element type; `shape` when given.
Array viewBufferArg(nb::handle h, const PlanBuffer &b, const char *fn,
                    const char *label, const CudaDevice &dev,
                    const Shape *shape) {
  if (!isTorchTensor(h))
    throw nb::value_error((std::string(fn) + ": " + label +
                           ": expected a torch CUDA tensor, found " +
                           nb::cast<std::string>(nb::str(h.type())))
                              .c_str());
  Array a = viewTorch(h, fn, label);
  if (a.where != Where::Cuda || a.device != dev.ordinal)
    fail(a, "expected a tensor on cuda:" + std::to_string(dev.ordinal) +
                " (the runtime's device, FP8_DEVICE), found one on " +
                a.deviceName());
  expectDType(a, b.dtype);
  if (shape)
    expectShape(a, *shape);
  expectContiguous(a);
  return a;
}

DeviceSpan spanOf(const Array &a) {
  return {CUdeviceptr(reinterpret_cast<uintptr_t>(a.data)),
          a.elements() * a.itemBytes};
}

const CudaDevice &runtimeDevice(const char *fn) {
  Expected<const CudaDevice *> dev = CudaDevice::get();
  if (!dev)
    throw std::runtime_error(std::string(fn) +
                             ": no GPU to run the plan on: " + dev.message() +
                             " (Plan.run_cpu runs it on the CPU oracle)");
  return **dev;
}

/// What fp8kit.BoundPlan holds: the bound plan and the weight tensors it
/// points into, kept alive with it.
struct BoundHandle {
  PlanHandle plan;
  std::shared_ptr<BoundPlan> bound;
  nb::dict weights;
};

BoundHandle bindWeights(const PlanHandle &p, const nb::dict &weights) {
  const Plan &plan = *p.plan;
  // The names first (no GPU needed to get them wrong), then the tensors.
  std::map<std::string, nb::handle> given;
  for (auto [key, value] : weights) {
    if (!nb::isinstance<nb::str>(key))
      throw nb::value_error((std::string(kBind) +
                             ": weights: expected "
                             "names (str) as keys, found " +
                             nb::cast<std::string>(nb::str(key.type())))
                                .c_str());
    const std::string name = nb::cast<std::string>(key);
    const PlanBuffer *b = plan.buffer(name);
    if (!b || b->role != BufferRole::Weight)
      throw nb::value_error((std::string(kBind) + ": weights: '" + name +
                             "' is not a weight of the plan")
                                .c_str());
    given[name] = value;
  }
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Weight && !given.count(b.name))
      throw nb::value_error((std::string(kBind) + ": weights: missing '" +
                             b.name + "' (" + std::string(toString(b.dtype)) +
                             ")")
                                .c_str());
  const CudaDevice &dev = runtimeDevice(kBind);
  std::map<std::string, DeviceSpan> spans;
  std::list<std::string> labels; // outlive the views
  for (const auto &[name, value] : given) {
    const PlanBuffer &b = *plan.buffer(name);
    Expected<Shape> shape = resolveShape(b.shape, {});
    if (!shape)
      throw nb::value_error(
          (std::string(kBind) + ": weights['" + name + "']: " + shape.message())
              .c_str());
    labels.push_back("weights['" + name + "']");
    spans[name] = spanOf(
        viewBufferArg(value, b, kBind, labels.back().c_str(), dev, &*shape));
  }
  Expected<std::unique_ptr<BoundPlan>> bound = BoundPlan::create(p.plan, spans);
  throwIfFailed(bound.status(), kBind);
  return {p, std::shared_ptr<BoundPlan>(std::move(*bound)), weights};
}

/// The current raw CUDA stream of `device` in torch.
uintptr_t currentStream(nb::module_ &torch, int device) {
  nb::object c = torch.attr("_C");
  if (nb::hasattr(c, "_cuda_getCurrentRawStream"))
    return nb::cast<uintptr_t>(c.attr("_cuda_getCurrentRawStream")(device));
  return nb::cast<uintptr_t>(
      torch.attr("cuda").attr("current_stream")(device).attr("cuda_stream"));
}

nb::dict runBound(BoundHandle &h, const nb::dict &inputs,
                  const std::optional<std::map<std::string, int64_t>> &dims,
                  bool graph) {
  const Plan &plan = *h.plan.plan;
  const CudaDevice &dev = runtimeDevice(kCall);
  nb::module_ torch = torchModule(kCall);
  std::map<std::string, Shape> shapes;
  std::map<std::string, DeviceSpan> io;
  std::list<std::string> labels;
  for (auto [key, value] : inputs) {
    const std::string name = nb::cast<std::string>(key);
    const PlanBuffer *b = plan.buffer(name);
    if (!b || b->role != BufferRole::Input)
      throw nb::value_error((std::string(kCall) + ": '" + name +
                             "' is not an input of the plan" +
                             (b && b->role == BufferRole::Weight
                                  ? " (a weight: bound by Plan.bind)"
                                  : ""))
                                .c_str());
    labels.push_back("inputs['" + name + "']");
    Array a =
        viewBufferArg(value, *b, kCall, labels.back().c_str(), dev, nullptr);
    shapes[name] = a.shape;
    io[name] = spanOf(a);
  }
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Input && !io.count(b.name))
      throw nb::value_error(
          (std::string(kCall) + ": missing input '" + b.name + "'").c_str());
  Expected<DimValues> dv = h.bound->dimsOf(shapes, dims.value_or(DimValues{}));
  throwIfError(dv.status(), kCall);
  Expected<const ResolvedPlan *> resolved = h.bound->shapes(*dv);
  throwIfError(resolved.status(), kCall);
  // The outputs, allocated by torch where the inputs are.
  nb::dict out;
  nb::object device = torch.attr("device")("cuda", dev.ordinal);
  for (const std::string &name : plan.outputs) {
    const PlanBuffer &b = *plan.buffer(name);
    nb::object dtype =
        nb::hasattr(torch, torchName(b.dtype))
            ? torch.attr(torchName(b.dtype))
            : torch.attr("uint8"); // UE8M0 before torch has float8_e8m0fnu
    nb::list shape;
    for (int64_t d : (*resolved)->shapes.at(name))
      shape.append(d);
    nb::object t = torch.attr("empty")(nb::tuple(shape), "dtype"_a = dtype,
                                       "device"_a = device);
    io[name] = {CUdeviceptr(nb::cast<uintptr_t>(t.attr("data_ptr")())),
                bytesOf(b.dtype, elementCount((*resolved)->shapes.at(name)))};
    out[name.c_str()] = t;
  }
  const CUstream stream =
      reinterpret_cast<CUstream>(currentStream(torch, dev.ordinal));
  Status s;
  {
    nb::gil_scoped_release release;
    s = h.bound->run(*dv, io, stream, graph);
  }
  throwIfFailed(s, kCall);
  return out;
}

} // namespace

void bindBoundPlans(nb::module_ &m) {
  nb::class_<BoundHandle>(
      m, "BoundPlan",
      "A plan bound to its weights (torch CUDA tensors, kept alive here; "
      "Plan.bind makes one). Calling it runs the plan on torch CUDA "
      "tensors on the current stream and returns the outputs by name.")
      .def_prop_ro("plan", [](const BoundHandle &h) { return h.plan; })
      .def_prop_ro(
          "instances",
          [](const BoundHandle &h) { return h.bound->instances(); },
          "The sets of dims set up so far (each holds its temps).")
      .def("run", &runBound, nb::arg("inputs"),
           nb::arg("dims").none() = nb::none(), nb::arg("graph") = false,
           "Runs the plan: inputs by name (torch CUDA tensors); dims from "
           "their shapes unless given. graph=True runs it as a CUDA graph "
           "(one per set of dims, from its second call on) over buffers of "
           "its own, the inputs copied in and the outputs out: one launch "
           "instead of one a step, for decode-sized runs. Returns "
           "{output: tensor}.")
      .def(
          "__call__",
          [](BoundHandle &h, nb::kwargs inputs) {
            return runBound(h, inputs, std::nullopt, false);
          },
          "bound(x=tensor, ...): run(inputs) with the inputs as keywords.")
      .def("__repr__", [](const BoundHandle &h) {
        return "<fp8kit.BoundPlan @" + h.plan.plan->function + ", " +
               std::to_string(h.bound->instances()) + " sets of dims>";
      });
}

void bindPlanBind(nb::class_<PlanHandle> &cls) {
  cls.def("bind", &bindWeights, nb::arg("weights"),
          "Binds the plan's weights ({name: torch CUDA tensor}, each of the "
          "plan's dtype and shape; kept alive, not copied) and returns a "
          "BoundPlan; the prepare steps (weight quantization) run at its "
          "first call.");
}

} // namespace fp8::python
