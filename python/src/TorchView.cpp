//===- TorchView.cpp - PyTorch tensors viewed without DLPack --------------===//
//
// A torch.Tensor argument is read through its own attributes (data_ptr,
// dtype, shape, stride, device) rather than through __dlpack__: PyTorch's
// __dlpack__ is Python code that checks and may synchronize streams, several
// microseconds a tensor, which a GEMM call of five tensors cannot afford
// (the call overhead budget of python/tests/test_gpu.py). The view and its
// checks are the same as for a DLPack array (Arrays.h).
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"

#include <cstring>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace fp8::python {

namespace {

/// torch.Tensor and torch.strided once torch is imported (null before: no
/// argument can then be a tensor). Held for the life of the process.
struct TorchTypes {
  PyObject *tensor = nullptr;
  PyObject *strided = nullptr;
};

const TorchTypes &torchTypes() {
  static TorchTypes t;
  if (t.tensor)
    return t;
  PyObject *mod = PyImport_GetModule(nb::str("torch").ptr());
  if (!mod) {
    PyErr_Clear();
    return t;
  }
  t.tensor = PyObject_GetAttrString(mod, "Tensor");
  t.strided = PyObject_GetAttrString(mod, "strided");
  Py_DECREF(mod);
  if (!t.tensor || !t.strided) {
    PyErr_Clear();
    t = TorchTypes();
  }
  return t;
}

/// A torch dtype's entry (its name without "torch.", its width), by the
/// dtype object (one per type for the life of the process).
struct TorchDType {
  PyObject *dtype;
  std::string name;
  int64_t itemBytes;
};

const TorchDType &dtypeOf(nb::handle dtype) {
  static std::vector<TorchDType> seen;
  for (const TorchDType &d : seen)
    if (d.dtype == dtype.ptr())
      return d;
  std::string name = nb::cast<std::string>(nb::str(dtype));
  if (name.rfind("torch.", 0) == 0)
    name = name.substr(6);
  const int64_t bytes = nb::cast<int64_t>(dtype.attr("itemsize"));
  seen.push_back({dtype.inc_ref().ptr(), name, bytes});
  return seen.back();
}

std::vector<int64_t> intTuple(nb::handle t) {
  std::vector<int64_t> v;
  const Py_ssize_t n = PyTuple_Size(t.ptr());
  if (n < 0)
    throw nb::python_error();
  v.reserve(size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i)
    v.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(t.ptr(), i)));
  return v;
}

} // namespace

bool isTorchTensor(nb::handle h) {
  const TorchTypes &t = torchTypes();
  return t.tensor && PyObject_IsInstance(h.ptr(), t.tensor) == 1;
}

Array viewTorch(nb::handle h, const char *fn, const char *name) {
  Array v;
  v.label = std::string(fn) + ": " + name;
  if (h.attr("layout").ptr() != torchTypes().strided)
    fail(v, "expected a strided (dense) tensor, found layout " +
                nb::cast<std::string>(nb::str(h.attr("layout"))));
  const TorchDType &d = dtypeOf(h.attr("dtype"));
  nameDType(v, d.name);
  v.itemBytes = d.itemBytes;
  v.shape = intTuple(h.attr("shape"));
  v.strides = intTuple(h.attr("stride")());
  if (nb::cast<bool>(h.attr("is_cuda"))) {
    v.where = Where::Cuda;
    v.device = nb::cast<int>(h.attr("get_device")());
  } else if (nb::cast<bool>(h.attr("is_cpu"))) {
    v.where = Where::Host;
  } else {
    fail(v, "expected a tensor in host memory or on a CUDA device, found "
            "one on " +
                nb::cast<std::string>(nb::str(h.attr("device"))));
  }
  v.data = reinterpret_cast<void *>(nb::cast<uintptr_t>(h.attr("data_ptr")()));
  return v;
}

} // namespace fp8::python
