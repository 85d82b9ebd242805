//===- Sm90GroupedCompileTest.cpp - Grouped sm_90a kernels compile --------===//
//
// The grouped GEMM kernels (contiguous and masked) of the MoE recipes, at
// the tiles the heuristic and the bench choose, compile with NVRTC without
// spills, with and without TMA for the K scales; the rules refuse what a
// grouped kernel cannot run.
//
//===----------------------------------------------------------------------===//

#include "codegen/Gemm.h"
#include "codegen/Sm90Gemm.h"
#include "runtime/Nvrtc.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

struct GroupedRecipe {
  const char *name;
  Granularity a, b;
  int64_t promotion;
  DType out = DType::BF16;
};

const GroupedRecipe kRecipes[] = {
    {"deepseek", Granularity::block(1, 128), Granularity::block(128, 128), 128},
    {"deepseek_p32_f32", Granularity::block(1, 128),
     Granularity::block(128, 128), 32, DType::F32},
    {"wgrad_1x128", Granularity::block(1, 128), Granularity::block(1, 128),
     128},
    {"per_tensor_p0", Granularity::perTensor(), Granularity::perTensor(), 0},
    {"per_row", Granularity::perRow(), Granularity::perRow(), 128},
    {"ue8m0", Granularity::block(1, 128, ScaleFormat::UE8M0),
     Granularity::block(128, 128, ScaleFormat::UE8M0), 128},
};

KernelSpec groupedSpec(const GroupedRecipe &r, GemmKind kind, int blockM,
                       int blockN, int cluster) {
  KernelSpec s;
  s.kind = kind;
  s.groups = 8;
  s.n = 4096 + 8; // ragged N
  s.k = 2048;
  s.a.granularity = r.a;
  s.b.granularity = r.b;
  s.promotionInterval = promotionFromInt(r.promotion);
  s.out = r.out;
  s.tile.blockM = blockM;
  s.tile.mathWarpgroups = blockM / 64;
  s.tile.blockN = blockN;
  s.tile.clusterM = cluster == 1 ? 2 : 1;
  s.tile.clusterN = cluster == 2 ? 2 : 1;
  s.tile.stages = sm90MaxStages(s);
  return s;
}

class Sm90GroupedCompile
    : public ::testing::TestWithParam<std::tuple<int, int, int, int, int>> {};

TEST_P(Sm90GroupedCompile, CompilesWithoutSpills) {
  auto [recipe, form, blockM, blockN, cluster] = GetParam();
  const GroupedRecipe &r = kRecipes[recipe];
  const GemmKind kinds[] = {GemmKind::GroupedContiguous,
                            GemmKind::GroupedMasked, GemmKind::GroupedK};
  KernelSpec s = groupedSpec(r, kinds[form], blockM, blockN, cluster);
  if (form == 2) { // weight gradients: f32, accumulated in place
    s.out = DType::F32;
    s.accumulate = true;
    s.tile.stages = sm90MaxStages(s);
  }
  Status legal = checkSm90Spec(s);
  if (!legal.isOk()) {
    // Only the dense rules' register limits rule a combination out here.
    EXPECT_TRUE(blockM == 192 || blockN > 160) << legal.message();
    return;
  }
  for (int scaleTma : {sm90ScaleTmaOperands(s), 0}) {
    auto g = emitSm90Gemm(s, scaleTma);
    ASSERT_TRUE(g.isOk()) << g.message();
    const char *names[] = {"kGrouped = kGroupedContiguous",
                           "kGrouped = kGroupedMasked", "kGrouped = kGroupedK"};
    EXPECT_NE(g->source.find(names[form]), std::string::npos);
    auto c = compileWithNvrtc(*g);
    ASSERT_TRUE(c.isOk()) << c.message();
    if (std::string(r.name) == "wgrad_1x128" && cluster != 0)
      EXPECT_LE(c->spillBytes, 128) << c->log; // as the dense kernel
    else
      EXPECT_EQ(c->spillBytes, 0) << r.name << "\n" << c->log;
    EXPECT_FALSE(c->wgmmaSerialized) << c->log;
    EXPECT_LT(c->compileCpuSeconds, 2.0);
    if (sm90ScaleTmaOperands(s) == 0)
      break;
  }
}

