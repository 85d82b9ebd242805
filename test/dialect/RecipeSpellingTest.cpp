//===- RecipeSpellingTest.cpp - core's recipe text against the dialect's --===//
//
// core/RecipeSpelling.h writes the recipe attributes' text without MLIR
// (the Python package prints its recipes with it). For recipes covering
// every parameter, its text equals what the dialect's printer writes for the
// same attribute, and parses back to that attribute.
//
//===----------------------------------------------------------------------===//

#include "core/RecipeSpelling.h"
#include "core/RecipeRules.h"
#include "dialect/FP8Attrs.h"
#include "dialect/FP8Dialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <vector>

namespace dia = mlir::fp8;
namespace rcp = ::fp8;

namespace {

class RecipeSpelling : public ::testing::Test {
protected:
  RecipeSpelling() { ctx.loadDialect<dia::FP8Dialect>(); }

  std::string printed(mlir::Attribute a) {
    std::string s;
    llvm::raw_string_ostream os(s);
    a.print(os);
    return s;
  }

  /// `text` is what the dialect prints for `attr`, and parses back to it.
  void expectSpelling(mlir::Attribute attr, const std::string &text) {
    EXPECT_EQ(text, printed(attr));
    EXPECT_EQ(mlir::parseAttribute(text, &ctx), attr) << text;
  }

  mlir::MLIRContext ctx;
};

std::vector<rcp::Granularity> granularities() {
  using G = rcp::Granularity;
  return {G::perTensor(),
          G::perRow(),
          G::perColumn(),
          G::block(1, 128),
          G::block(128, 128, rcp::ScaleFormat::F32Pow2),
          G::mx(),
          G::block(128, G::kWhole),
          G::block(G::kWhole, 128, rcp::ScaleFormat::UE8M0)};
}

std::vector<rcp::QuantRecipe> quantRecipes() {
  std::vector<rcp::QuantRecipe> out;
  for (rcp::DType f : {rcp::DType::E4M3FN, rcp::DType::E5M2})
    for (const rcp::Granularity &g : granularities())
      out.push_back({f, g, rcp::ScalingMode::Current, {}});
  rcp::DelayedScaling d;
  for (int variant = 0; variant < 6; ++variant) {
    rcp::DelayedScaling v = d;
    if (variant == 1)
      v.historyLength = 1024;
    if (variant == 2)
      v.updateInterval = 4;
    if (variant == 3)
      v.margin = 2;
    if (variant == 4)
      v.algo = rcp::AmaxAlgo::MostRecent;
    if (variant == 5)
      v = {1024, 4, 2, rcp::AmaxAlgo::MostRecent};
    out.push_back({rcp::DType::E5M2, rcp::Granularity::perTensor(),
                   rcp::ScalingMode::Delayed, v});
  }
  return out;
}

} // namespace

TEST_F(RecipeSpelling, GranularityAndScaling) {
  for (const rcp::Granularity &g : granularities())
    expectSpelling(dia::fromRecipe(&ctx, g), rcp::dialectSpelling(g));
  for (const rcp::QuantRecipe &q : quantRecipes())
    expectSpelling(dia::fromRecipe(&ctx, q.mode, q.delayed),
                   rcp::dialectSpelling(q.mode, q.delayed));
  EXPECT_EQ(rcp::dialectSpelling(rcp::Granularity::block(1, 128),
                                 rcp::Spelling::Nested),
            "<1x128>");
}

TEST_F(RecipeSpelling, QuantRecipe) {
  for (const rcp::QuantRecipe &q : quantRecipes())
    expectSpelling(dia::fromRecipe(&ctx, q), rcp::dialectSpelling(q));
  // Current scaling: delayed parameters are not part of the recipe.
  rcp::QuantRecipe q;
  q.delayed.historyLength = 7;
  EXPECT_EQ(rcp::dialectSpelling(q), "#fp8.quant<f8E4M3FN, <per_tensor>>");
}

TEST_F(RecipeSpelling, MatmulRecipe) {
  using G = rcp::Granularity;
  std::vector<rcp::MatmulRecipe> recipes;
  rcp::MatmulRecipe deepseek;
  deepseek.a.granularity = G::block(1, 128);
  deepseek.b.granularity = G::block(128, 128);
  recipes.push_back(deepseek);
  rcp::MatmulRecipe rows;
  rows.a.granularity = rows.b.granularity = G::perRow();
  rows.promotionInterval.reset();
  rows.out = rcp::DType::F32;
  recipes.push_back(rows);
  rcp::MatmulRecipe mx;
  mx.a.granularity = mx.b.granularity = G::mx();
  mx.promotionInterval.reset();
  recipes.push_back(mx);
  rcp::MatmulRecipe grad = deepseek;
  grad.a.format = rcp::DType::E5M2;
  recipes.push_back(grad);
  rcp::MatmulRecipe delayed;
  delayed.a.mode = delayed.b.mode = rcp::ScalingMode::Delayed;
  delayed.a.delayed.historyLength = 1024;
  recipes.push_back(delayed);

  for (const rcp::MatmulRecipe &r : recipes) {
    ASSERT_TRUE(rcp::checkMatmulRecipe(r))
        << rcp::checkMatmulRecipe(r).message();
    auto attr = dia::RecipeAttr::get(
        &ctx, dia::fromRecipe(&ctx, r.a), dia::fromRecipe(&ctx, r.b),
        r.promotionInterval, dia::fromRecipe(&ctx, r.out));
    expectSpelling(attr, rcp::dialectSpelling(r));
  }
  EXPECT_EQ(rcp::dialectSpelling(deepseek),
            "#fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, "
            "promotion_interval = 128>");
}

TEST_F(RecipeSpelling, CheckMatmulRecipeRefusesWhatTheVerifierRefuses) {
  using G = rcp::Granularity;
  rcp::MatmulRecipe r;
  r.a.granularity = G::block(1, 128);
  r.b.granularity = G::block(128, 128);
  r.promotionInterval = 96; // not dividing the K block
  EXPECT_FALSE(rcp::checkMatmulRecipe(r));
  r.promotionInterval = 128;
  r.out = rcp::DType::F16;
  rcp::Status s = rcp::checkMatmulRecipe(r);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("expected out to be bf16 or f32, found f16"),
            std::string::npos)
      << s.message();
  r.out = rcp::DType::BF16;
  r.a.format = rcp::DType::BF16;
  EXPECT_FALSE(rcp::checkMatmulRecipe(r));
  r.a.format = rcp::DType::E4M3FN;
  r.a.mode = rcp::ScalingMode::Delayed; // needs per-tensor granularity
  EXPECT_FALSE(rcp::checkMatmulRecipe(r));
}
