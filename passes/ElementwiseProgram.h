//===- ElementwiseProgram.h - Elementwise ops as codegen programs ---------===//
//
// Reads an elementwise op of the graph (a linalg op whose maps are
// identities and whose iterators are parallel, or an arith/math op on
// tensors) into codegen's EwProgram: one instruction per arith/math float op
// of its body, each rounded to its result type; block arguments become
// inputs, float constants constants.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_ELEMENTWISEPROGRAM_H
#define FP8_PASSES_ELEMENTWISEPROGRAM_H

#include "codegen/Elementwise.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::fp8 {

/// An elementwise op as a program over tensor inputs.
struct ElementwiseMatch {
  ::fp8::EwProgram program;
  llvm::SmallVector<Value> inputs; ///< the tensors read, in program order
  Value result;
};

/// True for the ops the outliner treats as elementwise: linalg ops with a
/// tensor result and only parallel iterators, arith/math ops with a tensor
/// result.
bool isElementwiseCandidate(Operation *op);

/// The program of an elementwise candidate, or failure with the reason
/// (an unsupported body op, a non-identity map, a captured value, more than
/// four inputs, an element type other than bf16/f16/f32).
FailureOr<ElementwiseMatch> matchElementwise(Operation *op, std::string &why);

} // namespace mlir::fp8

#endif // FP8_PASSES_ELEMENTWISEPROGRAM_H
