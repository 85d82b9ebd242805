//===- FP8Ops.cpp - fp8 dialect operations --------------------------------===//
//
// Verifiers. ODS has checked types and ranks; what remains are the recipe
// rules of core/RecipeRules.h, whose messages are reported unchanged, and
// the pairing of the amax history operand and result.
//
//===----------------------------------------------------------------------===//

#include "dialect/FP8Ops.h"

#include "core/RecipeRules.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::fp8;

#define GET_OP_CLASSES
#include "dialect/FP8Ops.cpp.inc"

/// Reports a failed rule as an op error.
static LogicalResult check(Operation *op, const ::fp8::Status &status) {
  if (status)
    return success();
  return op->emitOpError() << status.message();
}

static ::fp8::Shape shapeOf(Value value) {
  return toRecipeShape(cast<ShapedType>(value.getType()).getShape());
}

/// The element type of a tensor whose type ODS has constrained to ones
/// codegen knows.
static ::fp8::DType dtypeOf(Value value) {
  return toDType(cast<ShapedType>(value.getType()).getElementType())
      .value_or(::fp8::DType::F32);
}

/// The rules every scaled FP8 tensor obeys: the scale's shape and element
/// type follow from the tensor's shape and granularity.
static LogicalResult verifyScales(Operation *op, Value data, Value scale,
                                  GranularityAttr granularity) {
  ::fp8::Granularity g = toRecipe(granularity);
  if (failed(check(op, ::fp8::checkScaleShape(shapeOf(data), g, shapeOf(scale),
                                              "the input"))))
    return failure();
  return check(op, ::fp8::checkScaleType(g, dtypeOf(scale), "the input"));
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  ScalingAttr scaling = getScaling();
  if (failed(check(*this, ::fp8::checkScalingMode(toRecipe(scaling.getMode()),
                                                  toRecipe(getGranularity())))))
    return failure();

  Value history = getHistory();
  if (scaling.isDelayed() && !history)
    return emitOpError("expected an amax history operand with delayed scaling");
  if (!scaling.isDelayed() && history)
    return emitOpError("expected no amax history operand with current scaling");
  Value newHistory = getNewHistory();
  if (history && !newHistory)
    return emitOpError(
        "expected a new_history result for the amax history operand");
  if (!history && newHistory)
    return emitOpError(
        "expected no new_history result without an amax history operand");
  if (history) {
    if (failed(check(*this, ::fp8::checkAmaxHistory(toDelayedScaling(scaling),
                                                    shapeOf(history)))))
      return failure();
    if (newHistory.getType() != history.getType())
      return emitOpError("expected new_history to have the amax history's "
                         "type ")
             << history.getType() << ", found " << newHistory.getType();
  }
  return verifyScales(*this, getInput(), getScale(), getGranularity());
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  return verifyScales(*this, getInput(), getScale(), getGranularity());
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

GranularityAttr TransposeOp::getResultGranularity() {
  GranularityAttr g = getGranularity();
  return GranularityAttr::get(getContext(), g.getCols(), g.getRows(),
                              g.getScale());
}

LogicalResult TransposeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("expected the output to have the input's element type ")
           << in.getElementType() << ", found " << out.getElementType();
  if (in.getRank() != out.getRank())
    return emitOpError("expected the output to have the input's rank (")
           << in.getRank() << "), found " << out.getRank();
  ::fp8::Shape want = shapeOf(getInput());
  std::swap(want[want.size() - 1], want[want.size() - 2]);
  const ::fp8::Shape found = shapeOf(getOutput());
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != found[i] && want[i] != ::fp8::kDynamic &&
        found[i] != ::fp8::kDynamic)
      return emitOpError("expected the output shape ")
             << ::fp8::formatShape(want)
             << " (the input's last two dimensions swapped), found "
             << ::fp8::formatShape(found);
  if (failed(verifyScales(*this, getInput(), getScale(), getGranularity())))
    return failure();
  // The result's scales, against the swapped granularity.
  ::fp8::Granularity g = toRecipe(getResultGranularity());
  if (failed(check(*this, ::fp8::checkScaleShape(shapeOf(getOutput()), g,
                                                 shapeOf(getOutputScale()),
                                                 "the output"))))
    return failure();
  return check(
      *this, ::fp8::checkScaleType(g, dtypeOf(getOutputScale()), "the output"));
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp, GroupedScaledMatmulOp
//===----------------------------------------------------------------------===//

