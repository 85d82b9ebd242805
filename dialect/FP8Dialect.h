//===- FP8Dialect.h - The fp8 dialect ---------------------------*- C++ -*-===//
//
// The `fp8` dialect: scaled FP8 matmul recipes as attributes and ops.
// Include dialect/FP8Attrs.h for the attributes, dialect/FP8Ops.h for the ops.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8DIALECT_H
#define FP8_DIALECT_FP8DIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialect/FP8OpsDialect.h.inc"

#endif // FP8_DIALECT_FP8DIALECT_H
