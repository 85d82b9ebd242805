//===- RecipeSampleCompileTest.cpp - One kernel of every recipe class -----===//
//
// codegen/RecipeSpace.h's sample (one accepted point of every recipe class,
// each target) compiles with NVRTC, with the heuristic's tile for an
// M = 129, N = 264, K = 1536 problem, without spills. The GPU tests run the
// same sm_90a points against the oracle (GemmGpuTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/Gemm.h"
#include "codegen/RecipeSpace.h"
#include "runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace fp8;

namespace {

struct Sampled {
  Arch arch;
  RecipePoint point;
};

std::vector<Sampled> samples() {
  std::vector<Sampled> out;
  for (Arch arch : {Arch::SM90a, Arch::SM100a})
    for (const RecipePoint &p : recipeSample(arch))
      out.push_back({arch, p});
  return out;
}

/// gtest's name for a parameter in its listings and failures.
[[maybe_unused]] void PrintTo(const Sampled &s, std::ostream *os) {
  *os << toString(s.arch) << " " << describe(s.point);
}

class RecipeSampleCompile : public ::testing::TestWithParam<Sampled> {};

TEST_P(RecipeSampleCompile, CompilesWithoutSpills) {
  const Sampled &s = GetParam();
  KernelSpec spec = recipeSpec(s.point, s.arch, 129, 264, 1536);
  spec.tile = selectConfig(spec, s.arch == Arch::SM90a ? 132 : 148).tile;
  auto g = emitGemm(spec);
  ASSERT_TRUE(g.isOk()) << describe(s.point) << ": " << g.message();
  auto c = compileWithNvrtc(*g);
  ASSERT_TRUE(c.isOk()) << describe(s.point) << ": " << c.message();
  EXPECT_EQ(c->spillBytes, 0) << describe(s.point) << "\n" << c->log;
}

INSTANTIATE_TEST_SUITE_P(Classes, RecipeSampleCompile,
                         ::testing::ValuesIn(samples()),
                         [](const ::testing::TestParamInfo<Sampled> &info) {
                           return std::string(info.param.arch == Arch::SM90a
                                                  ? "sm90a_"
                                                  : "sm100a_") +
                                  std::to_string(info.index);
                         });

} // namespace
