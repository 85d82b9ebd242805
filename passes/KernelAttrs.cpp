//===- KernelAttrs.cpp - The pipeline's attributes and codegen specs ------===//

#include "passes/KernelAttrs.h"

#include "passes/EpilogueChain.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::fp8;

std::optional<::fp8::Arch> mlir::fp8::getTarget(ModuleOp module) {
  auto s = module->getAttrOfType<StringAttr>(kTargetAttr);
  if (!s)
    return std::nullopt;
  return ::fp8::parseArch(s.getValue().str());
}

FailureOr<::fp8::Arch> mlir::fp8::requireTarget(ModuleOp module) {
  if (std::optional<::fp8::Arch> arch = getTarget(module))
    return *arch;
  emitError(module.getLoc(), "expected the module's 'fp8.target' (run "
                             "--fp8-verify-target{arch=...} first)");
  return failure();
}

std::optional<::fp8::DType> mlir::fp8::elementDType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return std::nullopt;
  return toDType(t.getElementType());
}

bool mlir::fp8::isFullBatch(GroupedScaledMatmulOp op) {
  if (!op->hasAttr(kFullBatchAttr) || op.getMode() != GroupMode::Masked)
    return false;
  // Every group's row count is the same value: a splat.
  Operation *def = op.getGroups().getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::SplatOp>(def))
    return true;
  DenseElementsAttr c;
  if (auto cst = dyn_cast<arith::ConstantOp>(def))
    c = dyn_cast<DenseElementsAttr>(cst.getValue());
  if (!c || !c.isSplat())
    return false;
  auto a = cast<RankedTensorType>(op.getA().getType());
  return !a.isDynamicDim(1) &&
         c.getSplatValue<APInt>().getSExtValue() == a.getDimSize(1);
}

GemmOperands mlir::fp8::gemmOperandsOf(Operation *op) {
  GemmOperands o;
  if (auto mm = dyn_cast<ScaledMatmulOp>(op)) {
    o.args = mm.getGemmArgs();
    o.a = mm.getA();
    o.b = mm.getB();
    o.c = mm.getC();
  } else if (auto g = dyn_cast<GroupedScaledMatmulOp>(op)) {
    o.args = g.getGemmArgs();
    o.a = g.getA();
    o.b = g.getB();
    o.grouped = true;
  }
  return o;
}

FailureOr<::fp8::KernelSpec>
mlir::fp8::gemmSpecOf(Operation *op, ::fp8::Arch arch, std::string &why) {
  ::fp8::ScaledGemmArgs args;
  size_t lead = 0;
  bool accumulate = false;
  if (auto mm = dyn_cast<ScaledMatmulOp>(op)) {
    args = mm.getGemmArgs();
    accumulate = mm.getC() != nullptr;
  } else if (auto g = dyn_cast<GroupedScaledMatmulOp>(op)) {
    args = g.getGemmArgs();
    if (!isFullBatch(g)) {
      // Data-dependent groups: contiguous, A [M, K] with the groups' rows
      // (the MoE layers' tokens in expert order), or masked, A [G, maxM, K]
      // with valid rows per group (decode); B [G, N, K]. A masked spec's M
      // is the rows a group is expected to hold: left to the runtime. Along
      // K, A [M, K] and B [N, K] with D [G, M, N]: K (every group's tokens)
      // is a launch value, as M is elsewhere.
      const bool masked = g.getMode() == GroupMode::Masked;
      const bool alongK = g.getMode() == GroupMode::AlongK;
      if (args.a.layout != ::fp8::Layout::KMajor ||
          args.b.layout != ::fp8::Layout::KMajor) {
        why = "expected K-major A and B for a grouped GEMM with "
              "data-dependent groups";
        return failure();
      }
      ::fp8::KernelSpec spec;
      spec.arch = arch;
      spec.kind = toRecipe(g.getMode());
      spec.groups = alongK ? args.dShape[0] : args.bShape[0];
      spec.a = args.a;
      spec.b = args.b;
      spec.m = masked ? ::fp8::kDynamic : args.aShape[0];
      spec.k = args.aShape[masked ? 2 : 1];
      spec.n = args.bShape[alongK ? 0 : 1];
      spec.promotionInterval = args.promotionInterval;
      spec.out = args.out;
      if (spec.n == ::fp8::kDynamic || (!alongK && spec.k == ::fp8::kDynamic) ||
          spec.groups == ::fp8::kDynamic) {
        why = alongK ? "expected static G and N (the kernels are generated "
                       "for them)"
                     : "expected static G, N and K (the kernels are "
                       "generated for them)";
        return failure();
      }
      return spec;
    }
    lead = 1;
    if (args.aShape[0] == ::fp8::kDynamic) {
      why = "expected a static batch count";
      return failure();
    }
  } else {
    why = "not an FP8 GEMM";
    return failure();
  }
  ::fp8::KernelSpec spec;
  spec.arch = arch;
  spec.kind = ::fp8::GemmKind::Dense;
  spec.a = args.a;
  spec.b = args.b;
  const bool aK = args.a.layout == ::fp8::Layout::KMajor;
  const bool bK = args.b.layout == ::fp8::Layout::KMajor;
  spec.m = aK ? args.aShape[lead] : args.aShape[lead + 1];
  spec.k = aK ? args.aShape[lead + 1] : args.aShape[lead];
  spec.n = bK ? args.bShape[lead] : args.bShape[lead + 1];
  if (spec.n == ::fp8::kDynamic || spec.k == ::fp8::kDynamic) {
    why =
        "expected static N and K (the kernels are generated for them), "
        "found N = " +
        (spec.n == ::fp8::kDynamic ? std::string("?")
                                   : std::to_string(spec.n)) +
        ", K = " +
        (spec.k == ::fp8::kDynamic ? std::string("?") : std::to_string(spec.k));
    return failure();
  }
  spec.promotionInterval = args.promotionInterval;
  spec.out = args.out;
  spec.accumulate = accumulate;
  if (op->hasAttr(kEpilogueAttr)) {
    auto mm = dyn_cast<ScaledMatmulOp>(op);
    if (!mm) {
      why = "fp8.epilogue marks fp8.scaled_matmul ops only";
      return failure();
    }
    FailureOr<EpilogueChain> chain = epilogueChainOf(mm, why);
    if (failed(chain)) {
      why = "its fp8.epilogue does not hold: " + why;
      return failure();
    }
    spec.epilogue = chain->epilogue;
  }
  return spec;
}

