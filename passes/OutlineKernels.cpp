//===- OutlineKernels.cpp - --fp8-outline-kernels -------------------------===//
//
// One kernel per step: the GEMM spec of every FP8 GEMM (its fp8.gemm), an
// ElementwiseSpec on every quantize, transpose, interleave, elementwise op
// and row sum (a linalg reduction along the last dimension: a norm's
// statistics; its zero fill needs no kernel), an elementwise op feeding only
// a quantize fused into it, an FP8 transpose that alone reads an R x 1
// quantize's codes and scales fused into that quantize (its kernel writes
// them transposed), a per-tensor quantize of a GEMM's result reading the
// amax the GEMM's epilogue writes, the chain of a GEMM quantized in its
// epilogue (passes/EpilogueChain.h) fused into the GEMM's kernel, each as an
// fp8.kernel attribute. Any other op is one the runtime cannot execute: an
// error naming it.
//
//===----------------------------------------------------------------------===//

#include "passes/ElementwiseProgram.h"
#include "passes/EpilogueChain.h"
#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "codegen/Elementwise.h"
#include "codegen/Gemm.h"
#include "dialect/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8OUTLINEKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// Ops a plan needs no kernel for: shapes, constants, the return.
bool needsNoKernel(Operation *op) {
  return isa<tensor::EmptyOp, tensor::DimOp, tensor::SplatOp, arith::ConstantOp,
             arith::IndexCastOp, func::ReturnOp>(op);
}

