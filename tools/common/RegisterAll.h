//===- RegisterAll.h - One registration point for MLIR tools ----*- C++ -*-===//
//
// Every MLIR tool of the toolkit (fp8-opt, fp8-translate, ...) registers the
// same dialects and passes through these two functions, so a dialect a pass
// needs is never missing from one tool only.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_COMMON_REGISTERALL_H
#define FP8_TOOLS_COMMON_REGISTERALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::fp8 {

/// Inserts `fp8` and the upstream dialects the passes produce or consume:
/// func, cf, arith, math, tensor, linalg, bufferization.
void registerAllDialects(DialectRegistry &registry);

/// Registers the fp8 passes and the upstream ones worth running between
/// them (canonicalize, cse, ...).
void registerAllPasses();

} // namespace mlir::fp8

#endif // FP8_TOOLS_COMMON_REGISTERALL_H
