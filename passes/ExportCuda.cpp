//===- ExportCuda.cpp - The compiled IR as CUDA source --------------------===//
//
// The CUDA source of every kernel of the module, in op order, each once:
// the fp8.kernel specs handed to codegen (emitGemm, emitElementwise).
//
//===----------------------------------------------------------------------===//

#include "passes/Export.h"

#include "passes/KernelAttrs.h"

#include "codegen/Elementwise.h"
#include "codegen/Gemm.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::fp8;

LogicalResult mlir::fp8::translateToCuda(ModuleOp module,
                                         llvm::raw_ostream &os) {
  llvm::StringSet<> seen;
  int count = 0;
  WalkResult r = module.walk([&](Operation *op) {
    std::optional<KernelRef> k = getKernel(op);
    if (!k || !seen.insert(k->name).second)
      return WalkResult::advance();
    std::string source;
    if (k->kind == "gemm") {
      if (!k->gemm) {
        op->emitError("bad fp8.kernel: expected its spec to be a #fp8.gemm "
                      "attribute");
        return WalkResult::interrupt();
      }
      ::fp8::Expected<::fp8::GeneratedKernel> g = ::fp8::emitGemm(*k->gemm);
      if (!g) {
        op->emitError("cannot generate kernel ")
            << k->name << ": " << g.message();
        return WalkResult::interrupt();
      }
      source = g->source;
    } else {
      ::fp8::Expected<::fp8::ElementwiseSpec> spec =
          ::fp8::elementwiseSpecFromJSON(k->specJson);
      if (!spec) {
        op->emitError("bad fp8.kernel: ") << spec.message();
        return WalkResult::interrupt();
      }
      auto g = ::fp8::emitElementwise(*spec);
      if (!g) {
        op->emitError("cannot generate kernel ")
            << k->name << ": " << g.message();
        return WalkResult::interrupt();
      }
      source = (*g)[0].source; // one translation unit for its entry points
    }
    os << "// ===== kernel " << count++ << ": " << k->name << " (" << k->kind
       << ", " << op->getName() << ") =====\n"
       << source << "\n";
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  if (count == 0)
    return emitError(module.getLoc(),
                     "no fp8.kernel in the module (compile it with "
                     "fp8-opt --fp8-compile{arch=...} first)");
  return success();
}
