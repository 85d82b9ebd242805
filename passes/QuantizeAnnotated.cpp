//===- QuantizeAnnotated.cpp - --fp8-quantize-annotated -------------------===//
//
// Annotated matmul-family linalg ops -> fp8.quantize of each operand +
// fp8.scaled_matmul (or a full-batch fp8.grouped_scaled_matmul). Passes.td
// has the contract; this file the mechanics: operand layouts from the
// contraction's indexing maps, one quantize per (value, granularity,
// format, scaling), weights quantized at the top of the function,
// constants folded with the CPU oracle (numerics/), delayed scaling
// threaded through a new function argument and result.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "core/RecipeRules.h"
#include "dialect/FP8Ops.h"
#include "numerics/Quantize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <map>
#include <tuple>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8QUANTIZEANNOTATED
#include "passes/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// One operand of the matmul, as the contraction reads it.
struct OperandInfo {
  Value value;
  ::fp8::Layout layout = ::fp8::Layout::KMajor;
};

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// A codegen shape as an MLIR one.
SmallVector<int64_t> toMlirShape(const ::fp8::Shape &s) {
  SmallVector<int64_t> out;
  for (int64_t d : s)
    out.push_back(d == ::fp8::kDynamic ? ShapedType::kDynamic : d);
  return out;
}

bool isWideFloat(Type t) {
  return isa<BFloat16Type, Float16Type, Float32Type>(t);
}

class FunctionLowering {
public:
  FunctionLowering(func::FuncOp fn, bool foldConstants)
      : fn_(fn), foldConstants_(foldConstants), b_(fn.getContext()) {}

  LogicalResult run() {
    RecipeAttr defaultRecipe = fn_->getAttrOfType<RecipeAttr>(kRecipeAttr);
    SmallVector<linalg::LinalgOp> ops;
    fn_.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    bool any = false;
    for (linalg::LinalgOp op : ops) {
      auto own = op->getAttrOfType<RecipeAttr>(kRecipeAttr);
      RecipeAttr recipe = own ? own : defaultRecipe;
      if (!recipe)
        continue;
      if (!linalg::isaContractionOpInterface(op)) {
        if (own)
          return op->emitError("expected 'fp8.recipe' on a matmul-family op "
                               "(a linalg contraction such as linalg.matmul "
                               "or linalg.batch_matmul), found '")
                 << op->getName() << "'";
        continue; // the function's default is for its matmuls
      }
      if (!any && !fn_.getBody().hasOneBlock())
        return emitError(fn_.getLoc(),
                         "expected a single-block function body to "
                         "quantize its matmuls, found ")
               << fn_.getBody().getBlocks().size() << " blocks";
      any = true;
      if (failed(lower(op, recipe)))
        return failure();
    }
    SmallVector<GroupedMatmulOp> grouped;
    fn_.walk([&](GroupedMatmulOp op) { grouped.push_back(op); });
    for (GroupedMatmulOp op : grouped) {
      auto own = op->getAttrOfType<RecipeAttr>(kRecipeAttr);
      RecipeAttr recipe = own ? own : defaultRecipe;
      if (!recipe)
        continue; // no FP8 recipe: --fp8-outline-kernels refuses it
      if (failed(lowerGrouped(op, recipe)))
        return failure();
    }
    return finishHistories();
  }

private:
  /// The result's element type is the recipe's `out`.
  static LogicalResult checkRecipeOut(Operation *op, RankedTensorType result,
                                      RecipeAttr recipe) {
    if (result.getElementType() == recipe.getOut())
      return success();
    return op->emitError("expected the result element type (")
           << result.getElementType() << ") to be the recipe's out ("
           << recipe.getOut()
           << "): state `out = " << typeString(result.getElementType())
           << "` in the recipe";
  }

