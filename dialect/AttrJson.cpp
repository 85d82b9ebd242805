//===- AttrJson.cpp - Attributes <-> the JSON of the specs ----------------===//
//
// The dictionary form of a JSON document and back. Kernel specs have one
// schema, that of the plans (core/KernelSpec.cpp, codegen/Elementwise.cpp);
// their attributes' text reuses it, so one reader checks both.
//
//===----------------------------------------------------------------------===//

#include "dialect/FP8Attrs.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
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

namespace {
/// A JSON value in the syntax of attributes, integers without a type
/// (the parser reads them back as i64).
void printJson(llvm::raw_ostream &os, const nlohmann::json &j) {
  if (j.is_object()) {
    os << '{';
    bool first = true;
    for (const auto &[key, value] : j.items()) {
      os << (first ? "" : ", ") << key << " = ";
      printJson(os, value);
      first = false;
    }
    os << '}';
  } else if (j.is_array()) {
    os << '[';
    for (size_t i = 0; i < j.size(); ++i) {
      os << (i ? ", " : "");
      printJson(os, j[i]);
    }
    os << ']';
  } else if (j.is_string()) {
    os << '"';
    llvm::printEscapedString(j.get<std::string>(), os);
    os << '"';
  } else if (j.is_boolean()) {
    os << (j.get<bool>() ? "true" : "false");
  } else if (j.is_number_integer()) {
    os << j.get<int64_t>();
  } else {
    os << j.dump();
  }
}
} // namespace

void mlir::fp8::printJsonAsAttribute(llvm::raw_ostream &os,
                                     llvm::StringRef json) {
  printJson(os, nlohmann::json::parse(json.str()));
}
