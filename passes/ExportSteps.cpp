//===- ExportSteps.cpp - The plan step of an outlined op ------------------===//

#include "passes/ExportSteps.h"

#include "passes/ElementwiseProgram.h"
#include "passes/EpilogueChain.h"

#include "dialect/FP8Attrs.h"
#include "dialect/FP8Ops.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::fp8;

std::string mlir::fp8::describe(Operation *op) {
  std::string s = op->getName().getStringRef().str();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    s += " at " +
         llvm::sys::path::filename(loc.getFilename().getValue()).str() + ":" +
         std::to_string(loc.getLine()) + ":" + std::to_string(loc.getColumn());
  return s;
}

LogicalResult mlir::fp8::stepOf(Operation *op, const KernelRef &kernel,
                                ::fp8::Arch arch, ::fp8::PlanStep &s,
                                SmallVector<Value> &ins,
                                SmallVector<Value> &outs) {
  if (kernel.kind == "gemm") {
    if (!kernel.gemm)
      return op->emitError("bad fp8.kernel: expected its spec to be a "
                           "#fp8.gemm attribute");
    auto grouped = dyn_cast<GroupedScaledMatmulOp>(op);
    // Groups from a plan tensor: offsets (contiguous, along K) or valid
    // rows (masked), the step's fifth input.
    const bool dataGroups = grouped && !isFullBatch(grouped) &&
                            kernel.gemm->kind == toRecipe(grouped.getMode());
    if (!isa<ScaledMatmulOp>(op) && !(grouped && isFullBatch(grouped)) &&
        !dataGroups) {
      std::string why;
      FailureOr<::fp8::KernelSpec> derived = gemmSpecOf(op, arch, why);
      if (succeeded(derived))
        why = "its fp8.kernel is a " +
              std::string(::fp8::toString(kernel.gemm->kind)) +
              " GEMM, expected a " +
              std::string(::fp8::toString(derived->kind)) + " one (the op's)";
      return op->emitError("the runtime cannot execute this GEMM: ") << why;
    }
    s.kind = ::fp8::StepKind::Gemm;
    s.gemm = *kernel.gemm;
    s.batch = batchOf(op);
    if (auto src = op->getAttrOfType<StringAttr>(kTileSourceAttr)) {
      s.tileSource = src.getValue().str();
      s.runtimeTile = src.getValue() == "runtime";
    }
    outs = {op->getResult(0)};
    if (auto mm = dyn_cast<ScaledMatmulOp>(op)) {
      ins = {mm.getA(), mm.getAScale(), mm.getB(), mm.getBScale()};
      if (mm.getC())
        ins.push_back(mm.getC());
      if (s.gemm.epilogue) {
        // The epilogue writes the quantize's codes and scales.
        std::string why;
        FailureOr<EpilogueChain> chain = epilogueChainOf(mm, why);
        if (failed(chain))
          return op->emitError("the chain of this GEMM's epilogue no "
                               "longer holds: ")
                 << why;
        outs = {chain->quantize.getOutput(), chain->quantize.getScale()};
        s.op += " (fused: " +
                (chain->program ? describe(chain->program) + ", " : "") +
                describe(chain->quantize) + ")";
      }
    } else {
      auto g = cast<GroupedScaledMatmulOp>(op);
      ins = {g.getA(), g.getAScale(), g.getB(), g.getBScale()};
      if (dataGroups)
        ins.push_back(g.getGroups());
    }
  } else {
    ::fp8::Expected<::fp8::ElementwiseSpec> spec =
        ::fp8::elementwiseSpecFromJSON(kernel.specJson);
    if (!spec)
      return op->emitError("bad fp8.kernel: ") << spec.message();
    s.aux = *spec;
    auto q = dyn_cast<QuantizeOp>(op);
    MoePermuteOp permute =
        q ? q.getInput().getDefiningOp<MoePermuteOp>() : MoePermuteOp();
    if (permute) {
      // Route, gather and quantize: one step (OutlineKernels fused them).
      s.kind = ::fp8::StepKind::Permute;
      s.align = permute.getAlign();
      s.op += " (fused: " + describe(permute) + ")";
      ins = {permute.getX(), permute.getIds()};
      outs = {q.getOutput(), q.getScale(), permute.getOffsets(),
              permute.getPositions()};
    } else if (auto u = dyn_cast<MoeUnpermuteOp>(op)) {
      s.kind = ::fp8::StepKind::Unpermute;
      ins = {u.getY(), u.getPositions(), u.getWeights()};
      outs = {u.getOut()};
    } else if (q) {
      s.kind = ::fp8::StepKind::Quantize;
      std::string fusedOps; // what the kernel computes besides the quantize
      Operation *def = q.getInput().getDefiningOp();
      if (def && def->hasAttr(kFusedIntoAttr)) {
        std::string why;
        FailureOr<ElementwiseMatch> m = matchElementwise(def, why);
        // The row sum the kernel computes (OutlineKernels absorbed it).
        ::fp8::EwProgram sum;
        Operation *red =
            succeeded(m) && s.aux.rowSum ? absorbRowSum(*m, sum) : nullptr;
        if (failed(m) || !(m->program == s.aux.program) ||
            (s.aux.rowSum && (!red || !(sum == *s.aux.rowSum))))
          return def->emitError("the elementwise op fused into ")
                 << kernel.name << " no longer matches its program";
        ins.assign(m->inputs.begin(), m->inputs.end());
        fusedOps = (red ? describe(red) + ", " : "") + describe(def);
      } else {
        ins = {q.getInput()};
      }
      outs = {q.getOutput(), q.getScale()};
      if (s.aux.transposed) {
        // The kernel writes the codes and scales of the transpose fused in.
        auto t = cast_or_null<TransposeOp>(soleTransposeOf(q));
        if (!t || !t->hasAttr(kFusedIntoAttr))
          return op->emitError("expected the fp8.transpose fused into ")
                 << kernel.name
                 << " to read its codes and scales alone (it writes them "
                    "transposed)";
        outs = {t.getOutput(), t.getOutputScale()};
        fusedOps += (fusedOps.empty() ? "" : ", ") + describe(t);
      }
      if (!fusedOps.empty())
        s.op += " (fused: " + fusedOps + ")";
    } else if (auto t = dyn_cast<TransposeOp>(op)) {
      s.kind = ::fp8::StepKind::Transpose;
      ins = {t.getInput(), t.getScale()};
      outs = {t.getOutput(), t.getOutputScale()};
    } else if (auto il = dyn_cast<InterleaveRowsOp>(op)) {
      s.kind = ::fp8::StepKind::Interleave;
      s.block = il.getBlock();
      ins = {il.getA(), il.getB()};
      outs = {il.getResult()};
    } else { // an elementwise op or a row sum
      const bool sum = s.aux.kind == ::fp8::AuxKind::Reduce;
      s.kind = sum ? ::fp8::StepKind::Reduce : ::fp8::StepKind::Elementwise;
      std::string why;
      FailureOr<ElementwiseMatch> m =
          sum ? matchReduction(op, why) : matchElementwise(op, why);
      if (failed(m))
        return op->emitError("the runtime cannot execute '")
               << op->getName() << "': " << why;
      ins.assign(m->inputs.begin(), m->inputs.end());
      outs = {op->getResult(0)};
    }
  }
  return success();
}
