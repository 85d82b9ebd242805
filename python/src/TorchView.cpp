//===- TorchView.cpp - PyTorch tensors viewed without DLPack --------------===//
//
// A torch.Tensor argument is read through its own attributes (data_ptr,
// dtype, shape, stride, device) rather than through __dlpack__: PyTorch's
// __dlpack__ is Python code that checks and may synchronize streams, several
// microseconds a tensor, which a GEMM call of five tensors cannot afford
// (the call overhead budget of python/tests/test_gpu.py). The view and its
// checks are the same as for a DLPack array (Arrays.h). A sparse tensor has
// no strides: refused, naming the argument.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"

#include <cstring>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace fp8::python {

namespace {

/// torch.Tensor once torch is imported (null before: no argument can then
/// be a tensor). Held for the life of the process.
PyObject *torchTensorType() {
  static PyObject *tensor = nullptr;
  if (tensor)
    return tensor;
  PyObject *mod = PyImport_GetModule(nb::str("torch").ptr());
  if (!mod) {
    PyErr_Clear();
    return nullptr;
  }
  tensor = PyObject_GetAttrString(mod, "Tensor");
  Py_DECREF(mod);
  if (!tensor)
    PyErr_Clear();
  return tensor;
}

/// A torch dtype's view fields (its name without "torch.", our element
/// type, its width), by the dtype object (one per type for the life of the
/// process): resolved once, copied into each view.
struct TorchDType {
  PyObject *dtype;
  Array fields;
};

const Array &dtypeOf(nb::handle dtype) {
  static std::vector<TorchDType> seen;
  for (const TorchDType &d : seen)
    if (d.dtype == dtype.ptr())
      return d.fields;
  std::string name = nb::cast<std::string>(nb::str(dtype));
  if (name.rfind("torch.", 0) == 0)
    name = name.substr(6);
  TorchDType d{dtype.inc_ref().ptr(), {}};
  nameDType(d.fields, name);
  d.fields.itemBytes = nb::cast<int64_t>(dtype.attr("itemsize"));
  seen.push_back(std::move(d));
  return seen.back().fields;
}

nb::handle intern(const char *s) { return PyUnicode_InternFromString(s); }

/// h.name() without a bound method object in between.
nb::object callNoArgs(nb::handle h, nb::handle name) {
  PyObject *args[] = {h.ptr()};
  PyObject *r = PyObject_VectorcallMethod(name.ptr(), args, 1, nullptr);
  if (!r)
    throw nb::python_error();
  return nb::steal(r);
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
  PyObject *tensor = torchTensorType();
  return tensor && (Py_TYPE(h.ptr()) == (PyTypeObject *)tensor ||
                    PyObject_IsInstance(h.ptr(), tensor) == 1);
}

Array viewTorch(nb::handle h, const char *fn, const char *name) {
  // Attribute names made once (a lookup by a C string builds one a call),
  // never freed (no destructor runs after the interpreter is gone).
  static const nb::handle kDType = intern("dtype"), kShape = intern("shape"),
                          kStride = intern("stride"),
                          kIsCuda = intern("is_cuda"),
                          kIsCpu = intern("is_cpu"),
                          kGetDevice = intern("get_device"),
                          kDataPtr = intern("data_ptr"),
                          kDevice = intern("device");
  Array v;
  v.fn = fn;
  v.name = name;
  const Array &d = dtypeOf(h.attr(kDType));
  v.dtype = d.dtype;
  v.rawBits = d.rawBits;
  v.dtypeName = d.dtypeName;
  v.itemBytes = d.itemBytes;
  v.shape = intTuple(h.attr(kShape));
  try {
    v.strides = intTuple(callNoArgs(h, kStride));
  } catch (nb::python_error &e) { // sparse and other layouts have none
    fail(v, std::string("expected a strided (dense) tensor: ") + e.what());
  }
  if (h.attr(kIsCuda).ptr() == Py_True) {
    v.where = Where::Cuda;
    v.device = nb::cast<int>(callNoArgs(h, kGetDevice));
  } else if (h.attr(kIsCpu).ptr() == Py_True) {
    v.where = Where::Host;
  } else {
    fail(v, "expected a tensor in host memory or on a CUDA device, found "
            "one on " +
                nb::cast<std::string>(nb::str(h.attr(kDevice))));
  }
  v.data =
      reinterpret_cast<void *>(nb::cast<uintptr_t>(callNoArgs(h, kDataPtr)));
  return v;
}

} // namespace fp8::python
