//===- FuseEpilogue.cpp - --fp8-fuse-epilogue -----------------------------===//
//
// GEMM results quantized in the GEMM's epilogue (Passes.td has the
// contract): gate and up projections made one GEMM over interleaved
// weights, then every chain matmul -> [elementwise] -> quantize whose GEMM
// the target can generate with the epilogue marked fp8.epilogue.
//
//===----------------------------------------------------------------------===//

#include "passes/EpilogueChain.h"
#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "codegen/Gemm.h"
#include "dialect/FP8Attrs.h"
#include "dialect/FP8Ops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSEEPILOGUE
#include "passes/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// Rows of each weight block the interleaved B alternates: one 128-row
/// block of scales (the DeepSeek weights' 128x128) stays whole, and a
/// 256-column tile holds one block pair, 128 columns of the result.
constexpr int64_t kPairBlock = 128;

/// True when the target's generator has a tile for `spec` (its epilogue
/// set): the one its heuristic chooses passes the generator's checks. The
/// reason otherwise.
bool fits(::fp8::KernelSpec spec, std::string &why) {
  if (spec.m == ::fp8::kDynamic)
    spec.m = 4096; // as --fp8-select-config's m-hint
  spec.tile =
      ::fp8::selectConfig(spec, ::fp8::targetInfo(spec.arch).smCount).tile;
  if (::fp8::Status s = ::fp8::checkGemmSpec(spec); !s) {
    why = s.message();
    return false;
  }
  return true;
}

/// Two matmuls that can become one GEMM over interleaved weights.
struct Pair {
  ScaledMatmulOp first, second; // gate, up: the program's inputs 0 and 1
  QuantizeOp firstB, secondB;   // the quantizes of their weights
};

/// The B of `mm` as a quantize of an [N, K] tensor, N a multiple of the
/// pair block and of B's scale block rows dividing it; null otherwise.
QuantizeOp pairableB(ScaledMatmulOp mm) {
  auto q = mm.getB().getDefiningOp<QuantizeOp>();
  if (!q || q.getScale() != mm.getBScale() || q.getHistory() || q.getStats() ||
      q.getScaling().isDelayed() || mm.getC() ||
      mm.getBLayout() != Layout::KMajor)
    return {};
  auto w = dyn_cast<RankedTensorType>(q.getInput().getType());
  const ::fp8::Granularity g = toRecipe(q.getGranularity());
  if (!w || w.getRank() != 2 || !w.hasStaticShape() ||
      w.getDimSize(0) % kPairBlock != 0 ||
      g.rows == ::fp8::Granularity::kWhole || kPairBlock % g.rows != 0)
    return {};
  return q;
}

