//===- VerifyTarget.cpp - --fp8-verify-target{arch=...} -------------------===//
//
// Hardware legality of the FP8 GEMMs for one target, and the FP8 transposes
// that make every GEMM operand K-major (Passes.td has the rules).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "codegen/Gemm.h"
#include "core/RecipeRules.h"
#include "dialect/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8VERIFYTARGET
#include "passes/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// The operands of either GEMM op.
struct GemmOperands {
  OpOperand *a, *aScale, *b, *bScale;
};

template <typename Op> GemmOperands operandsOf(Op op) {
  return {&op.getAMutable(), &op.getAScaleMutable(), &op.getBMutable(),
          &op.getBScaleMutable()};
}

/// Replaces an MN-major operand by its K-major FP8 transpose.
template <typename Op>
void makeKMajor(Op op, bool isA, OpOperand &data, OpOperand &scale) {
  OpBuilder b(op);
  GranularityAttr g = isA ? op.getAGranularity() : op.getBGranularity();
  auto type = cast<RankedTensorType>(data.get().getType());
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  auto outType = RankedTensorType::get(shape, type.getElementType());
  const ::fp8::Granularity swapped = ::fp8::Granularity::block(
      g.getCols(), g.getRows(), toRecipe(g.getScale()));
  SmallVector<int64_t> scaleShape;
  for (int64_t d : ::fp8::scaleShapeFor(toRecipeShape(shape), swapped))
    scaleShape.push_back(d == ::fp8::kDynamic ? ShapedType::kDynamic : d);
  auto scaleType = RankedTensorType::get(
      scaleShape,
      cast<RankedTensorType>(scale.get().getType()).getElementType());
  auto t = TransposeOp::create(b, op.getLoc(), outType, scaleType, data.get(),
                               scale.get(), g);
  data.set(t.getOutput());
  scale.set(t.getOutputScale());
  auto kMajor = LayoutAttr::get(op.getContext(), Layout::KMajor);
  if (isA) {
    op.setAGranularityAttr(t.getResultGranularity());
    op.setALayoutAttr(kMajor);
  } else {
    op.setBGranularityAttr(t.getResultGranularity());
    op.setBLayoutAttr(kMajor);
  }
}

template <typename Op> LogicalResult verifyGemm(Op op, ::fp8::Arch arch) {
  ::fp8::ScaledGemmArgs args = op.getGemmArgs();
  // NOTE: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
  // Instructions": wgmma has no block-scaled form; MX block scaling is
  // tcgen05.mma ... kind::mxf8f6f4.block_scale ("TensorCore 5th Generation
  // Family Instructions"), sm_100a only.
  if (arch == ::fp8::Arch::SM90a &&
      (::fp8::isMX(args.a.granularity, args.a.layout) ||
       ::fp8::isMX(args.b.granularity, args.b.layout)))
    return op.emitOpError("uses MX scaling (1x32 blocks with ue8m0 scales "
                          "along K), which needs sm_100a: Hopper's FP8 wgmma "
                          "has no block-scaled form (use 1x128 blocks on "
                          "sm_90a)");
  // NOTE: CUDA driver API, cuTensorMapEncodeTiled: global strides are
  // multiples of 16 bytes, so an FP8 row of K elements needs K % 16 == 0.
  const size_t lead = args.aShape.size() == 3 ? 1 : 0;
  const int64_t k = args.a.layout == ::fp8::Layout::KMajor
                        ? args.aShape[lead + 1]
                        : args.aShape[lead];
  if (k != ::fp8::kDynamic && k % 16 != 0)
    return op.emitOpError("expected K (")
           << k << ") to be a multiple of 16 on " << ::fp8::toString(arch)
           << ": TMA moves FP8 rows of 16-byte multiples";

  // NOTE: PTX ISA, "Matrix Descriptor Format" of wgmma: for .e4m3/.e5m2
  // operands only the K-major shared-memory layout exists (no transpose
  // bits for 8-bit types), hence an FP8 transpose before MN-major operands.
  GemmOperands ops = operandsOf(op);
  if (args.a.layout == ::fp8::Layout::MNMajor)
    makeKMajor(op, true, *ops.a, *ops.aScale);
  if (args.b.layout == ::fp8::Layout::MNMajor)
    makeKMajor(op, false, *ops.b, *ops.bScale);

  // The target's recipe rules, on the K-major operands: what is accepted
  // here runs as stated (test/codegen/RecipeSpaceTest.cpp).
  ::fp8::KernelSpec probe;
  probe.arch = arch;
  probe.a = args.a;
  probe.b = args.b;
  probe.a.layout = probe.b.layout = ::fp8::Layout::KMajor;
  probe.a.granularity = toRecipe(op.getAGranularity());
  probe.b.granularity = toRecipe(op.getBGranularity());
  probe.promotionInterval = args.promotionInterval;
  probe.out = args.out;
  if (::fp8::Status s = ::fp8::checkTargetRecipe(probe); !s)
    return op.emitOpError() << s.message();
  return success();
}

struct VerifyTargetPass
    : mlir::fp8::impl::FP8VerifyTargetBase<VerifyTargetPass> {
  using FP8VerifyTargetBase::FP8VerifyTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::fp8::Arch> target = ::fp8::parseArch(arch);
    if (!target) {
      InFlightDiagnostic d =
          emitError(module.getLoc(), "expected arch sm_90a or "
                                     "sm_100a, found '")
          << arch << "'";
      if (arch == "sm_90" || arch == "sm_100")
        d << " (the arch-specific features FP8 needs, wgmma and tcgen05, "
             "exist only for the 'a' targets: "
          << arch << "a)";
      return signalPassFailure();
    }
    module->setAttr(kTargetAttr,
                    StringAttr::get(&getContext(), ::fp8::toString(*target)));
    WalkResult r = module.walk([&](Operation *op) {
      LogicalResult ok = success();
      if (auto mm = dyn_cast<ScaledMatmulOp>(op))
        ok = verifyGemm(mm, *target);
      else if (auto g = dyn_cast<GroupedScaledMatmulOp>(op))
        ok = verifyGemm(g, *target);
      return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