struct OutlineKernelsPass
    : mlir::fp8::impl::FP8OutlineKernelsBase<OutlineKernelsPass> {
  using FP8OutlineKernelsBase::FP8OutlineKernelsBase;

  ::fp8::Arch arch = ::fp8::Arch::SM90a;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<::fp8::Arch> target = requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    arch = *target;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(outline(fn)))
        return signalPassFailure();
  }

  /// What the quantizes of a function absorb: each one's elementwise op,
  /// and the row sum that op reads where the quantize's kernel can compute
  /// it (rowSums: the reduction's op and its program; sums: those ops).
  struct Absorbed {
    llvm::DenseMap<Operation *, ElementwiseMatch> fused;
    llvm::DenseMap<Operation *, std::pair<Operation *, ::fp8::EwProgram>>
        rowSums;
    llvm::DenseSet<Operation *> sums;
  };

  Absorbed
  absorbedOps(Block &body,
              const llvm::DenseMap<Operation *, Operation *> &inEpilogue) {
    Absorbed a;
    if (!fuseElementwise)
      return a;
    for (auto q : body.getOps<QuantizeOp>()) {
      Operation *def = q.getInput().getDefiningOp();
      if (!def || def->getBlock() != &body || !def->hasOneUse() ||
          !isElementwiseCandidate(def) || inEpilogue.count(q))
        continue;
      std::string why;
      FailureOr<ElementwiseMatch> m = matchElementwise(def, why);
      if (failed(m))
        continue;
      ElementwiseMatch withSum = *m;
      ::fp8::EwProgram sum;
      Operation *red = absorbRowSum(withSum, sum);
      if (red && red->getBlock() == &body &&
          ::fp8::checkElementwiseSpec(quantizeSpec(q, &withSum, &sum))) {
        *m = std::move(withSum);
        a.rowSums[q] = {red, std::move(sum)};
        a.sums.insert(red);
      }
      a.fused[q] = std::move(*m);
    }
    return a;
  }

  LogicalResult outline(func::FuncOp fn) {
    if (!fn.getBody().hasOneBlock())
      return emitError(fn.getLoc(), "expected a single-block function, found ")
             << fn.getBody().getBlocks().size() << " blocks";
    Block &body = fn.getBody().front();
    // The ops a GEMM's epilogue computes: its chain after the matmul.
    llvm::DenseMap<Operation *, Operation *> inEpilogue;
    for (auto mm : body.getOps<ScaledMatmulOp>()) {
      std::optional<::fp8::KernelSpec> spec = getGemmSpec(mm);
      if (mm->hasAttr(kEpilogueAttr) && (!spec || !spec->epilogue))
        return mm.emitOpError("is marked fp8.epilogue but its GEMM spec has "
                              "no epilogue (run --fp8-select-config after "
                              "--fp8-fuse-epilogue)");
      if (!spec || !spec->epilogue)
        continue;
      std::string why;
      FailureOr<EpilogueChain> chain = epilogueChainOf(mm, why);
      if (failed(chain))
        return mm.emitOpError("has a quantizing epilogue but its chain does "
                              "not hold: ")
               << why;
      for (Operation *op : {chain->split.getOperation(), chain->program,
                            chain->quantize.getOperation()})
        if (op)
          inEpilogue[op] = mm;
    }
    // Which elementwise op each quantize absorbs, and the row sum that op
    // reads where the quantize's kernel can compute it.
    Absorbed absorbed = absorbedOps(body, inEpilogue);
    auto &fused = absorbed.fused;
    auto &rowSums = absorbed.rowSums;
    auto &absorbedSums = absorbed.sums;
    llvm::DenseMap<Operation *, std::string> fusedInto;
    // The fills that are only the initial values of linalg ops: those
    // ops' kernels write every element (a sum from 0.0, an elementwise
    // op whose body does not read its init), or they are refused and say
    // why themselves.
    llvm::DenseMap<Operation *, Operation *> initFills;
    for (auto fill : body.getOps<linalg::FillOp>()) {
      Operation *first = nullptr;
      bool onlyInits = !fill->use_empty();
      for (OpOperand &use : fill->getUses()) {
        auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
        onlyInits &= user && user->getBlock() == &body && user.isDpsInit(&use);
        if (!first || (user && user->isBeforeInBlock(first)))
          first = use.getOwner();
      }
      if (onlyInits)
        initFills[fill] = first;
    }
    for (Operation &op : body) {
      LogicalResult ok = success();
      if (initFills.count(&op))
        continue; // written whole by the kernel of the op it starts
      if (auto it = inEpilogue.find(&op); it != inEpilogue.end()) {
        // Computed by the epilogue of the GEMM before it (outlined first).
        fusedInto[&op] = getKernel(it->second)->name;
        continue;
      }
      if (isa<ScaledMatmulOp, GroupedScaledMatmulOp>(op)) {
        ok = outlineGemm(&op);
      } else if (auto permute = dyn_cast<MoePermuteOp>(op)) {
        ok = checkPermute(permute);
      } else if (auto q = dyn_cast<QuantizeOp>(op);
                 q && q.getInput().getDefiningOp<MoePermuteOp>()) {
        ok = outlinePermuteQuantize(q);
        if (succeeded(ok))
          fusedInto[q.getInput().getDefiningOp()] = getKernel(q)->name;
      } else if (auto u = dyn_cast<MoeUnpermuteOp>(op)) {
        ::fp8::ElementwiseSpec spec;
        spec.kind = ::fp8::AuxKind::Unpermute;
        spec.arch = arch;
        spec.program = ::fp8::EwProgram::identity(*elementDType(u.getY()));
        spec.out = *elementDType(u.getOut());
        if (::fp8::Status s = ::fp8::checkElementwiseSpec(spec); !s)
          ok = u.emitOpError("has no kernel: ") << s.message();
        else
          setKernel(u, "unpermute", spec.kernelName(), ::fp8::toJSON(spec));
      } else if (auto q = dyn_cast<QuantizeOp>(op)) {
        auto it = fused.find(q);
        auto sum = rowSums.find(q);
        TransposeOp t;
        ok = outlineQuantize(
            q, it == fused.end() ? nullptr : &it->second,
            sum == rowSums.end() ? nullptr : &sum->second.second, t);
        if (succeeded(ok) && t)
          fusedInto[t.getOperation()] = getKernel(q)->name;
        if (succeeded(ok) && it != fused.end())
          fusedInto[it->second.result.getDefiningOp()] = getKernel(q)->name;
        if (succeeded(ok) && sum != rowSums.end())
          fusedInto[sum->second.first] = getKernel(q)->name;
      } else if (auto i = dyn_cast<InterleaveRowsOp>(op)) {
        ::fp8::ElementwiseSpec spec;
        spec.kind = ::fp8::AuxKind::Interleave;
        spec.arch = arch;
        spec.program = ::fp8::EwProgram::identity(*elementDType(i.getA()));
        spec.out = spec.program.inputs[0];
        setKernel(i, "interleave", spec.kernelName(), ::fp8::toJSON(spec));
      } else if (isa<DeinterleaveColsOp>(op)) {
        ok = op.emitError("the runtime runs 'fp8.deinterleave_cols' only in "
                          "the epilogue of the GEMM that produces its input "
                          "(--fp8-fuse-epilogue arranges it), found it on "
                          "its own");
      } else if (auto t = dyn_cast<TransposeOp>(op)) {
        if (fusedInto.count(t.getOperation()))
          continue; // written by the quantize before it
        ::fp8::ElementwiseSpec spec;
        spec.kind = ::fp8::AuxKind::Transpose;
        spec.arch = arch;
        spec.quant.format = *elementDType(t.getInput());
        spec.quant.granularity = toRecipe(t.getGranularity());
        setKernel(t, "transpose", spec.kernelName(), ::fp8::toJSON(spec));
      } else if (isElementwiseCandidate(&op)) {
        ok = outlineElementwise(&op, fused);
      } else if (isReductionCandidate(&op)) {
        if (!absorbedSums.count(&op)) // else summed by its quantize's kernel
          ok = outlineReduce(&op);
      } else if (!needsNoKernel(&op)) {
        ok = op.emitError("the runtime cannot execute '")
             << op.getName()
             << "': a plan runs FP8 GEMMs, quantize, transpose, "
                "elementwise, row-sum, interleave and MoE permute and "
                "unpermute steps only";
      }
      if (failed(ok))
        return failure();
    }
    Builder b(fn.getContext());
    for (auto &[fill, user] : initFills) {
      if (std::optional<KernelRef> k = getKernel(user))
        fusedInto[fill] = k->name;
      else if (auto it = fusedInto.find(user); it != fusedInto.end())
        fusedInto[fill] = it->second;
      else
        return user->emitError("expected a kernel for the op that "
                               "'linalg.fill' initializes");
    }
    for (auto &[op, name] : fusedInto)
      op->setAttr(kFusedIntoAttr, b.getStringAttr(name));
    return success();
  }

  /// A row sum (an RMSNorm's sum of squares, a LayerNorm's sums): the
  /// reduce kernel, f32 sums in its stated order (reduceRow).
  LogicalResult outlineReduce(Operation *op) {
    std::string why;
    FailureOr<ElementwiseMatch> m = matchReduction(op, why);
    if (failed(m))
      return op->emitError("the runtime cannot execute '")
             << op->getName() << "': " << why;
    ::fp8::ElementwiseSpec spec;
    spec.kind = ::fp8::AuxKind::Reduce;
    spec.arch = arch;
    spec.program = m->program;
    spec.out = ::fp8::DType::F32;
    if (::fp8::Status s = ::fp8::checkElementwiseSpec(spec); !s)
      return op->emitOpError("has no kernel: ") << s.message();
    setKernel(op, "reduce", spec.kernelName(), ::fp8::toJSON(spec));
    return success();
  }

  LogicalResult outlineGemm(Operation *op) {
    std::optional<::fp8::KernelSpec> spec = getGemmSpec(op);
    if (!spec) {
      std::string why;
      if (failed(gemmSpecOf(op, arch, why)))
        return op->emitOpError("cannot run on the runtime: ") << why;
      return op->emitOpError("expected a tile configuration (run "
                             "--fp8-select-config first)");
    }
    if (spec->arch != arch)
      return op->emitOpError("expected a GEMM spec for the module's target ")
             << ::fp8::toString(arch) << ", found one for "
             << ::fp8::toString(spec->arch);
    if (::fp8::Status s = checkGemm(op, *spec); !s)
      return op->emitOpError("has no kernel on ")
             << ::fp8::toString(arch) << ": " << s.message();
    setGemmKernel(op, *spec);
    op->removeAttr(kGemmAttr);
    return success();
  }

  /// checkGemmSpec of GEMM `op`'s `spec`; a tile the runtime re-selects is
  /// checked at the M (and a K-grouped GEMM's K) it was chosen for
  /// (--fp8-select-config).
  ::fp8::Status checkGemm(Operation *op, ::fp8::KernelSpec spec) {
    auto source = op->getAttrOfType<StringAttr>(kTileSourceAttr);
    if (source && source.getValue() == "runtime") {
      spec.m = 4096;
      if (spec.k == ::fp8::kDynamic)
        spec.k = 4096;
    }
    return ::fp8::checkGemmSpec(spec);
  }

  /// With amax-from-epilogue: `spec` (of quantize `q`, per-tensor current
  /// scaling of what it reads as stored) reads D's amax when `q` quantizes
  /// an fp8.scaled_matmul's result whose kernel can write it, which then
  /// does (its fp8.kernel's spec gets amax_out). Any other quantize keeps
  /// its own amax pass.
  void readAmaxFromEpilogue(QuantizeOp q, ::fp8::ElementwiseSpec &spec) {
    auto mm = q.getInput().getDefiningOp<ScaledMatmulOp>();
    std::optional<KernelRef> k = mm ? getKernel(mm) : std::nullopt;
    if (!amaxFromEpilogue || !k || !k->gemm || spec.transposed || spec.rowSum ||
        !(spec.program == ::fp8::EwProgram::identity(spec.program.inputs[0])))
      return;
    ::fp8::ElementwiseSpec reads = spec;
    reads.amaxIn = true;
    ::fp8::KernelSpec writes = *k->gemm;
    writes.amaxOut = true;
    if (!::fp8::checkElementwiseSpec(reads) || !checkGemm(mm, writes))
      return;
    if (!k->gemm->amaxOut) // (a second quantize of D reads the same amax)
      setGemmKernel(mm, writes);
    spec = std::move(reads);
  }

  /// The permuted rows feed one quantize (the GEMMs' A), which becomes the
  /// permute step: the runtime routes, gathers and quantizes in one pass
  /// and never holds the rows in bf16.
  LogicalResult checkPermute(MoePermuteOp p) {
    Value rows = p.getRows();
    if (!rows.hasOneUse() || !isa<QuantizeOp>(*rows.getUsers().begin()))
      return p.emitOpError("cannot run on the runtime: expected its rows to "
                           "feed one fp8.quantize (the grouped GEMMs' A, "
                           "quantized once), found ")
             << std::distance(rows.getUses().begin(), rows.getUses().end())
             << " uses";
    return success();
  }

  LogicalResult outlinePermuteQuantize(QuantizeOp q) {
    ::fp8::ElementwiseSpec spec;
    spec.kind = ::fp8::AuxKind::Permute;
    spec.arch = arch;
    spec.quant.format = *elementDType(q.getOutput());
    spec.quant.granularity = toRecipe(q.getGranularity());
    spec.quant.mode = toRecipe(q.getScaling().getMode());
    spec.program = ::fp8::EwProgram::identity(*elementDType(q.getInput()));
    if (q.getStats() || q.getHistory())
      return q.emitOpError("cannot run on the runtime: the permute step "
                           "quantizes with current scaling and no "
                           "statistics");
    if (::fp8::Status s = ::fp8::checkElementwiseSpec(spec); !s)
      return q.emitOpError("has no kernel: ") << s.message();
    setKernel(q, "permute", spec.kernelName(), ::fp8::toJSON(spec));
    return success();
  }

  /// The spec of quantize `q`, computing `fused`'s program (or the
  /// identity) and with it `rowSum` (or no row sum).
  ::fp8::ElementwiseSpec quantizeSpec(QuantizeOp q,
                                      const ElementwiseMatch *fused,
                                      const ::fp8::EwProgram *rowSum) {
    ::fp8::ElementwiseSpec spec;
    spec.kind = ::fp8::AuxKind::Quantize;
    spec.arch = arch;
    spec.quant.format = *elementDType(q.getOutput());
    spec.quant.granularity = toRecipe(q.getGranularity());
    spec.quant.mode = toRecipe(q.getScaling().getMode());
    spec.quant.delayed = toDelayedScaling(q.getScaling());
    spec.program =
        fused ? fused->program
              : ::fp8::EwProgram::identity(*elementDType(q.getInput()));
    if (rowSum)
      spec.rowSum = *rowSum;
    return spec;
  }

  /// Outlines `q`; `transposed` is set to the transpose fused into it
  /// (fuse-transpose), if any.
  LogicalResult outlineQuantize(QuantizeOp q, const ElementwiseMatch *fused,
                                const ::fp8::EwProgram *rowSum,
                                TransposeOp &transposed) {
    if (q.getStats())
      return q.emitOpError("cannot run on the runtime: its quantize kernels "
                           "do not compute the statistics (the 'stats' "
                           "result)");
    if (q.getScaling().isDelayed() &&
        cast<RankedTensorType>(q.getInput().getType()).getRank() != 2)
      return q.emitOpError("cannot run on the runtime: delayed scaling of a "
                           "stack of matrices (its kernels keep one amax "
                           "history per matrix)");
    ::fp8::ElementwiseSpec spec = quantizeSpec(q, fused, rowSum);
    if (::fp8::Status s = ::fp8::checkElementwiseSpec(spec); !s)
      return q.emitOpError("has no kernel: ") << s.message();
    // The transpose fused in where the kernel can write what it would
    // (the column path: R x 1 blocks, current scaling).
    if (auto t = fuseTranspose ? cast_or_null<TransposeOp>(soleTransposeOf(q))
                               : TransposeOp()) {
      ::fp8::ElementwiseSpec withT = spec;
      withT.transposed = true;
      if (::fp8::checkElementwiseSpec(withT)) {
        spec = std::move(withT);
        transposed = t;
      }
    }
    readAmaxFromEpilogue(q, spec);
    setKernel(q, "quantize", spec.kernelName(), ::fp8::toJSON(spec));
    return success();
  }

  LogicalResult outlineElementwise(
      Operation *op,
      const llvm::DenseMap<Operation *, ElementwiseMatch> &fused) {
    for (const auto &entry : fused)
      if (entry.second.result.getDefiningOp() == op)
        return success(); // computed by the quantize kernel
    std::string why;
    FailureOr<ElementwiseMatch> m = matchElementwise(op, why);
    if (failed(m))
      return op->emitError("the runtime cannot execute '")
             << op->getName() << "': " << why;
    ::fp8::ElementwiseSpec spec;
    spec.kind = ::fp8::AuxKind::Elementwise;
    spec.arch = arch;
    spec.program = m->program;
    spec.out = *elementDType(op->getResult(0));
    setKernel(op, "elementwise", spec.kernelName(), ::fp8::toJSON(spec));
    return success();
  }
};

} // namespace
