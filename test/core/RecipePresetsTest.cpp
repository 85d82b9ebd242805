//===- RecipePresetsTest.cpp - The named GEMM recipes ---------------------===//

#include "core/RecipePresets.h"

#include <gtest/gtest.h>

using namespace fp8;

TEST(RecipePresets, EachNameOnEachTarget) {
  EXPECT_EQ(recipePresetNames(), "mx, deepseek or per-tensor");
  auto ds90 = findRecipePreset("deepseek", Arch::SM90a);
  ASSERT_TRUE(ds90);
  EXPECT_EQ(toString(ds90->a), toString(Granularity::block(1, 128)));
  EXPECT_EQ(toString(ds90->b), toString(Granularity::block(128, 128)));
  EXPECT_EQ(ds90->promotionInterval, 128);
  auto ds100 = findRecipePreset("deepseek", Arch::SM100a);
  ASSERT_TRUE(ds100);
  EXPECT_EQ(ds100->a.scale, ScaleFormat::F32Pow2);
  EXPECT_EQ(ds100->promotionInterval, 32);
  auto mx = findRecipePreset("mx", Arch::SM100a);
  ASSERT_TRUE(mx);
  EXPECT_EQ(toString(mx->a), toString(Granularity::mx()));
  EXPECT_EQ(mx->promotionInterval, std::nullopt);
  auto pt = findRecipePreset("per-tensor", Arch::SM90a);
  ASSERT_TRUE(pt);
  EXPECT_TRUE(pt->a.isPerTensor() && pt->b.isPerTensor());
  EXPECT_EQ(pt->promotionInterval, 128);
  EXPECT_EQ(findRecipePreset("per-tensor", Arch::SM100a)->promotionInterval,
            std::nullopt);
  EXPECT_FALSE(findRecipePreset("bogus", Arch::SM90a));
}

TEST(RecipePresets, NamedByTheirScalingAndPromotion) {
  for (const char *name : {"mx", "deepseek", "per-tensor"})
    for (Arch arch : {Arch::SM90a, Arch::SM100a}) {
      auto p = findRecipePreset(name, arch);
      ASSERT_TRUE(p) << name;
      EXPECT_EQ(recipePresetOf(arch, p->a, p->b, p->promotionInterval), name)
          << name;
    }
  auto ds = findRecipePreset("deepseek", Arch::SM90a);
  // Another promotion interval, another scale format, or A and B swapped:
  // no preset.
  EXPECT_FALSE(recipePresetOf(Arch::SM90a, ds->a, ds->b, 256));
  EXPECT_FALSE(recipePresetOf(Arch::SM90a, ds->a, ds->b, std::nullopt));
  EXPECT_FALSE(recipePresetOf(
      Arch::SM90a, Granularity::block(1, 128, ScaleFormat::UE8M0), ds->b, 128));
  EXPECT_FALSE(recipePresetOf(Arch::SM90a, ds->b, ds->a, 128));
}
