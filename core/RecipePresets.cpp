//===- RecipePresets.cpp - The named GEMM recipes -------------------------===//

#include "core/RecipePresets.h"

#include <algorithm>
#include <vector>

namespace fp8 {

namespace {
/// Every preset on every target, in the order recipePresetNames lists them.
/// mx is block-scaled tcgen05.mma (sm_100a's; sm_90a refuses it). deepseek
/// is DeepSeek-V3's 1x128 activations and 128x128 weights: f32 scales
/// promoted every 128 on sm_90a; on sm_100a power-of-two scales (the MMA's
/// UE8M0 block scales) promoted every 32. per-tensor promotes every 128 on
/// sm_90a and applies its scales in the epilogue on sm_100a.
const RecipePreset kPresets[] = {
    {"mx", Arch::SM90a, Granularity::mx(), Granularity::mx(), std::nullopt},
    {"mx", Arch::SM100a, Granularity::mx(), Granularity::mx(), std::nullopt},
    {"deepseek", Arch::SM90a, Granularity::block(1, 128, ScaleFormat::F32),
     Granularity::block(128, 128, ScaleFormat::F32), 128},
    {"deepseek", Arch::SM100a, Granularity::block(1, 128, ScaleFormat::F32Pow2),
     Granularity::block(128, 128, ScaleFormat::F32Pow2), 32},
    {"per-tensor", Arch::SM90a, Granularity::perTensor(),
     Granularity::perTensor(), 128},
    {"per-tensor", Arch::SM100a, Granularity::perTensor(),
     Granularity::perTensor(), std::nullopt},
};
} // namespace

std::optional<RecipePreset> findRecipePreset(std::string_view name, Arch arch) {
  for (const RecipePreset &p : kPresets)
    if (p.name == name && p.arch == arch)
      return p;
  return std::nullopt;
}

std::optional<std::string_view>
recipePresetOf(Arch arch, const Granularity &a, const Granularity &b,
               std::optional<int64_t> promotionInterval) {
  for (const RecipePreset &p : kPresets)
    if (p.arch == arch && p.a == a && p.b == b &&
        p.promotionInterval == promotionInterval)
      return p.name;
  return std::nullopt;
}

std::string recipePresetNames() {
  std::vector<std::string_view> names;
  for (const RecipePreset &p : kPresets)
    if (std::find(names.begin(), names.end(), p.name) == names.end())
      names.push_back(p.name);
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += std::string(i == 0                  ? ""
                        : i + 1 == names.size() ? " or "
                                                : ", ") +
            std::string(names[i]);
  return text;
}

} // namespace fp8
