//===- SymbolicShapes.h - Sizes followed through a graph --------*- C++ -*-===//
//
// The sizes of a graph's tensors as the plan writes them: static, or a named
// dynamic size (M, M2, ...), times a routing's topK plus its padding,
// divided by a scale block. Every dynamic size of
// a function argument starts a class; tensor.empty, quantize, transpose,
// GEMM and elementwise ops join the classes their sizes must share, so that
// one run-time value (--dim M=...) sizes every tensor of a class.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_SYMBOLICSHAPES_H
#define FP8_PASSES_SYMBOLICSHAPES_H

#include "runtime/plan/Plan.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fp8 {

/// A dimension while sizes are followed: static (`value`), or
/// ceil((scale * class + value) / divisor) (the rows of an MoE layer's
/// permuted tokens are topK * M plus the routing's padding).
struct SymDim {
  int64_t value = 0;
  int cls = -1;
  int64_t divisor = 1;
  int64_t scale = 1;
  bool isStatic() const { return cls < 0; }
  /// The class itself (scale 1, no offset, no divisor).
  bool isPlain() const {
    return !isStatic() && divisor == 1 && scale == 1 && value == 0;
  }
};
using SymShape = SmallVector<SymDim>;

class SymbolicShapes {
public:
  /// Gives a function argument its shape: a fresh class per dynamic size.
  void addArgument(Value v, RankedTensorType type);
  /// Gives the results of `op` their shapes (the function's ops in order);
  /// an error names the op whose sizes cannot be followed.
  LogicalResult shape(Operation *op);
  /// The shape of `v` as the plan writes it; names its classes on first use.
  ::fp8::ShapeExpr shapeExpr(Value v);
  /// The names of the dynamic sizes, in the order they were first used.
  std::vector<std::string> dimNames();

private:
  int find(int c);
  void unite(int a, int b);
  SymShape fresh(RankedTensorType t);
  void unifyShapes(const SymShape &a, const SymShape &b);
  std::optional<SymDim> indexDim(Value v);
  FailureOr<SymShape> scaleShape(Operation *op, const SymShape &s,
                                 const ::fp8::Granularity &g);
  /// fp8.interleave_rows (twice the rows) and fp8.deinterleave_cols (the
  /// input's rows).
  LogicalResult pairShape(Operation *op);
  std::string className(int cls);

  std::vector<int> parent_;
  std::vector<int> classOrder_;
  std::map<int, std::string> classNames_;
  llvm::DenseMap<Value, SymShape> shapes_;
};

} // namespace mlir::fp8

#endif // FP8_PASSES_SYMBOLICSHAPES_H
