//===- ExportSteps.h - The plan step of an outlined op ----------*- C++ -*-===//
//
// What --fp8-to-plan makes of one op with an fp8.kernel: the step's kind,
// its spec and the values it reads and writes (passes/ExportPlan.cpp gives
// them buffers). Private to passes/.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_EXPORTSTEPS_H
#define FP8_PASSES_EXPORTSTEPS_H

#include "passes/KernelAttrs.h"

#include "runtime/plan/Plan.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::fp8 {

/// "<op name> at <file>:<line>:<column>" (the location when it has one).
std::string describe(Operation *op);

/// Fills `s` (kind, spec, `op`'s description; GEMMs: batch and tile source;
/// permute: align; interleave: block) and the values the step reads and
/// writes for `op`, whose fp8.kernel is `kernel`: the fused elementwise
/// op's inputs, a GEMM epilogue's quantize results, a permute's routing.
/// A quantize's amax history is the caller's. Errors name the op.
LogicalResult stepOf(Operation *op, const KernelRef &kernel, ::fp8::Arch arch,
                     ::fp8::PlanStep &s, SmallVector<Value> &ins,
                     SmallVector<Value> &outs);

} // namespace mlir::fp8

#endif // FP8_PASSES_EXPORTSTEPS_H
