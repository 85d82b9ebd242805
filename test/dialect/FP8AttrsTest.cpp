//===- FP8AttrsTest.cpp - Dialect <-> codegen recipe conversions ----------===//
//
// The attributes map one-to-one onto core/Recipe.h: every value goes to
// the dialect and back unchanged, and the attributes the parser builds
// convert to the codegen values they spell.
//
//===----------------------------------------------------------------------===//

#include "dialect/FP8Attrs.h"
#include "dialect/FP8Dialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

// Both namespaces are called fp8: the dialect's (mlir::fp8) and codegen's
// (::fp8), so `using namespace mlir` would make `dia::` ambiguous here.
namespace dia = mlir::fp8;
namespace rcp = ::fp8;
using mlir::IntegerType;
using mlir::MLIRContext;
using mlir::ShapedType;
using mlir::StringRef;

namespace {

class FP8Attrs : public ::testing::Test {
protected:
  FP8Attrs() { ctx.loadDialect<dia::FP8Dialect>(); }

  /// Parses a textual attribute, failing the test when it does not parse.
  template <typename AttrT> AttrT parse(StringRef text) {
    auto attr = mlir::dyn_cast_or_null<AttrT>(mlir::parseAttribute(text, &ctx));
    EXPECT_TRUE(attr) << "could not parse " << text.str();
    return attr;
  }

  MLIRContext ctx;
};

} // namespace

TEST_F(FP8Attrs, EnumsRoundTrip) {
  for (rcp::ScaleFormat f : {rcp::ScaleFormat::F32, rcp::ScaleFormat::F32Pow2,
                             rcp::ScaleFormat::UE8M0}) {
    EXPECT_EQ(dia::toRecipe(dia::fromRecipe(f)), f);
    EXPECT_EQ(dia::stringifyScaleFormat(dia::fromRecipe(f)).str(),
              rcp::toString(f));
  }
  for (rcp::ScalingMode m :
       {rcp::ScalingMode::Current, rcp::ScalingMode::Delayed}) {
    EXPECT_EQ(dia::toRecipe(dia::fromRecipe(m)), m);
    EXPECT_EQ(dia::stringifyScalingMode(dia::fromRecipe(m)).str(),
              rcp::toString(m));
  }
  for (rcp::AmaxAlgo a : {rcp::AmaxAlgo::Max, rcp::AmaxAlgo::MostRecent}) {
    EXPECT_EQ(dia::toRecipe(dia::fromRecipe(a)), a);
    EXPECT_EQ(dia::stringifyAmaxAlgo(dia::fromRecipe(a)).str(),
              rcp::toString(a));
  }
  for (rcp::Layout l : {rcp::Layout::KMajor, rcp::Layout::MNMajor}) {
    EXPECT_EQ(dia::toRecipe(dia::fromRecipe(l)), l);
    EXPECT_EQ(dia::stringifyLayout(dia::fromRecipe(l)).str(), rcp::toString(l));
  }
  // Every case ODS defines has a spelling core/Recipe.cpp reads (the
  // conversions go through the spelling).
  for (unsigned i = 0; i <= dia::getMaxEnumValForScaleFormat(); ++i)
    if (auto v = dia::symbolizeScaleFormat(i))
      EXPECT_EQ(dia::fromRecipe(dia::toRecipe(*v)), *v);
  for (unsigned i = 0; i <= dia::getMaxEnumValForScalingMode(); ++i)
    if (auto v = dia::symbolizeScalingMode(i))
      EXPECT_EQ(dia::fromRecipe(dia::toRecipe(*v)), *v);
  for (unsigned i = 0; i <= dia::getMaxEnumValForAmaxAlgo(); ++i)
    if (auto v = dia::symbolizeAmaxAlgo(i))
      EXPECT_EQ(dia::fromRecipe(dia::toRecipe(*v)), *v);
  for (unsigned i = 0; i <= dia::getMaxEnumValForLayout(); ++i)
    if (auto v = dia::symbolizeLayout(i))
      EXPECT_EQ(dia::fromRecipe(dia::toRecipe(*v)), *v);
  EXPECT_EQ(dia::toRecipe(dia::GroupMode::Contiguous),
            rcp::GemmKind::GroupedContiguous);
  EXPECT_EQ(dia::toRecipe(dia::GroupMode::Masked),
            rcp::GemmKind::GroupedMasked);
}