int64_t mlir::fp8::batchOf(Operation *op) {
  auto g = dyn_cast<GroupedScaledMatmulOp>(op);
  if (!g || !isFullBatch(g))
    return 1;
  return cast<RankedTensorType>(g.getA().getType()).getDimSize(0);
}

std::optional<::fp8::KernelSpec> mlir::fp8::getGemmSpec(Operation *op) {
  if (auto a = op->getAttrOfType<GemmSpecAttr>(kGemmAttr))
    return a.getSpec();
  return std::nullopt;
}

void mlir::fp8::setGemmSpec(Operation *op, const ::fp8::KernelSpec &spec) {
  op->setAttr(kGemmAttr, GemmSpecAttr::get(op->getContext(), spec));
}

static void setKernelAttr(Operation *op, llvm::StringRef kind,
                          llvm::StringRef name, Attribute spec) {
  Builder b(op->getContext());
  op->setAttr(kKernelAttr, b.getDictionaryAttr(
                               {b.getNamedAttr("kind", b.getStringAttr(kind)),
                                b.getNamedAttr("name", b.getStringAttr(name)),
                                b.getNamedAttr("spec", spec)}));
}

void mlir::fp8::setGemmKernel(Operation *op, const ::fp8::KernelSpec &spec) {
  setKernelAttr(op, "gemm", spec.kernelName(),
                GemmSpecAttr::get(op->getContext(), spec));
}

void mlir::fp8::setKernel(Operation *op, llvm::StringRef kind,
                          llvm::StringRef name, llvm::StringRef specJson) {
  setKernelAttr(op, kind, name, jsonToAttribute(op->getContext(), specJson));
}

std::optional<KernelRef> mlir::fp8::getKernel(Operation *op) {
  auto d = op->getAttrOfType<DictionaryAttr>(kKernelAttr);
  if (!d)
    return std::nullopt;
  auto kind = d.getAs<StringAttr>("kind");
  auto name = d.getAs<StringAttr>("name");
  Attribute spec = d.get("spec");
  if (!kind || !name || !spec)
    return std::nullopt;
  KernelRef ref{kind.getValue().str(), name.getValue().str(), std::nullopt, ""};
  if (auto g = dyn_cast<GemmSpecAttr>(spec))
    ref.gemm = g.getSpec();
  else if (isa<DictionaryAttr>(spec))
    ref.specJson = attributeToJson(spec);
  else
    return std::nullopt;
  return ref;
}

bool mlir::fp8::isZeroInit(Value init) {
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
         matchPattern(fill.getInputs()[0], m_Zero());
}
