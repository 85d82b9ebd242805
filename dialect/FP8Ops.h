//===- FP8Ops.h - fp8 dialect operations ------------------------*- C++ -*-===//
//
// fp8.quantize, fp8.dequantize, fp8.scaled_matmul,
// fp8.grouped_scaled_matmul.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8OPS_H
#define FP8_DIALECT_FP8OPS_H

#include "core/RecipeRules.h"
#include "dialect/FP8Attrs.h"
#include "dialect/FP8Dialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialect/FP8Ops.h.inc"

#endif // FP8_DIALECT_FP8OPS_H
