//===- Translations.h - fp8-translate's translations ------------*- C++ -*-===//
//
// Out of the fp8 pipeline's IR (after --fp8-compile):
//   --fp8-to-plan  the plan JSON fp8-run executes (runtime/plan/Plan.h)
//   --fp8-to-cuda  the CUDA source of every kernel (codegen/)
// Both are thin adapters: the kernels are the fp8.kernel attributes'
// specs, handed to codegen unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8TRANSLATE_TRANSLATIONS_H
#define FP8_TOOLS_FP8TRANSLATE_TRANSLATIONS_H

#include "runtime/plan/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp8 {

/// The plan of the module's graph: its one function that has kernels.
/// Diagnostics name the op that cannot be executed or described.
FailureOr<::fp8::Plan> buildPlan(ModuleOp module);

/// Registers --fp8-to-plan and --fp8-to-cuda.
void registerFP8Translations();

} // namespace mlir::fp8

#endif // FP8_TOOLS_FP8TRANSLATE_TRANSLATIONS_H