/// The parts of ScaledGemmArgs that both GEMM ops have.
template <typename GemmOp>
static ::fp8::ScaledGemmArgs getCommonGemmArgs(GemmOp op) {
  ::fp8::ScaledGemmArgs args;
  args.a.format = dtypeOf(op.getA());
  args.a.layout = toRecipe(op.getALayout());
  args.a.granularity = toRecipe(op.getAGranularity());
  args.b.format = dtypeOf(op.getB());
  args.b.layout = toRecipe(op.getBLayout());
  args.b.granularity = toRecipe(op.getBGranularity());
  args.aShape = shapeOf(op.getA());
  args.aScaleShape = shapeOf(op.getAScale());
  args.aScaleType = dtypeOf(op.getAScale());
  args.bShape = shapeOf(op.getB());
  args.bScaleShape = shapeOf(op.getBScale());
  args.bScaleType = dtypeOf(op.getBScale());
  args.dShape = shapeOf(op.getD());
  args.out = dtypeOf(op.getD());
  // The attribute's signed value: the generated getter reads it unsigned.
  if (IntegerAttr interval = op.getPromotionIntervalAttr())
    args.promotionInterval = interval.getInt();
  return args;
}

::fp8::ScaledGemmArgs ScaledMatmulOp::getGemmArgs() {
  ::fp8::ScaledGemmArgs args = getCommonGemmArgs(*this);
  args.kind = ::fp8::GemmKind::Dense;
  return args;
}

LogicalResult ScaledMatmulOp::verify() {
  return check(*this, ::fp8::checkScaledGemm(getGemmArgs()));
}

::fp8::ScaledGemmArgs GroupedScaledMatmulOp::getGemmArgs() {
  ::fp8::ScaledGemmArgs args = getCommonGemmArgs(*this);
  args.kind = toRecipe(getMode());
  args.groupShape = shapeOf(getGroups());
  return args;
}

LogicalResult GroupedScaledMatmulOp::verify() {
  return check(*this, ::fp8::checkScaledGemm(getGemmArgs()));
}

//===----------------------------------------------------------------------===//
// MoE routing
//===----------------------------------------------------------------------===//

/// True when both sizes are static and differ.
static bool differ(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

LogicalResult MoePermuteOp::verify() {
  auto x = cast<RankedTensorType>(getX().getType());
  auto ids = cast<RankedTensorType>(getIds().getType());
  auto rows = cast<RankedTensorType>(getRows().getType());
  auto offsets = cast<RankedTensorType>(getOffsets().getType());
  const int64_t experts = getExperts(), align = getAlign();
  if (experts < 1 || experts > ::fp8::kMaxMoeExperts)
    return emitOpError("expected 1 <= experts <= ")
           << ::fp8::kMaxMoeExperts << ", found " << experts;
  if (align < 1 || align > ::fp8::kMaxMoeAlign)
    return emitOpError("expected 1 <= align <= ")
           << ::fp8::kMaxMoeAlign << ", found " << align;
  if (differ(x.getDimSize(0), ids.getDimSize(0)))
    return emitOpError("expected ids [T, topK] for x [T, H], found ")
           << ids << " for " << x;
  if (rows.getElementType() != x.getElementType() ||
      differ(rows.getDimSize(1), x.getDimSize(1)))
    return emitOpError("expected rows with x's element type and width, "
                       "found ")
           << rows << " for " << x;
  if (offsets.getDimSize(0) != experts + 1)
    return emitOpError("expected offsets of ")
           << experts + 1 << " elements (experts + 1), found " << offsets;
  if (getPositions().getType() != ids)
    return emitOpError("expected positions of the ids' type ")
           << ids << ", found " << getPositions().getType();
  if (!ids.isDynamicDim(0) && !ids.isDynamicDim(1) && !rows.isDynamicDim(0)) {
    const int64_t want =
        ids.getDimSize(0) * ids.getDimSize(1) + experts * (align - 1);
    if (rows.getDimSize(0) != want)
      return emitOpError("expected ")
             << want << " rows (topK * T + experts * (align - 1)), found "
             << rows.getDimSize(0);
  }
  return success();
}

LogicalResult GroupedMatmulOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  auto d = cast<RankedTensorType>(getD().getType());
  auto groups = cast<RankedTensorType>(getGroups().getType());
  if (getMode() == GroupMode::AlongK) {
    if (a.getRank() != 2 || b.getRank() != 2 || d.getRank() != 3)
      return emitOpError("expected A [R, M], B [R, N] and D [E, M, N] in the "
                         "along_k form, found ")
             << a << ", " << b << " and " << d;
    if (differ(a.getDimSize(0), b.getDimSize(0)))
      return emitOpError("expected A and B with equal rows (the tokens), "
                         "found ")
             << a << " and " << b;
    if (differ(d.getDimSize(1), a.getDimSize(1)) ||
        differ(d.getDimSize(2), b.getDimSize(1)))
      return emitOpError("expected D [E, M, N] for A ")
             << a << " and B " << b << ", found " << d;
    if (!d.isDynamicDim(0) && d.getDimSize(0) < 1)
      return emitOpError("expected at least one expert in D, found ") << d;
    const int64_t want =
        d.isDynamicDim(0) ? ShapedType::kDynamic : d.getDimSize(0) + 1;
    if (differ(groups.getDimSize(0), want))
      return emitOpError("expected offsets of E + 1 elements for D ")
             << d << ", found " << groups;
    return success();
  }
  const bool masked = getMode() == GroupMode::Masked;
  if (b.getRank() != 3)
    return emitOpError("expected the experts' weights B [E, N, K], found ")
           << b;
  const int64_t rank = masked ? 3 : 2;
  if (a.getRank() != rank || d.getRank() != rank)
    return emitOpError("expected A and D of rank ")
           << rank
           << (masked ? " ([E, maxM, K], [E, maxM, N])" : " ([R, K], [R, N])")
           << " in the " << (masked ? "masked" : "contiguous")
           << " form, found " << a << " and " << d;
  const int64_t lead = masked ? 1 : 0;
  if (differ(a.getDimSize(lead + 1), b.getDimSize(2)))
    return emitOpError("expected A and B [E, N, K] with equal K, found ")
           << a << " and " << b;
  const int64_t want = b.isDynamicDim(0) ? ShapedType::kDynamic
                                         : b.getDimSize(0) + (masked ? 0 : 1);
  if (differ(groups.getDimSize(0), want))
    return emitOpError("expected ")
           << (masked ? "valid rows of E" : "offsets of E + 1")
           << " elements for B " << b << ", found " << groups;
  if ((masked && (differ(a.getDimSize(0), b.getDimSize(0)) ||
                  differ(d.getDimSize(0), b.getDimSize(0)))) ||
      differ(d.getDimSize(lead), a.getDimSize(lead)) ||
      differ(d.getDimSize(lead + 1), b.getDimSize(1)))
    return emitOpError("expected D ")
           << (masked ? "[E, maxM, N]" : "[R, N]") << " for A " << a
           << " and B " << b << ", found " << d;
  return success();
}

