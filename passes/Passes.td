//===- Passes.td - fp8 passes ------------------------------*- tablegen -*-===//
//
// Every pass of the toolkit, declared here (STYLE.md): name `fp8-<verb>-<noun>`,
// options in `let options` (kebab-case on the command line), complete
// `dependentDialects`, one .cpp per pass. None has landed yet; the
// registration (registerFP8Passes, called by tools/common/RegisterAll.cpp)
// and the generated docs (docs/generated/FP8Passes.md) are in place for the
// first one.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_PASSES_TD
#define FP8_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // FP8_PASSES_PASSES_TD
