//===- Sm90EpilogueCompileTest.cpp - Quantizing epilogues compile ---------===//
//
// The sm_90a GEMMs whose epilogue quantizes their result (KernelSpec::
// epilogue): the heuristic gives each a tile that holds whole scale blocks,
// and each tile compiles with NVRTC without spills within the compile
// budget. The epilogue's code itself runs in EmulatedEpilogueTest.
//
//===----------------------------------------------------------------------===//

#include "codegen/Gemm.h"
#include "codegen/Sm90Gemm.h"
#include "runtime/Nvrtc.h"
#include "test/runtime/EwTestPrograms.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

struct Case {
  const char *name;
  int64_t n, k;
  Granularity b;
  DType out;
  EwProgram program;
  int64_t pairBlock;
  Granularity q;
  int blockM, blockN, clusterM, clusterN;
};

const Case kCases[] = {
    // mlp's gate and up (Llama-2 7B), DeepSeek recipe: 128x256 tiles.
    {"swiglu_pairs", 22016, 4096, Granularity::block(128, 128), DType::BF16,
     swigluProgram(), 128, Granularity::block(1, 128), 128, 256, 1, 1},
    {"swiglu_pairs_c2x1", 22016, 4096, Granularity::block(128, 128),
     DType::BF16, swigluProgram(), 128, Granularity::block(1, 128), 128, 256, 2,
     1},
    {"swiglu_pairs_c1x2", 22016, 4096, Granularity::block(128, 128),
     DType::BF16, swigluProgram(), 128, Granularity::block(1, 128), 128, 256, 1,
     2},
    // Decode: one consumer warpgroup.
    {"swiglu_pairs_m64", 28672, 4096, Granularity::block(128, 128), DType::BF16,
     swigluProgram(), 128, Granularity::block(1, 128), 64, 256, 1, 1},
    // Narrower pairs of per-channel weights.
    {"swiglu_pairs64_per_channel", 22016, 4096, Granularity::perRow(),
     DType::BF16, swigluProgram(), 64, Granularity::block(1, 64), 128, 128, 1,
     1},
    // One input: three consumer warpgroups of 152 registers.
    {"gelu_192x128", 11008, 4096, Granularity::block(128, 128), DType::BF16,
     test::geluErf(DType::BF16), 0, Granularity::block(1, 128), 192, 128, 1, 1},
    // f32 results, UE8M0 scales of 32 columns.
    {"identity_f32_ue8m0", 4096, 2048, Granularity::block(128, 128), DType::F32,
     EwProgram::identity(DType::F32), 0,
     Granularity::block(1, 32, ScaleFormat::UE8M0), 128, 128, 1, 1},
    // Whole rows in one tile.
    {"identity_per_row", 128, 2048, Granularity::block(128, 128), DType::BF16,
     EwProgram::identity(DType::BF16), 0, Granularity::perRow(), 128, 128, 1,
     1},
};

KernelSpec specOf(const Case &c) {
  KernelSpec s;
  s.n = c.n;
  s.k = c.k;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = c.b;
  s.out = c.out;
  GemmEpilogue e;
  e.program = c.program;
  e.pairBlock = c.pairBlock;
  e.granularity = c.q;
  s.epilogue = e;
  s.tile.blockM = c.blockM;
  s.tile.mathWarpgroups = c.blockM / 64;
  s.tile.blockN = c.blockN;
  s.tile.clusterM = c.clusterM;
  s.tile.clusterN = c.clusterN;
  s.tile.stages = sm90MaxStages(s);
  return s;
}

class Sm90EpilogueCompile : public ::testing::TestWithParam<size_t> {};

TEST_P(Sm90EpilogueCompile, CompilesWithoutSpills) {
  const Case &c = kCases[GetParam()];
  const KernelSpec s = specOf(c);
  ASSERT_TRUE(checkSm90Spec(s).isOk()) << checkSm90Spec(s).message();
  auto g = emitSm90Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  // The epilogue stores the codes itself: no TMA store, no staging.
  EXPECT_FALSE(g->launch.tmaStore);
  EXPECT_NE(g->source.find("kEpilogue = true"), std::string::npos);
  EXPECT_NE(g->source.find("struct EpiProg"), std::string::npos);
  auto k = compileWithNvrtc(*g);
  ASSERT_TRUE(k.isOk()) << k.message();
  EXPECT_EQ(k->spillBytes, 0) << c.name << "\n" << k->log;
  EXPECT_EQ(k->stackBytes, 0) << c.name << "\n" << k->log;
  // CPU time, not wall time: the bound holds on a busy CI machine too.
  EXPECT_LT(k->compileCpuSeconds, 2.0)
      << "(wall " << k->compileSeconds
      << " s; budget 0.5 s on the GPU machine)";
}

INSTANTIATE_TEST_SUITE_P(Epilogues, Sm90EpilogueCompile,
                         ::testing::Range(size_t(0), std::size(kCases)),
                         [](const auto &info) {
                           return std::string(kCases[info.param].name);
                         });

/// The heuristic's tile for a fused GEMM is one the generator accepts:
/// 256 columns for 128-column block pairs.
TEST(Sm90EpilogueHeuristic, ChoosesATileThatHoldsTheEpilogue) {
  for (const Case &c : kCases) {
    KernelSpec s = specOf(c);
    for (int64_t m : {int64_t(1), int64_t(128), int64_t(4096)}) {
      s.m = m;
      s.tile = selectConfig(s, 132).tile;
      EXPECT_TRUE(checkGemmSpec(s).isOk())
          << c.name << " at M = " << m << ": " << checkGemmSpec(s).message();
      if (c.pairBlock == 128)
        EXPECT_EQ(s.tile.blockN, 256) << c.name;
    }
  }
}

} // namespace
