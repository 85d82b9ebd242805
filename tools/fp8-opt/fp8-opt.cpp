//===- fp8-opt.cpp - The fp8 optimizer driver -----------------------------===//
//
// mlir-opt with the fp8 dialect and passes: parses, verifies, runs passes and
// prints. Exits 1 with a diagnostic on any invalid input.
//
//===----------------------------------------------------------------------===//

#include "tools/common/RegisterAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::fp8::registerAllDialects(registry);
  mlir::fp8::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fp8 optimizer driver: the fp8 dialect and passes\n",
      registry));
}
