//===- TileOverrideTest.cpp - Tile keys over a chosen tile ----------------===//

#include "codegen/TileOverride.h"

#include "codegen/Sm90Gemm.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {
KernelSpec narrowOverlapped() {
  KernelSpec s;
  s.n = 7168;
  s.k = 2048;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  s.tile.blockN = 64;
  s.tile.overlap = PromotionOverlap::AlternateK;
  s.tile.stages = 3;
  return s;
}
} // namespace

TEST(TileOverride, KeysOverTheTileTheRestRederived) {
  const KernelSpec s = narrowOverlapped();
  auto wide = overrideTile(s, R"({"block_n": 256})", "--tile");
  ASSERT_TRUE(wide) << wide.message();
  EXPECT_EQ(wide->blockN, 256);
  // 256 columns cannot overlap promotion: dropped, as it was not asked for.
  EXPECT_EQ(wide->overlap, PromotionOverlap::None);
  KernelSpec w = s;
  w.tile = *wide;
  EXPECT_EQ(wide->stages, std::min(sm90MaxStages(w), 8));
  auto kept = overrideTile(s, R"({"stages": 2, "overlap": "k"})", "--tile");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->stages, 2);
  EXPECT_EQ(kept->overlap, PromotionOverlap::AlternateK);
}

TEST(TileOverride, RefusesWhatIsNotTileKeys) {
  const KernelSpec s = narrowOverlapped();
  EXPECT_EQ(overrideTile(s, "[1]", "--tile").message(),
            "expected a JSON object for --tile, found '[1]'");
  EXPECT_NE(overrideTile(s, R"({"bogus": 1})", "--tile")
                .message()
                .find("unknown tile key 'bogus' in --tile"),
            std::string::npos);
  EXPECT_FALSE(overrideTile(s, R"({"block_n": 0})", "--tile"));
}
