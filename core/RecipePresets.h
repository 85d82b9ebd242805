//===- RecipePresets.h - The named GEMM recipes -----------------*- C++ -*-===//
//
// The recipes a user can name instead of spelling out granularities and a
// promotion interval (fp8-codegen --recipe, fp8-bench --recipe): mx,
// deepseek and per-tensor, each as the target runs it. One table
// (RecipePresets.cpp) holds them all.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CORE_RECIPEPRESETS_H
#define FP8_CORE_RECIPEPRESETS_H

#include "core/Recipe.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8 {

/// A named recipe on one target: the scaling of A [M, K] and B [N, K] and
/// the promotion interval (nullopt: the tensor core accumulates the whole K).
struct RecipePreset {
  std::string_view name;
  Arch arch;
  Granularity a, b;
  std::optional<int64_t> promotionInterval;
};

/// The preset `name` on `arch`, if there is one.
std::optional<RecipePreset> findRecipePreset(std::string_view name, Arch arch);

/// The name of the preset on `arch` whose scaling of A and B and promotion
/// interval are these, if one is (fp8-tune's report names the recipe of a
/// GEMM it tuned, so that a reader can ask fp8-codegen --recipe for it).
std::optional<std::string_view>
recipePresetOf(Arch arch, const Granularity &a, const Granularity &b,
               std::optional<int64_t> promotionInterval);

/// The preset names, as a message lists them: "mx, deepseek or per-tensor".
std::string recipePresetNames();

} // namespace fp8

#endif // FP8_CORE_RECIPEPRESETS_H
