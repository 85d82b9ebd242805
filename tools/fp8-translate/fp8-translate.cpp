//===- fp8-translate.cpp - Plans and CUDA out of the fp8 pipeline ---------===//
//
//   fp8-translate --fp8-to-plan compiled.mlir > graph.plan.json
//   fp8-translate --fp8-to-cuda compiled.mlir > kernels.cu
//
// Input: the output of fp8-opt --fp8-compile{arch=...}. Exit codes: 0 ok,
// 1 a diagnostic (naming the op when the module has an op the runtime cannot
// execute), 2 a usage error. The input is read and bounded by
// tools/common/ToolInput.h; parsing and translating run on a large stack.
//
//===----------------------------------------------------------------------===//

#include "tools/common/RegisterAll.h"
#include "tools/common/ToolInput.h"

#include "passes/Export.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace {
/// --fp8-to-plan and --fp8-to-cuda.
void registerFP8Translations() {
  using namespace mlir;
  using namespace mlir::fp8;
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

} // namespace

int main(int argc, char **argv) {
  namespace cl = llvm::cl;
  llvm::InitLLVM init(argc, argv);
  registerFP8Translations();
  static cl::opt<std::string> inputFilename(
      cl::Positional, cl::desc("<input file>"), cl::init("-"));
  static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                             cl::value_desc("filename"),
                                             cl::init("-"));
  static cl::opt<bool> splitInputFile(
      "split-input-file",
      cl::desc("Translate each '// -----'-separated chunk of the input on "
               "its own"));
  static cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      cl::desc("Check the diagnostics against the input's expected-* "
               "comments"));
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerTranslationCLOptions();
  static cl::opt<const mlir::Translation *, false, mlir::TranslationParser>
      translation("", cl::desc("Translation to perform"), cl::Required);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "fp8 translation driver: plans and CUDA from the fp8 pipeline's IR",
          &llvm::errs()))
    return 2;

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::fp8::readToolInput(inputFilename, error);
  if (input)
    error = mlir::fp8::checkToolInput(inputFilename, *input);
  if (!error.empty()) {
    llvm::errs() << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }

  auto translateChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                            llvm::raw_ostream &os) -> mlir::LogicalResult {
    mlir::MLIRContext context;
    context.printOpOnDiagnostic(!verifyDiagnostics);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(chunk), llvm::SMLoc());
    if (!verifyDiagnostics) {
      mlir::SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
      return (*translation)(sourceMgr, os, &context);
    }
    mlir::SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
    (void)(*translation)(sourceMgr, os, &context);
    return handler.verify();
  };
  const llvm::StringRef marker =
      splitInputFile ? mlir::kDefaultSplitMarker : "";
  const int code = mlir::fp8::runOnToolStack([&] {
    return mlir::failed(mlir::splitAndProcessBuffer(
               std::move(input), translateChunk, output->os(), marker, marker))
               ? 1
               : 0;
  });
  if (code == 0)
    output->keep();
  return code;
}
