//===- fp8-translate.cpp - Plans and CUDA out of the fp8 pipeline ---------===//
//
//   fp8-translate --fp8-to-plan compiled.mlir > graph.plan.json
//   fp8-translate --fp8-to-cuda compiled.mlir > kernels.cu
//
// Input: the output of fp8-opt --fp8-compile{arch=...}. Exits 1 with a
// diagnostic naming the op when the module has an op the runtime cannot
// execute.
//
//===----------------------------------------------------------------------===//

#include "tools/common/RegisterAll.h"
#include "tools/fp8-translate/Translations.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

namespace mlir::fp8 {
LogicalResult translateToCuda(ModuleOp module, llvm::raw_ostream &os);
} // namespace mlir::fp8

void mlir::fp8::registerFP8Translations() {
  auto dialects = [](DialectRegistry &registry) {
    registerAllDialects(registry);
  };
  static TranslateFromMLIRRegistration toPlan(
      "fp8-to-plan",
      "Writes the plan (JSON: buffers, dynamic dims, steps, kernel specs, the "
      "unquantized reference) that fp8-run executes",
      [](ModuleOp module, llvm::raw_ostream &os) -> LogicalResult {
        FailureOr<::fp8::Plan> plan = buildPlan(module);
        if (failed(plan))
          return failure();
        os << ::fp8::toJSON(*plan);
        return success();
      },
      dialects);
  static TranslateFromMLIRRegistration toCuda(
      "fp8-to-cuda", "Prints the CUDA source of every kernel",
      [](ModuleOp module, llvm::raw_ostream &os) {
        return translateToCuda(module, os);
      },
      dialects);
}

int main(int argc, char **argv) {
  mlir::fp8::registerFP8Translations();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv,
      "fp8 translation driver: plans and CUDA from the fp8 "
      "pipeline's IR"));
}
