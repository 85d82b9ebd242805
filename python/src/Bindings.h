//===- Bindings.h - The parts of the fp8kit._core extension -----*- C++ -*-===//
//
// Module.cpp, the one registration point, calls each of these on the
// module; each part lives in its own file.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PYTHON_BINDINGS_H
#define FP8_PYTHON_BINDINGS_H

#include <nanobind/nanobind.h>

namespace fp8::python {

/// Granularity, Scaling, QuantRecipe, Recipe (Recipes.cpp).
void bindRecipes(nanobind::module_ &m);
/// quantize, transpose, gemm on arrays; the device (TensorOps.cpp).
void bindTensorOps(nanobind::module_ &m);
/// grouped_gemm on arrays (GroupedOps.cpp).
void bindGroupedOps(nanobind::module_ &m);
/// Plan: load, inspect, compile its kernels, run on the CPU oracle
/// (Plans.cpp).
void bindPlans(nanobind::module_ &m);
/// BoundPlan: a plan bound to torch tensors (BoundPlans.cpp).
void bindBoundPlans(nanobind::module_ &m);
/// set_tuning_database, tune_on_first_use, stop_tuning_on_first_use
/// (Tuning.cpp).
void bindTuning(nanobind::module_ &m);
/// compile: an annotated model to a plan (Compiler.cpp; only where the MLIR
/// half is built).
void bindCompiler(nanobind::module_ &m);

} // namespace fp8::python

#endif // FP8_PYTHON_BINDINGS_H
