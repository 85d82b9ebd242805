//===- FP8Attrs.cpp - fp8 dialect attributes ------------------------------===//

#include "dialect/FP8Attrs.h"

#include "dialect/FP8Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::fp8;

#include "dialect/FP8Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/FP8Attrs.cpp.inc"

void FP8Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/FP8Attrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Enum conversions. Each enum has one spelling table per side: ODS generates
// the dialect's (stringify*/symbolize*), core/Recipe.cpp holds the plain
// C++ one (toString/parse*), and a case converts through its spelling.
// FP8AttrsTest checks that every case of every enum round-trips.
//===----------------------------------------------------------------------===//

namespace {
/// The case a spelling names on the other side; the spellings agree by test.
template <class T> T spelled(std::optional<T> v) {
  if (!v)
    llvm::report_fatal_error("an enum case is spelled differently in ODS "
                             "and core/Recipe.cpp");
  return *v;
}
} // namespace

::fp8::ScaleFormat mlir::fp8::toRecipe(ScaleFormat f) {
  return spelled(::fp8::parseScaleFormat(stringifyScaleFormat(f)));
}
ScaleFormat mlir::fp8::fromRecipe(::fp8::ScaleFormat f) {
  return spelled(symbolizeScaleFormat(::fp8::toString(f)));
}
::fp8::ScalingMode mlir::fp8::toRecipe(ScalingMode m) {
  return spelled(::fp8::parseScalingMode(stringifyScalingMode(m)));
}
ScalingMode mlir::fp8::fromRecipe(::fp8::ScalingMode m) {
  return spelled(symbolizeScalingMode(::fp8::toString(m)));
}
::fp8::AmaxAlgo mlir::fp8::toRecipe(AmaxAlgo a) {
  return spelled(::fp8::parseAmaxAlgo(stringifyAmaxAlgo(a)));
}
AmaxAlgo mlir::fp8::fromRecipe(::fp8::AmaxAlgo a) {
  return spelled(symbolizeAmaxAlgo(::fp8::toString(a)));
}
::fp8::Layout mlir::fp8::toRecipe(Layout l) {
  return spelled(::fp8::parseLayout(stringifyLayout(l)));
}
Layout mlir::fp8::fromRecipe(::fp8::Layout l) {
  return spelled(symbolizeLayout(::fp8::toString(l)));
}

/// Not one-to-one (a grouped GEMM's kind): a switch.
::fp8::GemmKind mlir::fp8::toRecipe(GroupMode g) {
  switch (g) {
  case GroupMode::Contiguous:
    return ::fp8::GemmKind::GroupedContiguous;
  case GroupMode::Masked:
    return ::fp8::GemmKind::GroupedMasked;
  case GroupMode::AlongK:
    return ::fp8::GemmKind::GroupedK;
  }
  llvm_unreachable("unknown group mode");
}

//===----------------------------------------------------------------------===//
// Attribute conversions.
//===----------------------------------------------------------------------===//

::fp8::Granularity mlir::fp8::toRecipe(GranularityAttr attr) {
  return ::fp8::Granularity::block(attr.getRows(), attr.getCols(),
                                   toRecipe(attr.getScale()));
}

GranularityAttr mlir::fp8::fromRecipe(MLIRContext *ctx,
                                      const ::fp8::Granularity &g) {
  return GranularityAttr::get(ctx, g.rows, g.cols, fromRecipe(g.scale));
}

::fp8::DelayedScaling mlir::fp8::toDelayedScaling(ScalingAttr attr) {
  ::fp8::DelayedScaling d;
  d.historyLength = attr.getHistory();
  d.updateInterval = attr.getInterval();
  d.margin = attr.getMargin();
  d.algo = toRecipe(attr.getAlgo());
  return d;
}

ScalingAttr mlir::fp8::fromRecipe(MLIRContext *ctx, ::fp8::ScalingMode mode,
                                  const ::fp8::DelayedScaling &delayed) {
  if (mode == ::fp8::ScalingMode::Current)
    return ScalingAttr::get(ctx, ScalingMode::Current);
  return ScalingAttr::get(ctx, ScalingMode::Delayed, delayed.historyLength,
                          delayed.updateInterval, delayed.margin,
                          fromRecipe(delayed.algo));
}

