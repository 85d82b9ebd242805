//===- Module.cpp - fp8kit._core: the one registration point --------------===//
//
// The native half of the Python package fp8kit (python/fp8kit/ is the
// other). Importing it touches neither the GPU nor PyTorch: the CUDA driver
// is loaded at the first GPU call, which reports a missing one as an error.
//
//===----------------------------------------------------------------------===//

#include "python/src/Bindings.h"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "fp8kit's native extension: recipes, the FP8 kernels on tensors, "
            "plans and (where built) the compiler";
  // Objects a Python cache still holds at interpreter exit are not leaks
  // of ours; nanobind would list each.
  nb::set_leak_warnings(false);
  m.attr("__version__") = FP8_VERSION;
#ifdef FP8_PYTHON_COMPILER
  m.attr("has_compiler") = true;
#else
  m.attr("has_compiler") = false;
#endif
  fp8::python::bindRecipes(m);
  fp8::python::bindTensorOps(m);
  fp8::python::bindGroupedOps(m);
  fp8::python::bindPlans(m);
  fp8::python::bindBoundPlans(m);
  fp8::python::bindTuning(m);
#ifdef FP8_PYTHON_COMPILER
  fp8::python::bindCompiler(m);
#endif
}
