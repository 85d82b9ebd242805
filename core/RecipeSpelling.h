//===- RecipeSpelling.h - The recipe as the fp8 dialect prints it -*- C++
//-*-===//
//
// The text of the dialect's recipe attributes (dialect/FP8Attrs.td) for code
// that has no MLIR: the Python package's recipe objects print themselves so,
// and a user can paste what they print into an annotated model.
//
//   #fp8.granularity<1x128>
//   #fp8.scaling<delayed, history = 1024, margin = 1>
//   #fp8.quant<f8E4M3FN, <1x128>>
//   #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>,
//               promotion_interval = 128>
//
// Nested attributes drop their `#fp8.<name>` prefix, as the dialect's
// printer does; parameters at their default are not printed. The dialect's
// unit tests (test/dialect/RecipeSpellingTest.cpp) compare every function
// with its printer.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CORE_RECIPESPELLING_H
#define FP8_CORE_RECIPESPELLING_H

#include "core/Recipe.h"

#include <string>

namespace fp8 {

/// How much of an attribute's text to write.
enum class Spelling : uint8_t {
  Attribute, ///< "#fp8.quant<...>": the attribute on its own
  Nested,    ///< "<...>": a parameter of another fp8 attribute
};

/// "#fp8.granularity<1x128>".
std::string dialectSpelling(const Granularity &g,
                            Spelling s = Spelling::Attribute);
/// "#fp8.scaling<current>", "#fp8.scaling<delayed, history = 1024>"
/// (`delayed` is read only for delayed scaling).
std::string dialectSpelling(ScalingMode mode, const DelayedScaling &delayed,
                            Spelling s = Spelling::Attribute);
/// "#fp8.quant<f8E4M3FN, <1x128>>" (the scaling only when delayed).
std::string dialectSpelling(const QuantRecipe &q,
                            Spelling s = Spelling::Attribute);
/// "#fp8.recipe<a = <...>, b = <...>, promotion_interval = 128>" (`out`
/// only when not bf16).
std::string dialectSpelling(const MatmulRecipe &r,
                            Spelling s = Spelling::Attribute);

} // namespace fp8

#endif // FP8_CORE_RECIPESPELLING_H