::fp8::QuantRecipe mlir::fp8::toRecipe(QuantRecipeAttr attr) {
  ::fp8::QuantRecipe q;
  q.format = toDType(attr.getFormat()).value_or(::fp8::DType::E4M3FN);
  q.granularity = toRecipe(attr.getGranularity());
  q.mode = toRecipe(attr.getScaling().getMode());
  q.delayed = toDelayedScaling(attr.getScaling());
  return q;
}

QuantRecipeAttr mlir::fp8::fromRecipe(MLIRContext *ctx,
                                      const ::fp8::QuantRecipe &q) {
  return QuantRecipeAttr::get(ctx, fromRecipe(ctx, q.format),
                              fromRecipe(ctx, q.granularity),
                              fromRecipe(ctx, q.mode, q.delayed));
}

::fp8::OperandSpec mlir::fp8::toOperandSpec(QuantRecipeAttr q,
                                            ::fp8::Layout layout) {
  ::fp8::OperandSpec spec;
  spec.format = toDType(q.getFormat()).value_or(::fp8::DType::E4M3FN);
  spec.layout = layout;
  // The logical -> stored map is the same swap as stored -> logical.
  spec.granularity =
      ::fp8::logicalGranularity(toRecipe(q.getGranularity()), layout);
  return spec;
}

//===----------------------------------------------------------------------===//
// Types and shapes.
//===----------------------------------------------------------------------===//

std::optional<::fp8::DType> mlir::fp8::toDType(Type type) {
  using ::fp8::DType;
  return llvm::TypeSwitch<Type, std::optional<DType>>(type)
      .Case([](Float8E4M3FNType) { return DType::E4M3FN; })
      .Case([](Float8E5M2Type) { return DType::E5M2; })
      .Case([](BFloat16Type) { return DType::BF16; })
      .Case([](Float16Type) { return DType::F16; })
      .Case([](Float32Type) { return DType::F32; })
      .Case([](Float8E8M0FNUType) { return DType::UE8M0; })
      .Case([](IntegerType t) -> std::optional<DType> {
        if (t.getWidth() == 32 && !t.isUnsigned())
          return DType::I32;
        return std::nullopt;
      })
      .Default([](Type) { return std::nullopt; });
}

Type mlir::fp8::fromRecipe(MLIRContext *ctx, ::fp8::DType type) {
  Builder b(ctx);
  switch (type) {
  case ::fp8::DType::E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case ::fp8::DType::E5M2:
    return b.getType<Float8E5M2Type>();
  case ::fp8::DType::BF16:
    return b.getBF16Type();
  case ::fp8::DType::F16:
    return b.getF16Type();
  case ::fp8::DType::F32:
    return b.getF32Type();
  case ::fp8::DType::UE8M0:
    return b.getType<Float8E8M0FNUType>();
  case ::fp8::DType::I32:
    return b.getI32Type();
  }
  llvm_unreachable("unknown element type");
}

::fp8::Shape mlir::fp8::toRecipeShape(ArrayRef<int64_t> shape) {
  ::fp8::Shape out;
  out.reserve(shape.size());
  for (int64_t size : shape)
    out.push_back(ShapedType::isDynamic(size) ? ::fp8::kDynamic : size);
  return out;
}

//===----------------------------------------------------------------------===//
// GranularityAttr
//===----------------------------------------------------------------------===//

Attribute GranularityAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  // Consume the tokens of the spelling (`1x128:ue8m0` lexes as `1`, `x128`,
  // `:`, `ue8m0`), then read their source text, spaces dropped, with
  // codegen's parser, the one JSON plans use. The text, not the tokens:
  // `0x128` lexes as the hexadecimal 296.
  const char *begin = parser.getCurrentLocation().getPointer();
  while (true) {
    StringRef word;
    int64_t number;
    if (succeeded(parser.parseOptionalKeyword(&word)) ||
        succeeded(parser.parseOptionalColon()))
      continue;
    OptionalParseResult integer = parser.parseOptionalInteger(number);
    if (!integer.has_value())
      break;
    if (failed(*integer))
      return {};
  }
  const char *end = parser.getCurrentLocation().getPointer();
  if (parser.parseGreater())
    return {};
  std::string spelling;
  for (char c : StringRef(begin, end - begin))
    if (!llvm::isSpace(c))
      spelling += c;
  ::fp8::Expected<::fp8::Granularity> g = ::fp8::parseGranularity(spelling);
  if (!g) {
    parser.emitError(loc) << g.message();
    return {};
  }
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    g->rows, g->cols, fromRecipe(g->scale));
}