LogicalResult MoeUnpermuteOp::verify() {
  auto y = cast<RankedTensorType>(getY().getType());
  auto pos = cast<RankedTensorType>(getPositions().getType());
  auto w = cast<RankedTensorType>(getWeights().getType());
  auto out = cast<RankedTensorType>(getOut().getType());
  if (differ(w.getDimSize(0), pos.getDimSize(0)) ||
      differ(w.getDimSize(1), pos.getDimSize(1)))
    return emitOpError("expected weights shaped like the positions ")
           << pos << ", found " << w;
  if (differ(out.getDimSize(0), pos.getDimSize(0)) ||
      differ(out.getDimSize(1), y.getDimSize(1)))
    return emitOpError("expected out [T, H] for positions ")
           << pos << " and y " << y << ", found " << out;
  return success();
}

//===----------------------------------------------------------------------===//
// fp8.interleave_rows, fp8.deinterleave_cols
//===----------------------------------------------------------------------===//

LogicalResult InterleaveRowsOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto r = cast<RankedTensorType>(getResult().getType());
  const int64_t block = getBlock();
  if (a.getElementType() != r.getElementType())
    return emitOpError("expected the result's element type ")
           << a.getElementType() << ", found " << r.getElementType();
  if (!a.isDynamicDim(0) && a.getDimSize(0) % block != 0)
    return emitOpError("expected the rows (")
           << a.getDimSize(0) << ") to be a multiple of the block (" << block
           << ")";
  if (differ(r.getDimSize(0),
             a.isDynamicDim(0) ? ShapedType::kDynamic : 2 * a.getDimSize(0)) ||
      differ(r.getDimSize(1), a.getDimSize(1)))
    return emitOpError("expected a result of twice the rows of ")
           << a << ", found " << r;
  return success();
}

LogicalResult DeinterleaveColsOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto f = cast<RankedTensorType>(getFirst().getType());
  const int64_t block = getBlock();
  if (in.getElementType() != f.getElementType())
    return emitOpError("expected results of element type ")
           << in.getElementType() << ", found " << f.getElementType();
  if (!in.isDynamicDim(1) && in.getDimSize(1) % (2 * block) != 0)
    return emitOpError("expected the columns (")
           << in.getDimSize(1) << ") to be a multiple of twice the block ("
           << 2 * block << ")";
  if (differ(f.getDimSize(0), in.getDimSize(0)) ||
      differ(f.getDimSize(1),
             in.isDynamicDim(1) ? ShapedType::kDynamic : in.getDimSize(1) / 2))
    return emitOpError("expected results of half the columns of ")
           << in << ", found " << f;
  return success();
}