TEST_F(FP8Attrs, GranularityRoundTrips) {
  const rcp::Granularity all[] = {
      rcp::Granularity::perTensor(),
      rcp::Granularity::perRow(rcp::ScaleFormat::F32Pow2),
      rcp::Granularity::perColumn(rcp::ScaleFormat::UE8M0),
      rcp::Granularity::block(1, 128),
      rcp::Granularity::block(128, 128),
      rcp::Granularity::block(128, rcp::Granularity::kWhole),
      rcp::Granularity::mx(),
  };
  for (const rcp::Granularity &g : all) {
    dia::GranularityAttr attr = dia::fromRecipe(&ctx, g);
    EXPECT_EQ(dia::toRecipe(attr), g) << rcp::toString(g);
    // The printed spelling is codegen's, and parses back to the same value.
    std::string text = "#fp8.granularity<" + rcp::toString(g) + ">";
    EXPECT_EQ(parse<dia::GranularityAttr>(text), attr) << text;
  }
  EXPECT_EQ(dia::toRecipe(parse<dia::GranularityAttr>("#fp8.granularity<mx>")),
            rcp::Granularity::mx());
}

TEST_F(FP8Attrs, ScalingAndQuantRecipesRoundTrip) {
  rcp::DelayedScaling d;
  d.historyLength = 1024;
  d.updateInterval = 5;
  d.margin = 2;
  d.algo = rcp::AmaxAlgo::MostRecent;
  dia::ScalingAttr delayed =
      dia::fromRecipe(&ctx, rcp::ScalingMode::Delayed, d);
  EXPECT_EQ(delayed, parse<dia::ScalingAttr>(
                         "#fp8.scaling<delayed, history = 1024, interval = 5, "
                         "margin = 2, algo = most_recent>"));
  rcp::DelayedScaling back = dia::toDelayedScaling(delayed);
  EXPECT_EQ(back.historyLength, 1024);
  EXPECT_EQ(back.updateInterval, 5);
  EXPECT_EQ(back.margin, 2);
  EXPECT_EQ(back.algo, rcp::AmaxAlgo::MostRecent);
  // Current scaling carries the DelayedScaling defaults.
  rcp::DelayedScaling defaults = dia::toDelayedScaling(
      dia::fromRecipe(&ctx, rcp::ScalingMode::Current, d));
  EXPECT_EQ(defaults.historyLength, rcp::DelayedScaling().historyLength);

  rcp::QuantRecipe q;
  q.format = rcp::DType::E5M2;
  q.granularity = rcp::Granularity::perTensor();
  q.mode = rcp::ScalingMode::Delayed;
  q.delayed = d;
  dia::QuantRecipeAttr attr = dia::fromRecipe(&ctx, q);
  rcp::QuantRecipe q2 = dia::toRecipe(attr);
  EXPECT_EQ(q2.format, q.format);
  EXPECT_EQ(q2.granularity, q.granularity);
  EXPECT_EQ(q2.mode, q.mode);
  EXPECT_EQ(q2.delayed.historyLength, d.historyLength);
}

TEST_F(FP8Attrs, RecipeOperandsAreLogical) {
  auto recipe = parse<dia::RecipeAttr>(
      "#fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E5M2, <128x128>>, "
      "promotion_interval = 128>");
  ASSERT_TRUE(recipe);
  rcp::OperandSpec a = dia::toOperandSpec(recipe.getA());
  EXPECT_EQ(a.format, rcp::DType::E4M3FN);
  EXPECT_EQ(a.layout, rcp::Layout::KMajor);
  EXPECT_EQ(a.granularity, rcp::Granularity::block(1, 128));
  // Stored MN-major ([K, M]), A's 1x128 tiles become 128x1 blocks.
  rcp::OperandSpec at = dia::toOperandSpec(recipe.getA(), rcp::Layout::MNMajor);
  EXPECT_EQ(at.granularity, rcp::Granularity::block(128, 1));
  EXPECT_EQ(dia::toOperandSpec(recipe.getB()).format, rcp::DType::E5M2);
  EXPECT_EQ(recipe.getPromotionInterval(), std::optional<int64_t>(128));
  EXPECT_EQ(dia::toDType(recipe.getOut()), rcp::DType::BF16);
}

TEST_F(FP8Attrs, TypesAndShapes) {
  for (rcp::DType t : {rcp::DType::E4M3FN, rcp::DType::E5M2, rcp::DType::BF16,
                       rcp::DType::F16, rcp::DType::F32, rcp::DType::UE8M0})
    EXPECT_EQ(dia::toDType(dia::fromRecipe(&ctx, t)), t) << rcp::toString(t);
  EXPECT_EQ(dia::toDType(IntegerType::get(&ctx, 8)), std::nullopt);
  EXPECT_EQ(dia::toRecipeShape({ShapedType::kDynamic, 7168}),
            (rcp::Shape{rcp::kDynamic, 7168}));
}