void GranularityAttr::print(AsmPrinter &printer) const {
  printer << '<' << ::fp8::toString(toRecipe(*this)) << '>';
}

LogicalResult
GranularityAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t rows, int64_t cols, ScaleFormat scale) {
  ::fp8::Status s = ::fp8::checkGranularity(
      ::fp8::Granularity::block(rows, cols, toRecipe(scale)),
      "the granularity");
  if (!s)
    return emitError() << s.message();
  return success();
}

//===----------------------------------------------------------------------===//
// ScalingAttr
//===----------------------------------------------------------------------===//

LogicalResult ScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ScalingMode mode, int64_t history,
                                  int64_t interval, int64_t margin,
                                  AmaxAlgo algo) {
  if (mode == ScalingMode::Current) {
    // The parameters' defaults (FP8Attrs.td) are those of DelayedScaling.
    ::fp8::DelayedScaling defaults;
    if (history != defaults.historyLength ||
        interval != defaults.updateInterval || margin != defaults.margin ||
        toRecipe(algo) != defaults.algo)
      return emitError() << "expected no delayed-scaling parameters (history, "
                            "interval, margin, algo) with current scaling";
    return success();
  }
  ::fp8::DelayedScaling d;
  d.historyLength = history;
  d.updateInterval = interval;
  d.margin = margin;
  d.algo = toRecipe(algo);
  ::fp8::Status s = ::fp8::checkDelayedScaling(d);
  if (!s)
    return emitError() << s.message();
  return success();
}

//===----------------------------------------------------------------------===//
// QuantRecipeAttr, RecipeAttr
//===----------------------------------------------------------------------===//

/// True for the FP8 element types data may be quantized to.
static bool isFP8Type(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

LogicalResult
QuantRecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        Type format, GranularityAttr granularity,
                        ScalingAttr scaling) {
  if (!isFP8Type(format))
    return emitError() << "expected an FP8 format (f8E4M3FN or f8E5M2), found "
                       << format;
  ::fp8::QuantRecipe q;
  q.format = *toDType(format);
  q.granularity = toRecipe(granularity);
  q.mode = toRecipe(scaling.getMode());
  q.delayed = toDelayedScaling(scaling);
  ::fp8::Status s = ::fp8::checkQuantRecipe(q, "the tensor");
  if (!s)
    return emitError() << s.message();
  return success();
}

LogicalResult RecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 QuantRecipeAttr a, QuantRecipeAttr b,
                                 std::optional<int64_t> promotionInterval,
                                 Type out) {
  if (!isa<BFloat16Type, Float32Type>(out))
    return emitError() << "expected out to be bf16 or f32, found " << out;
  ::fp8::MatmulRecipe r;
  r.a = toRecipe(a);
  r.b = toRecipe(b);
  r.promotionInterval = promotionInterval;
  r.out = *toDType(out);
  ::fp8::Status s = ::fp8::checkMatmulRecipe(r);
  if (!s)
    return emitError() << s.message();
  return success();
}

//===----------------------------------------------------------------------===//
// GemmSpecAttr
//===----------------------------------------------------------------------===//

Attribute GemmSpecAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute any;
  if (parser.parseLess() || parser.parseAttribute(any) || parser.parseGreater())
    return {};
  auto fields = dyn_cast<DictionaryAttr>(any);
  if (!fields) {
    parser.emitError(loc, "expected the GEMM spec as a dictionary ({arch = "
                          "..., n = ..., ...}), found ")
        << any;
    return {};
  }
  ::fp8::Expected<::fp8::KernelSpec> spec =
      ::fp8::kernelSpecFromJSON(attributeToJson(fields));
  if (!spec) {
    parser.emitError(loc) << spec.message();
    return {};
  }
  return get(parser.getContext(), *spec);
}

void GemmSpecAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printJsonAsAttribute(printer.getStream(), ::fp8::toJSON(getSpec()));
  printer << '>';
}
