//===- ElementwiseProgram.h - Elementwise ops as codegen programs ---------===//
//
// Reads an elementwise op of the graph (a linalg op whose iterators are
// parallel and whose inputs are read through identity maps or broadcast
// along the rows or columns, or an arith/math op on tensors) into codegen's
// EwProgram: one instruction per arith/math float op of its body, each
// rounded to its result type; block arguments become inputs, float
// constants constants. A row reduction (a sum along the last dimension)
// becomes the program of the value it sums.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_ELEMENTWISEPROGRAM_H
#define FP8_PASSES_ELEMENTWISEPROGRAM_H

#include "codegen/Elementwise.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::fp8 {

/// An elementwise op (or a row reduction) as a program over tensor inputs.
struct ElementwiseMatch {
  ::fp8::EwProgram program;
  llvm::SmallVector<Value> inputs; ///< the tensors read, in program order
  Value result;
  /// A reduction: the op that fills its sums with 0.0 (no kernel of its
  /// own: the reduce kernel writes every sum).
  Operation *init = nullptr;
};

/// True for the ops the outliner treats as elementwise: linalg ops with a
/// tensor result and only parallel iterators, arith/math ops with a tensor
/// result.
bool isElementwiseCandidate(Operation *op);

/// The program of an elementwise candidate, or failure with the reason
/// (an unsupported body op, a map other than an identity or a broadcast
/// along the rows or columns, a captured value, more than four inputs, an
/// element type other than bf16/f16/f32).
FailureOr<ElementwiseMatch> matchElementwise(Operation *op, std::string &why);

/// True for linalg ops whose iterators are parallel but the last, a
/// reduction (a row reduction: a norm's statistics).
bool isReductionCandidate(Operation *op);

/// A row sum: the program of the value a reduction candidate adds to its
/// accumulator (arith.addf), its f32 result indexed by every dimension but
/// the last, its init a fill of +0.0; or failure with the reason.
FailureOr<ElementwiseMatch> matchReduction(Operation *op, std::string &why);

/// The row sum that the elementwise op of `m` reads, for the quantize that
/// computes `m` to compute too (ElementwiseSpec::rowSum: an RMSNorm's sum
/// of squares and its normalization in one pass): an input broadcast along
/// the row, the result of a row sum (matchReduction) that nothing else
/// uses, whose inputs are among m's other inputs with the same broadcast.
/// Then `m` becomes the program with that sum as its last input and the
/// other inputs in their order (m.inputs without the sum), `rowSum` the
/// sum's program over them, and the reduction is returned; else nullptr,
/// `m` unchanged.
Operation *absorbRowSum(ElementwiseMatch &m, ::fp8::EwProgram &rowSum);

/// The fp8.transpose that alone reads the codes and the scales of
/// fp8.quantize `quantize`, in its block (what the quantize's kernel writes
/// transposed: ElementwiseSpec::transposed), or nullptr.
Operation *soleTransposeOf(Operation *quantize);

} // namespace mlir::fp8

#endif // FP8_PASSES_ELEMENTWISEPROGRAM_H