struct FuseEpiloguePass
    : mlir::fp8::impl::FP8FuseEpilogueBase<FuseEpiloguePass> {
  using FP8FuseEpilogueBase::FP8FuseEpilogueBase;

  ::fp8::Arch arch = ::fp8::Arch::SM90a;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<::fp8::Arch> target = requireTarget(module);
    if (failed(target))
      return signalPassFailure();
    arch = *target;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      if (pairs)
        for (Pair p : findPairs(fn))
          makeOne(p);
      SmallVector<ScaledMatmulOp> matmuls(fn.getOps<ScaledMatmulOp>());
      for (ScaledMatmulOp mm : matmuls) {
        std::string why;
        FailureOr<EpilogueChain> chain = epilogueChainOf(mm, why);
        if (failed(chain))
          continue;
        FailureOr<::fp8::KernelSpec> spec = gemmSpecOf(mm, arch, why);
        if (failed(spec))
          continue;
        spec->epilogue = chain->epilogue;
        if (fits(*spec, why))
          mm->setAttr(kEpilogueAttr, UnitAttr::get(mm.getContext()));
        else if (chain->split) {
          // Made one GEMM for its epilogue, which must then hold.
          mm.emitOpError("cannot quantize its interleaved result in the "
                         "epilogue: ")
              << why;
          return signalPassFailure();
        }
      }
    }
  }

  /// The gate/up pairs of `fn`: two matmuls of one A and recipe over
  /// pairable weights of one type and recipe, whose results feed one
  /// elementwise op, and nothing else, that a quantize in row blocks takes,
  /// where the target has a tile for the epilogue of their union.
  SmallVector<Pair> findPairs(func::FuncOp fn) {
    SmallVector<Pair> out;
    llvm::DenseSet<Operation *> taken;
    for (ScaledMatmulOp a : fn.getOps<ScaledMatmulOp>()) {
      if (taken.count(a) || !a.getD().hasOneUse())
        continue;
      Operation *user = *a.getD().getUsers().begin();
      for (Value in : user->getOperands()) {
        auto b = in.getDefiningOp<ScaledMatmulOp>();
        if (!b || b == a || taken.count(b) || !b.getD().hasOneUse())
          continue;
        // The program's order decides which is the first half.
        std::string why;
        FailureOr<EpilogueChain> chain =
            epilogueChainFrom({a.getD(), b.getD()}, why);
        if (failed(chain))
          continue;
        Pair p{a, b, pairableB(a), pairableB(b)};
        if (!p.firstB || !p.secondB || !samePair(p))
          continue;
        FailureOr<::fp8::KernelSpec> spec = gemmSpecOf(a, arch, why);
        if (failed(spec))
          continue;
        spec->n *= 2;
        spec->epilogue = chain->epilogue;
        spec->epilogue->pairBlock = kPairBlock;
        if (!fits(*spec, why))
          continue;
        taken.insert(a);
        taken.insert(b);
        out.push_back(p);
        break;
      }
    }
    return out;
  }

  /// The same A, recipe and result type, and weights of one type and
  /// recipe.
  static bool samePair(Pair p) {
    ScaledMatmulOp a = p.first, b = p.second;
    return a.getA() == b.getA() && a.getAScale() == b.getAScale() &&
           a.getAGranularity() == b.getAGranularity() &&
           a.getBGranularity() == b.getBGranularity() &&
           a.getALayout() == b.getALayout() &&
           a.getPromotionInterval() == b.getPromotionInterval() &&
           a.getD().getType() == b.getD().getType() &&
           p.firstB.getInput().getType() == p.secondB.getInput().getType() &&
           p.firstB.getOutput().getType() == p.secondB.getOutput().getType() &&
           p.firstB.getGranularity() == p.secondB.getGranularity() &&
           p.firstB.getScaling() == p.secondB.getScaling();
  }

  /// Replaces the pair by one GEMM over the interleaved weights, its result
  /// split for the elementwise op.
  void makeOne(Pair p) {
    ScaledMatmulOp later =
        p.first->isBeforeInBlock(p.second) ? p.second : p.first;
    OpBuilder b(later);
    const Location loc = p.first.getLoc();
    auto rowsDoubled = [](Type t) {
      auto r = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape(r.getShape());
      shape[0] *= 2;
      return RankedTensorType::get(shape, r.getElementType());
    };
    auto interleaved = InterleaveRowsOp::create(
        b, loc, rowsDoubled(p.firstB.getInput().getType()), p.firstB.getInput(),
        p.secondB.getInput(), b.getI64IntegerAttr(kPairBlock));
    // The weights' quantize and the GEMM, cloned with the interleaved
    // operands; B's scale rows double with its rows (whole blocks).
    Operation *q = b.clone(*p.firstB.getOperation());
    q->setOperand(0, interleaved.getResult());
    q->getResult(0).setType(rowsDoubled(q->getResult(0).getType()));
    q->getResult(1).setType(rowsDoubled(q->getResult(1).getType()));
    auto mm = cast<ScaledMatmulOp>(b.clone(*p.first.getOperation()));
    mm.getBMutable().assign(q->getResult(0));
    mm.getBScaleMutable().assign(q->getResult(1));
    auto d = cast<RankedTensorType>(p.first.getD().getType());
    mm.getD().setType(RankedTensorType::get(
        {d.getDimSize(0), 2 * d.getDimSize(1)}, d.getElementType()));
    auto split = DeinterleaveColsOp::create(b, loc, TypeRange{d, d}, mm.getD(),
                                            b.getI64IntegerAttr(kPairBlock));
    p.first.getD().replaceAllUsesWith(split.getFirst());
    p.second.getD().replaceAllUsesWith(split.getSecond());
    p.first.erase();
    p.second.erase();
    for (QuantizeOp w : {p.firstB, p.secondB})
      if (w->use_empty())
        w.erase();
  }
};

} // namespace