  /// fp8.grouped_matmul -> quantize A and B + fp8.grouped_scaled_matmul of
  /// the same form. Along M, A is the experts' rows and B their weights
  /// [E, N, K], both K-major; along K, A and B are the rows' gradients and
  /// activations, whose K (the tokens) runs down the rows: MN-major, with
  /// the recipe's granularities (the GEMM's frame) turned into the stored
  /// ones.
  LogicalResult lowerGrouped(GroupedMatmulOp op, RecipeAttr recipe) {
    auto resultType = cast<RankedTensorType>(op.getD().getType());
    if (failed(checkRecipeOut(op, resultType, recipe)))
      return failure();
    MLIRContext *ctx = op->getContext();
    const ::fp8::Layout layout = op.getMode() == GroupMode::AlongK
                                     ? ::fp8::Layout::MNMajor
                                     : ::fp8::Layout::KMajor;
    auto stored = [&](QuantRecipeAttr q) {
      return fromRecipe(
          ctx, ::fp8::logicalGranularity(toRecipe(q.getGranularity()), layout));
    };
    GranularityAttr ga = stored(recipe.getA());
    GranularityAttr gb = stored(recipe.getB());
    FailureOr<std::pair<Value, Value>> qa =
        quantize(op, op.getA(), ga, recipe.getA());
    if (failed(qa))
      return failure();
    FailureOr<std::pair<Value, Value>> qb =
        quantize(op, op.getB(), gb, recipe.getB());
    if (failed(qb))
      return failure();
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(op);
    IntegerAttr interval;
    if (std::optional<int64_t> p = recipe.getPromotionInterval())
      interval = b_.getI64IntegerAttr(*p);
    auto l = LayoutAttr::get(ctx, fromRecipe(layout));
    auto g = GroupedScaledMatmulOp::create(
        b_, op->getLoc(), resultType, op.getModeAttr(), op.getGroups(),
        qa->first, qa->second, qb->first, qb->second, ga, gb, l, l, interval);
    op.getD().replaceAllUsesWith(g.getResult());
    op->erase();
    return success();
  }

