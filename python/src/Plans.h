//===- Plans.h - fp8kit.Plan's object --------------------------*- C++ -*-===//
#ifndef FP8_PYTHON_PLANS_H
#define FP8_PYTHON_PLANS_H

#include "runtime/plan/Plan.h"

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

namespace fp8::python {

/// What a fp8kit.Plan holds: the validated plan (shared, immutable) and
/// where it came from (a path, "<string>", "compiled from <file>").
struct PlanHandle {
  std::shared_ptr<const Plan> plan;
  std::string where;
};

/// A handle on `plan` (the compiler's result).
PlanHandle planHandle(Plan plan, std::string where);

/// Plan.bind (BoundPlans.cpp), added to the class bindPlans makes.
void bindPlanBind(nanobind::class_<PlanHandle> &cls);

} // namespace fp8::python

#endif // FP8_PYTHON_PLANS_H
