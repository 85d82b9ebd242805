//===- Passes.h - fp8 passes ------------------------------------*- C++ -*-===//
//
// Declarations and registration of the passes of passes/Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_PASSES_H
#define FP8_PASSES_PASSES_H

#include "core/Target.h"

#include "mlir/Pass/Pass.h"

namespace mlir::fp8 {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every fp8 pass with the global pass registry.
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Registers the fp8-compile pipeline (passes/Pipelines.cpp).
void registerFP8Pipelines();

} // namespace mlir::fp8

#endif // FP8_PASSES_PASSES_H
