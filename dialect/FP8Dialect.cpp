//===- FP8Dialect.cpp - The fp8 dialect -----------------------------------===//

#include "dialect/FP8Dialect.h"

#include "dialect/FP8Attrs.h"
#include "dialect/FP8Ops.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

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

//===----------------------------------------------------------------------===//
// Discardable attributes (docs/pipeline.md, "Annotating a model")
//===----------------------------------------------------------------------===//

LogicalResult FP8Dialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "fp8.recipe" && !isa<RecipeAttr>(attr.getValue()))
    return op->emitError("expected 'fp8.recipe' to be an #fp8.recipe "
                         "attribute, found ")
           << attr.getValue();
  if (name == "fp8.target") {
    auto s = dyn_cast<StringAttr>(attr.getValue());
    if (!s || !::fp8::parseArch(s.getValue().str()))
      return op->emitError("expected 'fp8.target' to be \"sm_90a\" or "
                           "\"sm_100a\", found ")
             << attr.getValue();
    if (!isa<ModuleOp>(op))
      return op->emitError("expected 'fp8.target' on a module, found it on ")
             << op->getName();
  }
  return success();
}

LogicalResult FP8Dialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != "fp8.weight" && name != "fp8.amax_history")
    return success();
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError("expected '") << name << "' on argument " << argIndex
                                       << " to be a unit attribute ({" << name
                                       << "}), found " << attr.getValue();
  // Argument attributes belong to functions (FunctionOpInterface).
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || regionIndex != 0)
    return success();
  if (!isa<RankedTensorType>(fn.getArgumentTypes()[argIndex]))
    return op->emitError("expected argument ")
           << argIndex << " marked '" << name
           << "' to be a ranked tensor, found "
           << fn.getArgumentTypes()[argIndex];
  return success();
}
