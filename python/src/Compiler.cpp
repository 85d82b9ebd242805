//===- Compiler.cpp - The compiler from Python (MLIR builds only) ---------===//
//
// fp8kit.compile: an FP8-annotated model (.mlir text) through the fp8-compile
// pipeline (passes/Pipelines.cpp, the options fp8-opt takes) to the plan
// fp8-translate --fp8-to-plan writes. The input gets the MLIR tools' checks
// (tools/common/ToolInput.h: size, bytecode, nesting) and is compiled on
// their large stack; diagnostics come back in the ValueError, with the
// file, line and column.
//
//===----------------------------------------------------------------------===//

#include "python/src/Bindings.h"
#include "python/src/Plans.h"

#include "passes/Export.h"
#include "runtime/plan/Plan.h"
#include "tools/common/RegisterAll.h"
#include "tools/common/ToolInput.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <mutex>
#include <optional>

namespace nb = nanobind;

namespace fp8::python {

namespace {

/// The options of --fp8-compile given (passes/Pipelines.cpp,
/// CompileOptions, holds the defaults of the others).
struct CompileOptions {
  std::optional<std::string> arch, tuningDb;
  std::optional<int> smCount;
  std::optional<int64_t> mHint;
  std::optional<bool> fuseElementwise, fuseResidual, fuseEpilogue,
      foldConstants;
};

std::string pipelineOf(const CompileOptions &o) {
  std::string options;
  auto add = [&](const char *key, const std::string &value) {
    options += (options.empty() ? "" : " ") + std::string(key) + "=" + value;
  };
  auto flag = [&](const char *key, const std::optional<bool> &b) {
    if (b)
      add(key, *b ? "true" : "false");
  };
  if (o.arch)
    add("arch", *o.arch);
  if (o.tuningDb)
    add("tuning-db", "\"" + *o.tuningDb + "\"");
  if (o.smCount)
    add("sm-count", std::to_string(*o.smCount));
  if (o.mHint)
    add("m-hint", std::to_string(*o.mHint));
  flag("fuse-elementwise", o.fuseElementwise);
  flag("fuse-residual", o.fuseResidual);
  flag("fuse-epilogue", o.fuseEpilogue);
  flag("fold-constants", o.foldConstants);
  // The pass manager is anchored on the module already.
  return "fp8-compile{" + options + "}";
}

Status checkOptions(const CompileOptions &o) {
  if (o.arch && !parseArch(*o.arch))
    return errorf("expected arch 'sm_90a' or 'sm_100a', found '", *o.arch, "'");
  if (o.tuningDb && o.tuningDb->find_first_of("\"{}\n") != std::string::npos)
    return errorf("expected a tuning database path without quotes, braces "
                  "or newlines, found '",
                  *o.tuningDb, "'");
  if (o.smCount && (*o.smCount < 1 || *o.smCount > 4096))
    return errorf("expected sm_count in [1, 4096], found ", *o.smCount);
  if (o.mHint && (*o.mHint < 0 || *o.mHint >= kMaxDimSize))
    return errorf("expected m_hint in [0, 2^40), found ", *o.mHint);
  return Status::ok();
}

/// The passes are registered once per process (their registry is global).
void registerOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mlir::fp8::registerAllPasses(); });
}

/// Compiles `buffer` (named `name`); the diagnostics go to `diagnostics`.
Expected<Plan> compileBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                             const std::string &name, const CompileOptions &o) {
  FP8_RETURN_IF_ERROR(checkOptions(o));
  const std::string inputError = mlir::fp8::checkToolInput(name, *buffer);
  if (!inputError.empty())
    return errorf(inputError);
  registerOnce();
  std::string diagnostics;
  std::optional<Plan> plan;
  mlir::fp8::runOnToolStack([&] {
    mlir::DialectRegistry registry;
    mlir::fp8::registerAllDialects(registry);
    mlir::MLIRContext ctx(registry);
    ctx.printOpOnDiagnostic(false);
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    llvm::raw_string_ostream os(diagnostics);
    mlir::SourceMgrDiagnosticHandler handler(sources, &ctx, os);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(sources, &ctx);
    if (!module)
      return 1;
    mlir::PassManager pm(&ctx);
    if (mlir::failed(mlir::parsePassPipeline(pipelineOf(o), pm, os)) ||
        mlir::failed(pm.run(*module)))
      return 1;
    mlir::FailureOr<Plan> built = mlir::fp8::buildPlan(*module);
    if (mlir::failed(built))
      return 1;
    plan = std::move(*built);
    return 0;
  });
  if (!plan)
    return errorf("cannot compile ", name, ":\n", diagnostics);
  return std::move(*plan);
}

PlanHandle compile(const std::string &source, bool isPath,
                   const std::string &name, const CompileOptions &o) {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::string where = name;
  if (isPath) {
    std::string error;
    buffer = mlir::fp8::readToolInput(source, error);
    if (!buffer)
      throw nb::value_error(("fp8kit.compile: " + error).c_str());
    where = source;
  } else {
    if (source.size() > mlir::fp8::kMaxInputBytes)
      throw nb::value_error(("fp8kit.compile: expected at most " +
                             std::to_string(mlir::fp8::kMaxInputBytes) +
                             " bytes of MLIR, found " +
                             std::to_string(source.size()))
                                .c_str());
    buffer = llvm::MemoryBuffer::getMemBufferCopy(source, name);
  }
  Expected<Plan> plan = [&] {
    nb::gil_scoped_release release;
    return compileBuffer(std::move(buffer), where, o);
  }();
  if (!plan)
    throw nb::value_error(("fp8kit.compile: " + plan.message()).c_str());
  return planHandle(std::move(*plan), "compiled from " + where);
}

} // namespace

void bindCompiler(nb::module_ &m) {
  m.def(
      "compile",
      [](const std::string &source, bool isPath, const std::string &name,
         std::optional<std::string> arch, std::optional<std::string> tuningDb,
         std::optional<int> smCount, std::optional<int64_t> mHint,
         std::optional<bool> fuseElementwise, std::optional<bool> fuseResidual,
         std::optional<bool> fuseEpilogue, std::optional<bool> foldConstants) {
        CompileOptions o{arch,         tuningDb,        smCount,
                         mHint,        fuseElementwise, fuseResidual,
                         fuseEpilogue, foldConstants};
        return compile(source, isPath, name, o);
      },
      nb::arg("source"), nb::arg("is_path"), nb::arg("name") = "<string>",
      nb::arg("arch").none() = nb::none(),
      nb::arg("tuning_db").none() = nb::none(),
      nb::arg("sm_count").none() = nb::none(),
      nb::arg("m_hint").none() = nb::none(),
      nb::arg("fuse_elementwise").none() = nb::none(),
      nb::arg("fuse_residual").none() = nb::none(),
      nb::arg("fuse_epilogue").none() = nb::none(),
      nb::arg("fold_constants").none() = nb::none(),
      "Compiles an FP8-annotated model (MLIR text, or a path with "
      "is_path=True) with the fp8-compile pipeline into a Plan; options "
      "left None take fp8-compile's defaults.");
}

} // namespace fp8::python
