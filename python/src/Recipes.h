//===- Recipes.h - Recipe arguments of the extension ------------*- C++ -*-===//
//
// The conversions every binding uses to read a recipe argument: an object of
// the bound class or, where a name is enough, its spelling. Errors raise
// ValueError naming `what` (the function or class).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PYTHON_RECIPES_H
#define FP8_PYTHON_RECIPES_H

#include "core/Recipe.h"
#include "core/RecipeSpelling.h"

#include <nanobind/nanobind.h>

#include <string>

namespace fp8::python {

/// fp8kit.Scaling: a scaling mode and its delayed-scaling parameters.
struct ScalingSpec {
  ScalingMode mode = ScalingMode::Current;
  DelayedScaling delayed;
  std::string spelling() const { return dialectSpelling(mode, delayed); }
};

/// A Granularity or its name ('1x128').
Granularity toGranularity(nanobind::handle h, const char *what);
/// A Scaling, 'current', 'delayed' or None (current).
ScalingSpec toScaling(nanobind::handle h, const char *what);
/// A QuantRecipe, or a granularity (E4M3, current scaling).
QuantRecipe toQuantRecipe(nanobind::handle h, const char *what);
/// 'e4m3fn' or 'e5m2'.
DType parseFormat(const std::string &s, const char *what);

} // namespace fp8::python

#endif // FP8_PYTHON_RECIPES_H
