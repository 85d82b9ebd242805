//===- fp8-opt.cpp - The fp8 optimizer driver -----------------------------===//
//
// mlir-opt with the fp8 dialect and passes: parses, verifies, runs passes and
// prints. Exit codes: 0 ok, 1 an error in the input or a pass, 2 a usage
// error. The input is read and bounded by tools/common/ToolInput.h (a
// regular file or stdin, text, bounded size and nesting); parsing, passes
// and printing run on a large stack.
//
//===----------------------------------------------------------------------===//

#include "tools/common/RegisterAll.h"
#include "tools/common/ToolInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  mlir::fp8::registerAllDialects(registry);
  mlir::fp8::registerAllPasses();

  static llvm::cl::opt<std::string> inputFilename(
      llvm::cl::Positional, llvm::cl::desc("<input file>"),
      llvm::cl::init("-"));
  static llvm::cl::opt<std::string> outputFilename(
      "o", llvm::cl::desc("Output filename"), llvm::cl::value_desc("filename"),
      llvm::cl::init("-"));
  const std::string help = mlir::registerCLIOptions(
      "fp8 optimizer driver: the fp8 dialect and passes\n", registry);
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, help, &llvm::errs()))
    return 2;
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (!config.shouldShowDialects() && !config.shouldListPasses()) {
    input = mlir::fp8::readToolInput(inputFilename, error);
    if (input)
      error = mlir::fp8::checkToolInput(inputFilename, *input);
    if (!error.empty()) {
      llvm::errs() << error << "\n";
      return 1;
    }
  } else {
    input = llvm::MemoryBuffer::getMemBuffer("");
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  const int code = mlir::fp8::runOnToolStack([&] {
    return mlir::failed(mlir::MlirOptMain(output->os(), std::move(input),
                                          registry, config))
               ? 1
               : 0;
  });
  if (code == 0)
    output->keep();
  return code;
}