std::string caseName(
    const ::testing::TestParamInfo<std::tuple<int, int, int, int, int>> &info) {
  auto [recipe, form, blockM, blockN, cluster] = info.param;
  const char *forms[] = {"_contig", "_masked", "_alongk"};
  return std::string(kRecipes[recipe].name) + forms[form] + "_m" +
         std::to_string(blockM) + "_n" + std::to_string(blockN) +
         (cluster == 1   ? "_c2x1"
          : cluster == 2 ? "_c1x2"
                         : "");
}

INSTANTIATE_TEST_SUITE_P(
    Recipes, Sm90GroupedCompile,
    ::testing::Combine(::testing::Range(0, int(std::size(kRecipes))),
                       ::testing::Values(0, 1, 2), ::testing::Values(64, 128),
                       ::testing::Values(128, 256), ::testing::Values(0)),
    caseName);

// The DeepSeek recipe's tiles in clusters and with three consumer
// warpgroups.
INSTANTIATE_TEST_SUITE_P(Tiles, Sm90GroupedCompile,
                         ::testing::Combine(::testing::Values(0),
                                            ::testing::Values(0, 1, 2),
                                            ::testing::Values(64, 128, 192),
                                            ::testing::Values(64, 128, 160),
                                            ::testing::Values(0, 1, 2)),
                         caseName);

KernelSpec deepseekGrouped() {
  return groupedSpec(kRecipes[0], GemmKind::GroupedContiguous, 128, 128, 0);
}

void expectRefused(const KernelSpec &s, const char *why) {
  Status st = checkSm90Spec(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
}

TEST(Sm90GroupedRules, RefuseWhatOneGridOverEveryGroupCannotRun) {
  KernelSpec s = deepseekGrouped();
  ASSERT_TRUE(checkSm90Spec(s).isOk()) << checkSm90Spec(s).message();
  KernelSpec split = s;
  split.tile.splitK = 2;
  expectRefused(split, "split_k 1 and tail_split 1 for a grouped GEMM");
  KernelSpec tail = s;
  tail.tile.tailSplit = 4;
  expectRefused(tail, "found split_k 1, tail_split 4");
  KernelSpec np = s;
  np.tile.persistent = false;
  expectRefused(np, "a non-persistent grid");
  KernelSpec acc = s;
  acc.accumulate = true;
  expectRefused(acc, "no accumulation into C");
  KernelSpec blocks = s;
  blocks.a.granularity = Granularity::block(128, 128);
  expectRefused(blocks, "a group starts at any row");
  // The masked form keeps each group's slab: A's scales may span rows.
  blocks.kind = GemmKind::GroupedMasked;
  EXPECT_TRUE(checkSm90Spec(blocks).isOk()) << checkSm90Spec(blocks).message();
  KernelSpec mn = s;
  mn.b.layout = Layout::MNMajor;
  expectRefused(mn, "expected K-major A and B on sm_90a");
  KernelSpec dense = s;
  dense.kind = GemmKind::Dense;
  expectRefused(dense, "expected groups 1 for a dense GEMM, found 8");
}

TEST(Sm90GroupedRules, AlongKAccumulatesAndNeedsKBlocksOf128) {
  KernelSpec s = deepseekGrouped();
  s.kind = GemmKind::GroupedK;
  s.accumulate = true;
  s.out = DType::F32;
  EXPECT_TRUE(checkSm90Spec(s).isOk()) << checkSm90Spec(s).message();
  KernelSpec wide = s;
  wide.a.granularity = Granularity::block(1, 256);
  wide.b.granularity = Granularity::block(256, 256);
  wide.promotionInterval = 256;
  expectRefused(wide, "expected K blocks of 128");
  // K is a launch value: one kernel for every token count.
  KernelSpec other = s;
  other.k = s.k + 4096;
  EXPECT_EQ(other.kernelName(), s.kernelName());
  EXPECT_NE(other.problemKey(), s.problemKey());
  auto g1 = emitSm90Gemm(s), g2 = emitSm90Gemm(other);
  ASSERT_TRUE(g1.isOk() && g2.isOk());
  EXPECT_EQ(g1->source, g2->source);
}

TEST(Sm90GroupedRules, TheSm100GeneratorSaysGroupedIsHopperOnly) {
  KernelSpec s = deepseekGrouped();
  s.arch = Arch::SM100a;
  Status st = checkGemmSpec(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("grouped GEMMs are generated for sm_90a"),
            std::string::npos)
      << st.message();
}

} // namespace
