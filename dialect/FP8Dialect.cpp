//===- FP8Dialect.cpp - The fp8 dialect -----------------------------------===//

#include "dialect/FP8Dialect.h"

#include "dialect/FP8Attrs.h"
#include "dialect/FP8Ops.h"

using namespace mlir;
using namespace mlir::fp8;

#include "dialect/FP8OpsDialect.cpp.inc"

void FP8Dialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialect/FP8Ops.cpp.inc"
      >();
}
