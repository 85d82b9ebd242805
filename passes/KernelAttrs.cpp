//===- KernelAttrs.cpp - The pipeline's attributes and codegen specs ------===//

#include "passes/KernelAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/JSON.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::fp8;

namespace {
Attribute fromJson(MLIRContext *ctx, const llvm::json::Value &v) {
  Builder b(ctx);
  if (const llvm::json::Object *o = v.getAsObject()) {
    SmallVector<NamedAttribute> fields;
    for (const auto &kv : *o)
      fields.push_back(
          b.getNamedAttr(kv.first.str(), fromJson(ctx, kv.second)));
    return b.getDictionaryAttr(fields);
  }
  if (const llvm::json::Array *a = v.getAsArray()) {
    SmallVector<Attribute> elems;
    for (const llvm::json::Value &e : *a)
      elems.push_back(fromJson(ctx, e));
    return b.getArrayAttr(elems);
  }
  if (std::optional<llvm::StringRef> s = v.getAsString())
    return b.getStringAttr(*s);
  if (std::optional<bool> flag = v.getAsBoolean())
    return b.getBoolAttr(*flag);
  if (std::optional<int64_t> i = v.getAsInteger())
    return b.getI64IntegerAttr(*i);
  if (std::optional<double> d = v.getAsNumber())
    return b.getF64FloatAttr(*d);
  return b.getUnitAttr();
}

/// nlohmann's form (that of codegen's readers), not llvm::json's: llvm::json
/// prints a float of integral value without a fraction (4.0 as "4"), which
/// would turn a float attribute into an integer field that passes.
nlohmann::json toJson(Attribute a) {
  if (auto d = dyn_cast<DictionaryAttr>(a)) {
    nlohmann::json o = nlohmann::json::object();
    for (NamedAttribute n : d)
      o[n.getName().getValue().str()] = toJson(n.getValue());
    return o;
  }
  if (auto arr = dyn_cast<ArrayAttr>(a)) {
    nlohmann::json out = nlohmann::json::array();
    for (Attribute e : arr)
      out.push_back(toJson(e));
    return out;
  }
  if (auto s = dyn_cast<StringAttr>(a))
    return s.getValue().str();
  if (auto b = dyn_cast<BoolAttr>(a))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    // Every integer as its exact value: a 64-bit one as such, one beyond 64
    // bits (or an unsigned one beyond INT64_MAX) as a float, which the spec
    // readers refuse for an integer field with its value in the message,
    // rather than a truncated or wrapped integer that could pass.
    const APInt &v = i.getValue();
    const bool isUnsigned = i.getType().isUnsignedInteger();
    if (isUnsigned ? v.getActiveBits() < 64 : v.getSignificantBits() <= 64)
      return isUnsigned ? int64_t(v.getZExtValue()) : v.getSExtValue();
    llvm::APFloat wide(llvm::APFloat::IEEEdouble());
    (void)wide.convertFromAPInt(v, /*IsSigned=*/!isUnsigned,
                                llvm::APFloat::rmNearestTiesToEven);
    return wide.convertToDouble();
  }
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  return nullptr;
}
} // namespace

Attribute mlir::fp8::jsonToAttribute(MLIRContext *ctx, llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(json);
  if (!v) {
    llvm::consumeError(v.takeError());
    return {};
  }
  return fromJson(ctx, *v);
}

std::string mlir::fp8::attributeToJson(Attribute attr) {
  return toJson(attr).dump();
}

std::optional<::fp8::Arch> mlir::fp8::getTarget(ModuleOp module) {
  auto s = module->getAttrOfType<StringAttr>(kTargetAttr);
  if (!s)
    return std::nullopt;
  return ::fp8::parseArch(s.getValue().str());
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

FailureOr<::fp8::KernelSpec> mlir::fp8::gemmSpecOf(Operation *op,
                                                   ::fp8::Arch arch,
                                                   int64_t &batch,
                                                   std::string &why) {
  ::fp8::ScaledGemmArgs args;
  size_t lead = 0;
  bool accumulate = false;
  batch = 1;
  if (auto mm = dyn_cast<ScaledMatmulOp>(op)) {
    args = mm.getGemmArgs();
    accumulate = mm.getC() != nullptr;
  } else if (auto g = dyn_cast<GroupedScaledMatmulOp>(op)) {
    if (!isFullBatch(g)) {
      why = "grouped GEMMs with data-dependent groups are not supported by "
            "the runtime yet (only the full batches of a batched matmul)";
      return failure();
    }
    args = g.getGemmArgs();
    lead = 1;
    batch = args.aShape[0];
    if (batch == ::fp8::kDynamic) {
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
  spec.promotionInterval = args.promotionInterval.value_or(0);
  spec.out = args.out;
  spec.accumulate = accumulate;
  if (std::optional<::fp8::TileConfig> t = getTile(op))
    spec.tile = *t;
  return spec;
}

std::optional<::fp8::TileConfig> mlir::fp8::getTile(Operation *op) {
  auto d = op->getAttrOfType<DictionaryAttr>(kTileAttr);
  if (!d)
    return std::nullopt;
  ::fp8::Expected<::fp8::TileConfig> t =
      ::fp8::tileConfigFromJSON(attributeToJson(d));
  if (!t)
    return std::nullopt;
  return *t;
}

void mlir::fp8::setKernel(Operation *op, llvm::StringRef kind,
                          llvm::StringRef name, llvm::StringRef specJson) {
  Builder b(op->getContext());
  op->setAttr(kKernelAttr,
              b.getDictionaryAttr(
                  {b.getNamedAttr("kind", b.getStringAttr(kind)),
                   b.getNamedAttr("name", b.getStringAttr(name)),
                   b.getNamedAttr(
                       "spec", jsonToAttribute(op->getContext(), specJson))}));
}

std::optional<KernelRef> mlir::fp8::getKernel(Operation *op) {
  auto d = op->getAttrOfType<DictionaryAttr>(kKernelAttr);
  if (!d)
    return std::nullopt;
  auto kind = d.getAs<StringAttr>("kind");
  auto name = d.getAs<StringAttr>("name");
  auto spec = d.getAs<DictionaryAttr>("spec");
  if (!kind || !name || !spec)
    return std::nullopt;
  return KernelRef{kind.getValue().str(), name.getValue().str(),
                   attributeToJson(spec)};
}
