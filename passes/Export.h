//===- Export.h - The compiled IR as a plan and as CUDA ---------*- C++ -*-===//
//
// Out of the fp8 pipeline's IR (after --fp8-compile), what fp8-translate
// writes and a binding can call:
//   buildPlan        the plan fp8-run executes (runtime/plan/Plan.h)
//   translateToCuda  the CUDA source of every kernel (codegen/)
// The kernels are the fp8.kernel attributes' specs, handed to codegen
// unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_EXPORT_H
#define FP8_PASSES_EXPORT_H

#include "runtime/plan/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp8 {

/// The plan of the module's graph: its one function that has kernels.
/// Diagnostics name the op that cannot be executed or described.
FailureOr<::fp8::Plan> buildPlan(ModuleOp module);

/// The CUDA source of every kernel of the module, in op order, each once.
/// Diagnostics name the op whose spec codegen refuses.
LogicalResult translateToCuda(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::fp8

#endif // FP8_PASSES_EXPORT_H
