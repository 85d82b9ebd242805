//===- FP8Attrs.h - fp8 dialect attributes ----------------------*- C++ -*-===//
//
// The recipe attributes and enums, and their one-to-one conversions to and
// from the plain C++ recipe types of core/Recipe.h (namespace ::fp8),
// which codegen and the runtime use without MLIR.
//
// Two namespaces are called fp8: the dialect's, mlir::fp8, and codegen's,
// ::fp8. Inside `namespace mlir::fp8 { ... }` (where passes live) `fp8::`
// is the dialect and `::fp8::` codegen; at global scope after
// `using namespace mlir`, a bare `fp8::` is ambiguous, so spell both out.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8ATTRS_H
#define FP8_DIALECT_FP8ATTRS_H

#include "core/KernelSpec.h"
#include "core/Recipe.h"
#include "core/RecipeRules.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace fp8 {
/// The hash a KernelSpec attribute parameter needs (equality is
/// KernelSpec::operator==).
inline llvm::hash_code hash_value(const KernelSpec &s) {
  return llvm::hash_combine(s.kernelName(), s.m, s.groups);
}
} // namespace fp8

#include "dialect/FP8Enums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/FP8Attrs.h.inc"

namespace mlir::fp8 {

//===----------------------------------------------------------------------===//
// Enums: dialect <-> codegen, case for case.
//===----------------------------------------------------------------------===//

/// The codegen scale format of a dialect one.
::fp8::ScaleFormat toRecipe(ScaleFormat f);
/// The codegen scaling mode of a dialect one.
::fp8::ScalingMode toRecipe(ScalingMode m);
/// The codegen amax algorithm of a dialect one.
::fp8::AmaxAlgo toRecipe(AmaxAlgo a);
/// The codegen layout of a dialect one.
::fp8::Layout toRecipe(Layout l);
/// GroupedContiguous or GroupedMasked.
::fp8::GemmKind toRecipe(GroupMode g);

/// The dialect scale format of a codegen one.
ScaleFormat fromRecipe(::fp8::ScaleFormat f);
/// The dialect scaling mode of a codegen one.
ScalingMode fromRecipe(::fp8::ScalingMode m);
/// The dialect amax algorithm of a codegen one.
AmaxAlgo fromRecipe(::fp8::AmaxAlgo a);
/// The dialect layout of a codegen one.
Layout fromRecipe(::fp8::Layout l);

//===----------------------------------------------------------------------===//
// Attributes: dialect <-> codegen.
//===----------------------------------------------------------------------===//

/// The block shape and scale format of a granularity attribute.
::fp8::Granularity toRecipe(GranularityAttr attr);
/// The attribute for a granularity (blocks must be positive or kWhole).
GranularityAttr fromRecipe(MLIRContext *ctx, const ::fp8::Granularity &g);

/// The delayed-scaling parameters of a scaling attribute (defaults for
/// current scaling); the mode is attr.getMode().
::fp8::DelayedScaling toDelayedScaling(ScalingAttr attr);
/// The attribute for a scaling mode; `delayed` is ignored for current.
ScalingAttr fromRecipe(MLIRContext *ctx, ::fp8::ScalingMode mode,
                       const ::fp8::DelayedScaling &delayed);

/// The recipe of one tensor. Expects a verified attribute.
::fp8::QuantRecipe toRecipe(QuantRecipeAttr attr);
/// The attribute for the recipe of one tensor (an FP8 format).
QuantRecipeAttr fromRecipe(MLIRContext *ctx, const ::fp8::QuantRecipe &q);

/// The operand description of an operand quantized with `q` and stored with
/// `layout`. A recipe attribute states granularities in the logical frame
/// (A as [M, K], B as [N, K]); this maps them to the operand as stored.
::fp8::OperandSpec toOperandSpec(QuantRecipeAttr q,
                                 ::fp8::Layout layout = ::fp8::Layout::KMajor);

//===----------------------------------------------------------------------===//
// Types and shapes.
//===----------------------------------------------------------------------===//

/// The codegen element type of an MLIR type: f8E4M3FN, f8E5M2, bf16, f16,
/// f32, f8E8M0FNU (ue8m0); nullopt for any other type.
std::optional<::fp8::DType> toDType(Type type);
/// The MLIR type of a codegen element type.
Type fromRecipe(MLIRContext *ctx, ::fp8::DType type);

/// A shape in codegen's terms: dynamic sizes become ::fp8::kDynamic.
::fp8::Shape toRecipeShape(ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// The JSON schema of the kernel specs as attributes (dialect/AttrJson.cpp).
//===----------------------------------------------------------------------===//

/// The attribute form of a JSON document: objects become dictionaries,
/// arrays arrays, strings strings, integers i64, other numbers f64, booleans
/// bools, null unit. Null on invalid JSON.
Attribute jsonToAttribute(MLIRContext *ctx, llvm::StringRef json);
/// The inverse of jsonToAttribute.
std::string attributeToJson(Attribute attr);
/// Prints a JSON document (valid: a spec's toJSON) as the text of the
/// attribute jsonToAttribute makes of it, integers without a type.
void printJsonAsAttribute(llvm::raw_ostream &os, llvm::StringRef json);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8ATTRS_H
