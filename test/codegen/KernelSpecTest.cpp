//===- KernelSpecTest.cpp - KernelSpec naming and JSON --------------------===//

#include "codegen/KernelSpec.h"

#include <gtest/gtest.h>

using namespace fp8;

static KernelSpec deepseekSpec() {
  KernelSpec s;
  s.n = 7168;
  s.k = 2048;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  return s;
}

TEST(KernelSpec, JSONRoundTripsEveryField) {
  KernelSpec s = deepseekSpec();
  s.arch = Arch::SM100a;
  s.kind = GemmKind::GroupedMasked;
  s.m = 4096;
  s.groups = 4;
  s.a.format = DType::E5M2;
  s.b.layout = Layout::MNMajor;
  s.b.granularity = Granularity::mx();
  s.promotionInterval = 64;
  s.out = DType::F32;
  s.accumulate = true;
  s.tile.blockN = 112;
  s.tile.stages = 6;
  s.tile.clusterM = 2;
  s.tile.raster = Raster::AlongM;
  s.tile.splitK = 3;
  s.tile.ctaGroup = 2;
  auto back = kernelSpecFromJSON(toJSON(s));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->kernelName(), s.kernelName());
}

TEST(KernelSpec, NameChangesWithCodeChangingFieldsOnly) {
  KernelSpec s = deepseekSpec();
  KernelSpec t = s;
  t.m = 4096; // M is a launch argument: the same kernel
  EXPECT_EQ(s.kernelName(), t.kernelName());
  t.promotionInterval = 64;
  EXPECT_NE(s.kernelName(), t.kernelName());
  t = s;
  t.b.granularity.scale = ScaleFormat::UE8M0;
  EXPECT_NE(s.kernelName(), t.kernelName());
  t = s;
  t.tile.splitK = 2;
  EXPECT_NE(s.kernelName(), t.kernelName());
}

TEST(KernelSpec, JSONErrorsNameTheProblem) {
  auto bad = kernelSpecFromJSON("{\"arch\": \"sm_80\"}");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("sm_80"), std::string::npos) << bad.message();
  auto missing = kernelSpecFromJSON("{\"arch\": \"sm_90a\", \"k\": 128}");
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.message().find("'n'"), std::string::npos)
      << missing.message();
  EXPECT_FALSE(kernelSpecFromJSON("{not json").isOk());
  EXPECT_FALSE(kernelSpecFromJSON("[1,2]").isOk());
}

TEST(Granularity, ParsesEveryFormAndRoundTrips) {
  for (const char *text :
       {"per_tensor", "per_row", "per_column", "1x128", "128x128", "1x32:ue8m0",
        "128x128:f32_pow2", "per_row:ue8m0", "whole x 4"}) {
    auto g = parseGranularity(text);
    if (std::string(text) == "whole x 4") {
      EXPECT_FALSE(g.isOk());
      continue;
    }
    ASSERT_TRUE(g.isOk()) << text << ": " << g.message();
    EXPECT_EQ(toString(*g), text);
  }
  auto mx = parseGranularity("mx");
  ASSERT_TRUE(mx.isOk());
  EXPECT_EQ(*mx, Granularity::mx());
  EXPECT_FALSE(parseGranularity("0x128").isOk());
  EXPECT_FALSE(parseGranularity("1x128:f16").isOk());
}

TEST(Granularity, ScaleShapeFollowsTheCeilDivRule) {
  Granularity g = Granularity::block(128, 128);
  EXPECT_EQ(g.scaleRows(129), 2);
  EXPECT_EQ(g.scaleCols(7168), 56);
  EXPECT_EQ(Granularity::perTensor().scaleRows(5), 1);
  EXPECT_EQ(Granularity::perRow().scaleRows(7), 7);
  EXPECT_EQ(Granularity::perRow().scaleCols(7), 1);
}