  /// The layouts of A and B from the contraction's maps.
  LogicalResult classify(linalg::LinalgOp op, OperandInfo &a, OperandInfo &b,
                         bool &batched) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
        dims->k.size() != 1 || dims->batch.size() > 1 ||
        op.getNumDpsInputs() != 2)
      return op->emitError("expected a matmul with one M, one N and one K "
                           "dimension and at most one batch dimension");
    batched = !dims->batch.empty();
    const unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
    auto results = [](AffineMap map) {
      SmallVector<unsigned> r;
      for (AffineExpr e : map.getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        r.push_back(d ? d.getPosition() : ~0u);
      }
      return r;
    };
    SmallVector<unsigned> lead;
    if (batched)
      lead.push_back(dims->batch[0]);
    auto match = [&](AffineMap map, unsigned x, unsigned y,
                     ::fp8::Layout &layout) {
      SmallVector<unsigned> r = results(map);
      SmallVector<unsigned> kMajor(lead), mnMajor(lead);
      kMajor.append({x, y});
      mnMajor.append({y, x});
      if (r == kMajor) {
        layout = ::fp8::Layout::KMajor;
        return true;
      }
      if (r == mnMajor) {
        layout = ::fp8::Layout::MNMajor;
        return true;
      }
      return false;
    };
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    a.value = op.getDpsInputs()[0];
    b.value = op.getDpsInputs()[1];
    if (!match(maps[0], m, k, a.layout) || !match(maps[1], n, k, b.layout))
      return op->emitError("expected A indexed [batch, M, K] or [batch, K, M] "
                           "and B [batch, N, K] or [batch, K, N] (batch "
                           "outermost, when there is one)");
    SmallVector<unsigned> c(lead);
    c.append({m, n});
    if (results(maps[2]) != c)
      return op->emitError("expected the result indexed [batch, M, N]");
    return success();
  }

  bool isWeight(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &fn_.getBody().front() &&
           fn_.getArgAttr(arg.getArgNumber(), kWeightAttr);
  }

  /// Quantizes `v` (stored with granularity `g`) as `q` says, once per
  /// (value, granularity, format, scaling).
  FailureOr<std::pair<Value, Value>>
  quantize(Operation *user, Value v, GranularityAttr g, QuantRecipeAttr q) {
    auto type = cast<RankedTensorType>(v.getType());
    auto cst = v.getDefiningOp<arith::ConstantOp>();
    DenseElementsAttr data =
        cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : DenseElementsAttr();
    const bool constant = foldConstants_ && data && type.hasStaticShape();
    const bool once = constant || isWeight(v);
    ScalingAttr scaling = q.getScaling();
    // Weights are quantized once: delayed scaling would have one step, whose
    // scale is the current one (the history starts empty).
    if (once)
      scaling = ScalingAttr::get(b_.getContext(), ScalingMode::Current);
    if (scaling.isDelayed() && type.getRank() != 2)
      return user->emitError("expected delayed scaling on a rank-2 operand "
                             "(one amax history per tensor), found ")
             << type;
    auto key = std::make_tuple(v.getAsOpaquePointer(), g.getAsOpaquePointer(),
                               q.getFormat().getAsOpaquePointer(),
                               scaling.getAsOpaquePointer());
    if (auto it = cache_.find(key); it != cache_.end())
      return it->second;

    const ::fp8::Granularity gran = toRecipe(g);
    const ::fp8::Shape scaleShape =
        ::fp8::scaleShapeFor(toRecipeShape(type.getShape()), gran);
    Type scaleElem = gran.scale == ::fp8::ScaleFormat::UE8M0
                         ? Type(b_.getType<Float8E8M0FNUType>())
                         : Type(b_.getF32Type());
    auto codesType = RankedTensorType::get(type.getShape(), q.getFormat());
    auto scaleType = RankedTensorType::get(toMlirShape(scaleShape), scaleElem);

    std::pair<Value, Value> result;
    if (constant) {
      FailureOr<std::pair<Value, Value>> folded =
          fold(cst, data, codesType, scaleType, gran, q);
      if (failed(folded))
        return failure();
      result = *folded;
    } else {
      OpBuilder::InsertionGuard guard(b_);
      // Arguments are quantized at the top of the function, in the order
      // they are met; values right after their definition.
      const bool argument = isa<BlockArgument>(v);
      if (argument && lastArgumentQuantize_)
        b_.setInsertionPointAfter(lastArgumentQuantize_);
      else if (argument)
        b_.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
      else
        b_.setInsertionPointAfter(v.getDefiningOp());
      Value history;
      Type historyType;
      if (scaling.isDelayed()) {
        historyType =
            RankedTensorType::get({scaling.getHistory()}, b_.getF32Type());
        const unsigned index = fn_.getNumArguments();
        // Appending an argument to a func.func cannot fail.
        (void)fn_.insertArgument(index, historyType,
                                 b_.getDictionaryAttr({b_.getNamedAttr(
                                     kHistoryAttr, b_.getUnitAttr())}),
                                 v.getLoc());
        history = fn_.getArgument(index);
      }
      auto qop =
          QuantizeOp::create(b_, v.getLoc(), codesType, scaleType, historyType,
                             Type(), v, history, g, scaling);
      if (argument)
        lastArgumentQuantize_ = qop;
      if (history)
        histories_.push_back(
            {cast<BlockArgument>(history).getArgNumber(), qop.getNewHistory()});
      result = {qop.getOutput(), qop.getScale()};
    }
    cache_[key] = result;
    return result;
  }

  /// Quantizes a constant at compile time with the CPU oracle.
  FailureOr<std::pair<Value, Value>>
  fold(arith::ConstantOp cst, DenseElementsAttr data,
       RankedTensorType codesType, RankedTensorType scaleType,
       const ::fp8::Granularity &gran, QuantRecipeAttr q) {
    std::vector<float> values;
    values.reserve(size_t(data.getNumElements()));
    for (APFloat f : data.getValues<APFloat>())
      values.push_back(float(f.convertToDouble()));
    const ArrayRef<int64_t> shape = codesType.getShape();
    const int64_t groups = shape.size() == 3 ? shape[0] : 1;
    const int64_t rows = shape[shape.size() - 2], cols = shape.back();
    ::fp8::QuantRecipe recipe;
    recipe.format = *toDType(q.getFormat());
    recipe.granularity = gran;
    std::vector<char> codes, scales;
    for (int64_t g = 0; g < groups; ++g) {
      ::fp8::Expected<::fp8::numerics::QuantizedTensor> r =
          ::fp8::numerics::quantize(values.data() + g * rows * cols, rows, cols,
                                    recipe);
      if (!r)
        return cst.emitError("cannot quantize this constant at compile time: ")
               << r.message();
      codes.insert(codes.end(), r->codes.begin(), r->codes.end());
      if (gran.scale == ::fp8::ScaleFormat::UE8M0) {
        scales.insert(scales.end(), r->scaleCodes.begin(), r->scaleCodes.end());
      } else {
        const char *p = reinterpret_cast<const char *>(r->scales.data());
        scales.insert(scales.end(), p, p + r->scales.size() * sizeof(float));
      }
    }
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointAfter(cst);
    auto codesAttr = DenseElementsAttr::getFromRawBuffer(codesType, codes);
    auto scaleAttr = DenseElementsAttr::getFromRawBuffer(scaleType, scales);
    auto c = arith::ConstantOp::create(b_, cst.getLoc(), codesAttr);
    c->setAttr(kSourceAttr, data);
    auto s = arith::ConstantOp::create(b_, cst.getLoc(), scaleAttr);
    return std::make_pair(c.getResult(), s.getResult());
  }

  LogicalResult lower(linalg::LinalgOp op, RecipeAttr recipe) {
    OperandInfo a, b;
    bool batched = false;
    if (failed(classify(op, a, b, batched)))
      return failure();
    for (auto [name, v] :
         {std::pair<const char *, Value>{"A", a.value}, {"B", b.value}}) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !isWideFloat(t.getElementType()))
        return op->emitError("expected bf16, f16 or f32 operands to quantize, "
                             "found ")
               << name << " of type " << v.getType();
    }
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // Only suggest an `out` the recipe can state: FP8 GEMMs write bf16 or
    // f32 (an f16 result has no recipe that produces it).
    Type resultElt = resultType.getElementType();
    if (!resultElt.isBF16() && !resultElt.isF32())
      return op->emitError("expected the result element type to be bf16 or "
                           "f32 (what scaled FP8 GEMMs write), found ")
             << resultElt << ": make the matmul's result bf16 or f32";
    if (failed(checkRecipeOut(op, resultType, recipe)))
      return failure();
    Value init = op.getDpsInits()[0];
    const bool accumulate = !isZeroInit(init);
    if (accumulate && batched)
      return op->emitError("expected a zero init for a batched matmul "
                           "(grouped FP8 GEMMs do not accumulate)");

    MLIRContext *ctx = op->getContext();
    auto storedGran = [&](QuantRecipeAttr q, ::fp8::Layout layout) {
      return fromRecipe(
          ctx, ::fp8::logicalGranularity(toRecipe(q.getGranularity()), layout));
    };
    GranularityAttr ga = storedGran(recipe.getA(), a.layout);
    GranularityAttr gb = storedGran(recipe.getB(), b.layout);

    // The GEMM rules (checkScaledGemm) run once, in the verifier of the op
    // built below; the linalg and recipe verifiers already hold what they
    // check for the ops this pass accepts.
    if (batched && cast<ShapedType>(a.value.getType()).isDynamicDim(0))
      return op->emitError("expected a static batch count, found ")
             << a.value.getType();

    FailureOr<std::pair<Value, Value>> qa =
        quantize(op, a.value, ga, recipe.getA());
    if (failed(qa))
      return failure();
    FailureOr<std::pair<Value, Value>> qb =
        quantize(op, b.value, gb, recipe.getB());
    if (failed(qb))
      return failure();

    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(op);
    IntegerAttr interval;
    if (std::optional<int64_t> p = recipe.getPromotionInterval())
      interval = b_.getI64IntegerAttr(*p);
    auto la = LayoutAttr::get(ctx, fromRecipe(a.layout));
    auto lb = LayoutAttr::get(ctx, fromRecipe(b.layout));
    Value result;
    if (!batched) {
      result = ScaledMatmulOp::create(b_, op->getLoc(), resultType, qa->first,
                                      qa->second, qb->first, qb->second,
                                      accumulate ? init : Value(), ga, gb, la,
                                      lb, interval)
                   .getResult();
    } else {
      // One full group per batch: valid_rows = M everywhere.
      auto at = cast<RankedTensorType>(a.value.getType());
      const int64_t mDim = a.layout == ::fp8::Layout::KMajor ? 1 : 2;
      auto groupsType =
          RankedTensorType::get({at.getDimSize(0)}, b_.getI32Type());
      Value groups;
      if (!at.isDynamicDim(mDim)) {
        groups = arith::ConstantOp::create(
            b_, op->getLoc(),
            DenseElementsAttr::get(groupsType, b_.getI32IntegerAttr(int32_t(
                                                   at.getDimSize(mDim)))));
      } else {
        Value dim = tensor::DimOp::create(b_, op->getLoc(), a.value, mDim);
        Value rows =
            arith::IndexCastOp::create(b_, op->getLoc(), b_.getI32Type(), dim);
        groups = tensor::SplatOp::create(b_, op->getLoc(), groupsType, rows);
      }
      auto g = GroupedScaledMatmulOp::create(
          b_, op->getLoc(), resultType,
          GroupModeAttr::get(ctx, GroupMode::Masked), groups, qa->first,
          qa->second, qb->first, qb->second, ga, gb, la, lb, interval);
      g->setAttr(kFullBatchAttr, b_.getUnitAttr());
      result = g.getResult();
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    // The zero init may be dead now: a fill, then the empty tensor it fills.
    Operation *def = init.getDefiningOp();
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(def)) {
      def = fill.getOutputs()[0].getDefiningOp();
      if (fill->use_empty())
        fill->erase();
      else
        def = nullptr;
    }
    if (isa_and_nonnull<tensor::EmptyOp>(def) && def->use_empty())
      def->erase();
    return success();
  }

  /// Returns every new amax history from the function.
  LogicalResult finishHistories() {
    if (histories_.empty())
      return success();
    auto ret = cast<func::ReturnOp>(fn_.getBody().front().getTerminator());
    for (auto [argIndex, history] : histories_) {
      const unsigned index = fn_.getNumResults();
      // Appending a result to a func.func cannot fail.
      (void)fn_.insertResult(
          index, history.getType(),
          b_.getDictionaryAttr({b_.getNamedAttr(
              kHistoryOfAttr, b_.getI64IntegerAttr(argIndex))}));
      ret->insertOperands(ret->getNumOperands(), history);
    }
    return success();
  }

  func::FuncOp fn_;
  bool foldConstants_;
  OpBuilder b_;
  std::map<std::tuple<const void *, const void *, const void *, const void *>,
           std::pair<Value, Value>>
      cache_;
  SmallVector<std::pair<unsigned, Value>> histories_;
  Operation *lastArgumentQuantize_ = nullptr;
};

struct QuantizeAnnotatedPass
    : mlir::fp8::impl::FP8QuantizeAnnotatedBase<QuantizeAnnotatedPass> {
  using FP8QuantizeAnnotatedBase::FP8QuantizeAnnotatedBase;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      if (failed(FunctionLowering(fn, foldConstants).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
