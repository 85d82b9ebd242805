//===- Sm90CompileTest.cpp - Every sm_90a config compiles with NVRTC ------===//
//
// CI has no GPU, so this is where the generated Hopper kernels are proven to
// compile: a matrix over recipes, tiles, promotion intervals, outputs and
// split-K, each compiled to a cubin with no register spills or local memory,
// within the 0.5 s cold-compile budget.
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm90Gemm.h"
#include "codegen/kernels/sm90_params.h"
#include "runtime/Nvrtc.h"
#include "test/runtime/Sm90TestVariants.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

using namespace fp8;
using namespace fp8::test;

namespace {
/// The variant's B block scales start at a run-time column of a
/// block_n-wide tile (neither divides the other).
bool bBlocksAtRuntimeColumn(const Variant &v, int blockN) {
  return v.b.rows > 1 && v.b.cols != Granularity::kWhole &&
         v.b.rows % blockN != 0 && blockN % v.b.rows != 0;
}

class Sm90Compile
    : public ::testing::TestWithParam<std::tuple<int, int, int, int, int>> {};

// The 4th parameter: split_k when positive, a split tail (tail_split) of
// that many slices when negative.
TEST_P(Sm90Compile, CompilesWithoutSpills) {
  auto [variant, blockM, blockN, split, cluster] = GetParam();
  const Variant &v = kVariants[variant];
  KernelSpec s = variantSpec(v, 7168 + 8, 2048, blockM); // ragged N
  s.tile.blockN = blockN;
  const int splitK = split > 0 ? split : 1;
  s.tile.splitK = splitK;
  s.tile.tailSplit = split < 0 ? -split : 1;
  s.tile.clusterM = cluster == 1 ? 2 : 1; // 0: none, 1: 2x1, 2: 1x2
  s.tile.clusterN = cluster == 2 ? 2 : 1;
  s.tile.stages = sm90MaxStages(s);
  Status legal = checkSm90Spec(s);
  if (!legal.isOk()) {
    // Only the register limits (and block_n 112 with a 2x1 cluster, whose
    // half tile is not a whole swizzle atom) may rule a combination out.
    // So do B block scales starting at a run-time column inside a tile
    // with UE8M0 scales or over 192 columns.
    const bool runtimeBlocks = bBlocksAtRuntimeColumn(v, blockN);
    // Three consumer warpgroups (block_m 192): block_n dividing 128, no
    // split-K, no per-column epilogue scales.
    const bool perColumnEpilogue =
        v.b.rows != Granularity::kWhole && v.b.cols == Granularity::kWhole;
    if (blockM == 192) {
      EXPECT_TRUE(128 % blockN != 0 || splitK > 1 || perColumnEpilogue)
          << legal.message();
      EXPECT_NE(legal.message().find("block_m 192"), std::string::npos);
      return;
    }
    EXPECT_TRUE(
        blockN > (splitK > 1 ? 144 : 160) || splitK > 1 ||
        (split < 0 && blockN > 192) || (cluster == 1 && blockN % 16 != 0) ||
        (runtimeBlocks && (v.b.scale == ScaleFormat::UE8M0 || blockN > 192)))
        << legal.message();
    EXPECT_NE(legal.message().find("block_n"), std::string::npos);
    return;
  }
  auto g = emitSm90Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  auto c = compileWithNvrtc(*g);
  ASSERT_TRUE(c.isOk()) << c.message();
  EXPECT_GT(c->cubin.size(), 1000u);
  if (std::string(v.name) == "wgrad_1x128" && cluster != 0) {
    // Per-column B scales plus cluster bookkeeping: ptxas spills a few words
    // at some widths (112: 44 bytes). Bounded, not zero.
    EXPECT_LE(c->spillBytes, 128) << v.name << "\n" << c->log;
  } else {
    EXPECT_EQ(c->spillBytes, 0) << v.name << "\n" << c->log;
    EXPECT_EQ(c->stackBytes, 0) << v.name << "\n" << c->log;
  }
  EXPECT_GT(c->registers, 0);
  // CPU time, not wall time: the bound holds on a busy CI machine too.
  EXPECT_LT(c->compileCpuSeconds, 2.0)
      << "(wall " << c->compileSeconds
      << " s; budget 0.5 s on the GPU machine)";
  if (split < 0)
    EXPECT_NE(g->source.find("kTailSplit = " + std::to_string(-split)),
              std::string::npos);
  // The variant whose consumers load the K scales (scale tensors whose
  // layout TMA cannot take), here without clusters: compiles as cleanly.
  const int canTma = sm90ScaleTmaOperands(s);
  if (canTma == 0 || cluster != 0)
    return;
  EXPECT_NE(g->source.find("kScaleTma = " + std::to_string(canTma)),
            std::string::npos);
  auto gl = emitSm90Gemm(s, 0);
  ASSERT_TRUE(gl.isOk()) << gl.message();
  EXPECT_EQ(gl->name, g->name + (canTma == 3   ? "_ldab"
                                 : canTma == 1 ? "_lda"
                                               : "_ldb"));
  EXPECT_NE(gl->source.find("kScaleTma = 0;"), std::string::npos);
  EXPECT_EQ(gl->launch.tma.size() + (canTma == 3 ? 2 : 1),
            g->launch.tma.size());
  auto cl = compileWithNvrtc(*gl);
  ASSERT_TRUE(cl.isOk()) << cl.message();
  if (std::string(v.name) != "wgrad_1x128")
    EXPECT_EQ(cl->spillBytes, 0) << v.name << " (scales loaded)\n" << cl->log;
}

// Overlapped promotion (two alternating tensor-core accumulators): every
// legal combination compiles without spills, and ptxas keeps the wgmma
// pipeline (a wgmma whose completion ptxas cannot prove at a use of its
// registers makes it serialise them all: correct, and slow).
class Sm90Overlap
    : public ::testing::TestWithParam<std::tuple<int, int, int, int, int>> {};

TEST_P(Sm90Overlap, CompilesWithTheWgmmaPipeline) {
  auto [variant, overlap, blockM, blockN, more] = GetParam();
  const Variant &v = kVariants[variant];
  KernelSpec s = variantSpec(v, 7168 + 8, 2048 + 16, blockM); // ragged N, K
  s.tile.overlap = overlap == 0 ? PromotionOverlap::AlternateK
                                : PromotionOverlap::AlternateN;
  s.tile.blockN = blockN;
  s.tile.splitK = more == 1 ? 4 : 1; // 0: plain, 1: split-K, 2: 2x1 cluster
  s.tile.clusterM = more == 2 ? 2 : 1;
  s.tile.stages = sm90MaxStages(s);
  Status legal = checkSm90Spec(s);
  if (!legal.isOk()) {
    // Only the interval (exactly one k-block) and the register limits.
    const bool interval = v.promotion != 128;
    // (Per-column B scales narrow the limits; a 2x1 cluster multicasts half
    // tiles in 8-row atoms.)
    const bool perColumnB = v.b.rows == 1;
    const int maxN =
        overlap == 1 ? (perColumnB ? 176 : 192) : (perColumnB ? 112 : 128);
    const bool runtimeBlocks = bBlocksAtRuntimeColumn(v, blockN);
    const bool width = blockN > maxN || (overlap == 1 && blockN % 16) ||
                       (more == 2 && blockN % 16) ||
                       (runtimeBlocks && v.b.scale == ScaleFormat::UE8M0);
    EXPECT_NE(legal.message().find(interval ? "promotion interval" : "block_n"),
              std::string::npos)
        << legal.message();
    EXPECT_TRUE(interval || width)
        << "a legal combination was refused: " << legal.message();
    return;
  }
  EXPECT_EQ(v.promotion, 128);
  auto g = emitSm90Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_NE(g->source.find(overlap == 0 ? "kOverlap = 1" : "kOverlap = 2"),
            std::string::npos);
  auto c = compileWithNvrtc(*g);
  ASSERT_TRUE(c.isOk()) << c.message();
  EXPECT_FALSE(c->wgmmaSerialized) << v.name << "\n" << c->log;
  if (std::string(v.name) == "wgrad_1x128" && more == 2) {
    EXPECT_LE(c->spillBytes, 128) << v.name << "\n" << c->log;
  } else if (v.accumulate && overlap == 1 && blockN == 192 && more == 0) {
    // N halves over 192 columns with accumulate-into-C: with the scales'
    // path fixed at compile time (Cfg::kScaleTma) ptxas keeps two schedule
    // scalars (M groups, units) in local memory: stored once, reloaded once
    // per tile, outside the k-loop (SASS read, NVRTC 13.0).
    EXPECT_LE(c->spillBytes, 32) << v.name << "\n" << c->log;
  } else {
    EXPECT_EQ(c->spillBytes, 0) << v.name << "\n" << c->log;
    EXPECT_EQ(c->stackBytes, 0) << v.name << "\n" << c->log;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, Sm90Overlap,
    ::testing::Combine(::testing::Values(0, 3, 4, 6, 7, 8),
                       ::testing::Values(0, 1), ::testing::Values(64, 128),
                       ::testing::Values(64, 120, 128, 160, 192, 208),
                       ::testing::Values(0, 1, 2)),
    [](const auto &info) {
      return std::string(kVariants[std::get<0>(info.param)].name) +
             (std::get<1>(info.param) == 0 ? "_ovk" : "_ovn") + "_m" +
             std::to_string(std::get<2>(info.param)) + "_n" +
             std::to_string(std::get<3>(info.param)) +
             (std::get<4>(info.param) == 1   ? "_sk4"
              : std::get<4>(info.param) == 2 ? "_c2x1"
                                             : "");
    });

TEST(Sm90Emit, NvrtcReportsSerialisedWgmmas) {
  CompiledKernel k;
  parsePtxasInfo("ptxas info    : (C7514) Potential Performance Loss: "
                 "wgmma.mma_async instructions are serialized due to non "
                 "wgmma instructions reading accumulator registers",
                 k);
  EXPECT_TRUE(k.wgmmaSerialized);
  parsePtxasInfo("ptxas info    : Used 168 registers, used 16 barriers", k);
  EXPECT_FALSE(k.wgmmaSerialized);
}

// A kernel of several entry points (the row-sum quantize has three): its
// registers are its largest entry's, its spills every entry's.
TEST(Sm90Emit, PtxasInfoCoversEveryEntryPoint) {
  CompiledKernel k;
  parsePtxasInfo(
      "ptxas info    : Compiling entry function 'a' for 'sm_90a'\n"
      "ptxas info    : Function properties for a\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 47 registers, used 1 barriers\n"
      "ptxas info    : Compiling entry function 'b' for 'sm_90a'\n"
      "ptxas info    : Function properties for b\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 96 registers, used 1 barriers\n"
      "ptxas info    : Compiling entry function 'c' for 'sm_90a'\n"
      "ptxas info    : Function properties for c\n"
      "    8 bytes stack frame, 2 bytes spill stores, 2 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 1 barriers\n",
      k);
  EXPECT_EQ(k.registers, 96);
  EXPECT_EQ(k.stackBytes, 16);
  EXPECT_EQ(k.spillBytes, 16);
  parsePtxasInfo("ptxas info    : Used 40 registers, used 1 barriers", k);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.spillBytes, -1); // not reported
}

std::string compileCaseName(
    const ::testing::TestParamInfo<std::tuple<int, int, int, int, int>> &info) {
  const int split = std::get<3>(info.param);
  return std::string(kVariants[std::get<0>(info.param)].name) + "_m" +
         std::to_string(std::get<1>(info.param)) + "_n" +
         std::to_string(std::get<2>(info.param)) +
         (split > 0 ? "_sk" + std::to_string(split)
                    : "_ts" + std::to_string(-split)) +
         (std::get<4>(info.param) == 1   ? "_c2x1"
          : std::get<4>(info.param) == 2 ? "_c1x2"
                                         : "");
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, Sm90Compile,
    ::testing::Combine(::testing::Range(0, int(std::size(kVariants))),
                       ::testing::Values(64, 128, 192),
                       ::testing::Values(64, 112, 128, 160, 192, 224, 256),
                       ::testing::Values(1, 4), ::testing::Values(0, 1, 2)),
    compileCaseName);

// The split tail (reduction code in an unsplit kernel's loop) at the widths
// the heuristic picks, with and without a cluster.
INSTANTIATE_TEST_SUITE_P(
    TailSplit, Sm90Compile,
    ::testing::Combine(::testing::Range(0, int(std::size(kVariants))),
                       ::testing::Values(64, 128, 192),
                       ::testing::Values(64, 128, 192, 256),
                       ::testing::Values(-4), ::testing::Values(0, 1)),
    compileCaseName);

TEST(Sm90Emit, SourceHasTheExpectedInstructions) {
  KernelSpec s;
  s.n = 4096;
  s.k = 7168;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  s.b.format = DType::E5M2;
  s.tile.blockN = 144;
  auto g = emitSm90Gemm(s);
  ASSERT_TRUE(g.isOk()) << g.message();
  EXPECT_NE(
      g->source.find("wgmma.mma_async.sync.aligned.m64n144k32.f32.e4m3.e5m2"),
      std::string::npos);
  EXPECT_NE(g->source.find("kPromoSteps = 4"), std::string::npos);
  EXPECT_NE(
      g->source.find("extern \"C\" __global__ void __launch_bounds__(384, 1)"),
      std::string::npos);
  EXPECT_EQ(g->launch.threads, 384);
  // A, B, D, and the K scales of A (128 rows) and B (a 4-float box per B
  // block a 144-column tile can touch: 2).
  ASSERT_EQ(g->launch.tma.size(), 5u);
  EXPECT_EQ(g->launch.tma[3].operand, TmaPlan::Operand::ScaleA);
  EXPECT_EQ(g->launch.tma[3].boxInner, 128);
  EXPECT_EQ(g->launch.tma[4].operand, TmaPlan::Operand::ScaleB);
  EXPECT_EQ(g->launch.tma[4].boxInner, 4);
  EXPECT_EQ(g->launch.tma[4].boxOuter, 2);
  EXPECT_NE(g->source.find("KScaleShape<fp8k::Cfg>::kNb == 2"),
            std::string::npos);
  EXPECT_TRUE(g->launch.tmaStore);
}

// FP8_KERNEL_TRACE=1 compiles clock stamps into the kernel (both promotion
// schedules and the producer) without disturbing the wgmma pipeline; without
// it the kernel has no clock reads at all.
TEST(Sm90Emit, TracedKernelsStampTheClockAndKeepTheWgmmaPipeline) {
  for (PromotionOverlap ov :
       {PromotionOverlap::None, PromotionOverlap::AlternateK}) {
    KernelSpec s = variantSpec(kVariants[0], 4096, 7168, 128);
    s.tile.blockN = 128;
    s.tile.overlap = ov;
    s.tile.stages = sm90MaxStages(s);
    ASSERT_EQ(setenv("FP8_KERNEL_TRACE", "1", 1), 0);
    auto traced = emitSm90Gemm(s);
    ASSERT_EQ(unsetenv("FP8_KERNEL_TRACE"), 0);
    auto plain = emitSm90Gemm(s);
    ASSERT_TRUE(traced.isOk()) << traced.message();
    ASSERT_TRUE(plain.isOk()) << plain.message();
    EXPECT_NE(traced->source.find("#define FP8_KERNEL_TRACE 1"),
              std::string::npos);
    EXPECT_EQ(plain->source.find("FP8_KERNEL_TRACE"), std::string::npos);
    auto tp = compileToPtx(*traced);
    auto pp = compileToPtx(*plain);
    ASSERT_TRUE(tp.isOk()) << tp.message();
    ASSERT_TRUE(pp.isOk()) << pp.message();
    // Two points in the producer, five in the consumers.
    size_t clocks = 0;
    for (size_t at = tp->find("%clock"); at != std::string::npos;
         at = tp->find("%clock", at + 1))
      ++clocks;
    EXPECT_GE(clocks, 7u);
    EXPECT_EQ(pp->find("%clock"), std::string::npos);
    auto c = compileWithNvrtc(*traced);
    ASSERT_TRUE(c.isOk()) << c.message();
    EXPECT_FALSE(c->wgmmaSerialized) << c->log;
    EXPECT_EQ(c->spillBytes, 0) << c->log;
  }
}

// A plan launches its GEMMs with programmatic dependent launch
// (GemmOptions::afterPriorKernel): the kernel may be resident while the
// stream's kernel before it still writes the GEMM's operands, so its one
// griddepcontrol.wait must come before its first access to global memory
// (a load, store or atomic outside shared, local, parameter and constant
// space, or a TMA copy). Dense with a TMA store, with C read back (f32,
// accumulating), split K (its counters), and grouped in a 1x2 cluster (its
// group offsets). It lets the next kernel start only as its CTAs exit.
TEST(Sm90Emit, WaitsForThePriorGridBeforeGlobalMemory) {
  static const std::regex global(
      R"(\b(ld|st|atom|red)\.(?!(param|shared|local|const)\b)|\bcp\.(reduce\.)?async\.bulk\b)");
  KernelSpec dense = variantSpec(kVariants[0], 4096, 7168, 128);
  dense.tile.blockN = 128;
  KernelSpec acc = variantSpec(kVariants[2], 4096, 2048, 128);
  acc.accumulate = true;
  acc.tile.blockN = 128;
  KernelSpec split = variantSpec(kVariants[0], 2048, 7168, 64);
  split.tile.blockN = 128;
  split.tile.splitK = 4;
  KernelSpec grouped = variantSpec(kVariants[0], 4096, 2048, 128);
  grouped.kind = GemmKind::GroupedContiguous;
  grouped.groups = 8;
  grouped.tile.blockN = 128;
  grouped.tile.clusterN = 2;
  for (KernelSpec *s : {&dense, &acc, &split, &grouped}) {
    s->tile.stages = sm90MaxStages(*s);
    auto g = emitSm90Gemm(*s);
    ASSERT_TRUE(g.isOk()) << g.message();
    auto ptx = compileToPtx(*g);
    ASSERT_TRUE(ptx.isOk()) << g->name << ": " << ptx.message();
    size_t waits = 0;
    for (size_t at = ptx->find("griddepcontrol.wait;"); at != std::string::npos;
         at = ptx->find("griddepcontrol.wait;", at + 1))
      ++waits;
    ASSERT_EQ(waits, 1u) << g->name;
    // (no early trigger: fp8k::wait_prior_grid says why)
    EXPECT_EQ(ptx->find("griddepcontrol.launch_dependents;"), std::string::npos)
        << g->name;
    std::smatch first;
    ASSERT_TRUE(std::regex_search(*ptx, first, global)) << g->name;
    EXPECT_LT(ptx->find("griddepcontrol.wait;"), size_t(first.position(0)))
        << g->name << ": global memory accessed before the wait ('"
        << ptx->substr(size_t(first.position(0)), 40) << "')";
  }
}

// D's amax from the epilogue (KernelSpec::amaxOut) on each way D leaves
// the tile: the TMA store with stmatrix (192x128, three warpgroups), C by
// TMA (accumulating), f32, predicated stores (N * 2 bytes not a multiple of
// 16), split K and a split tail (the reducing slice's epilogue), per-tensor
// scales. Each compiles without spills, in no more registers than the same
// kernel without the amax, and joins the tile's values with one warp
// reduction and a reduce to global memory that returns nothing.
TEST(Sm90Emit, TheAmaxOutputCompilesOnEveryStorePath) {
  auto spec = [](int variant, int64_t n, int blockM, int blockN, int splitK,
                 int tailSplit) {
    KernelSpec s = variantSpec(kVariants[variant], n, 2048, blockM);
    s.tile.blockN = blockN;
    s.tile.splitK = splitK;
    s.tile.tailSplit = tailSplit;
    return s;
  };
  KernelSpec acc = spec(0, 4096, 128, 128, 1, 1);
  acc.accumulate = true;
  for (KernelSpec s :
       {spec(0, 7168, 192, 128, 1, 1), acc, spec(2, 4096, 128, 128, 1, 1),
        spec(0, 4100, 128, 128, 1, 1), spec(0, 4096, 64, 128, 4, 1),
        spec(0, 4096, 128, 128, 1, 2), spec(4, 4096, 128, 144, 1, 1)}) {
    s.tile.stages = sm90MaxStages(s);
    ASSERT_TRUE(checkSm90Spec(s).isOk()) << checkSm90Spec(s).message();
    auto plain = emitSm90Gemm(s);
    s.amaxOut = true;
    ASSERT_TRUE(checkSm90Spec(s).isOk()) << checkSm90Spec(s).message();
    auto g = emitSm90Gemm(s);
    ASSERT_TRUE(plain.isOk() && g.isOk()) << g.message();
    EXPECT_NE(g->source.find("kAmaxOut = true;"), std::string::npos);
    EXPECT_NE(plain->source.find("kAmaxOut = false;"), std::string::npos);
    auto c = compileWithNvrtc(*g);
    auto cp = compileWithNvrtc(*plain);
    ASSERT_TRUE(c.isOk() && cp.isOk()) << g->name << ": " << c.message();
    EXPECT_EQ(c->spillBytes, 0) << g->name << "\n" << c->log;
    EXPECT_EQ(c->stackBytes, 0) << g->name << "\n" << c->log;
    EXPECT_LE(c->registers, cp->registers) << g->name;
    auto ptx = compileToPtx(*g);
    ASSERT_TRUE(ptx.isOk()) << ptx.message();
    EXPECT_NE(ptx->find("redux.sync.max.u32"), std::string::npos) << g->name;
    EXPECT_NE(ptx->find("red.relaxed.gpu.global.max.u32"), std::string::npos)
        << g->name;
    auto plainPtx = compileToPtx(*plain);
    ASSERT_TRUE(plainPtx.isOk()) << plainPtx.message();
    EXPECT_EQ(plainPtx->find("redux.sync"), std::string::npos) << plain->name;
    EXPECT_EQ(plainPtx->find("global.max.u32"), std::string::npos)
        << plain->name;
  }
}

TEST(Sm90Emit, RejectsWhatHopperCannotRun) {
  {
    KernelSpec o;
    o.n = 4096;
    o.k = 7168;
    o.promotionInterval = 256; // per-tensor scales: any interval is legal
    o.tile.overlap = PromotionOverlap::AlternateN;
    Status st = checkSm90Spec(o);
    EXPECT_NE(st.message().find("promotion interval of 128 with overlap 'n'"),
              std::string::npos)
        << st.message();
    o.promotionInterval = 128;
    o.tile.blockN = 152; // not two 8-aligned halves
    st = checkSm90Spec(o);
    EXPECT_NE(st.message().find("multiple of 16"), std::string::npos)
        << st.message();
    o.tile.overlap = PromotionOverlap::AlternateK;
    o.tile.blockN = 192; // three 96-float accumulators do not fit
    st = checkSm90Spec(o);
    EXPECT_NE(st.message().find("[8, 128] with overlap 'k'"), std::string::npos)
        << st.message();
  }
  KernelSpec s;
  s.n = 4096;
  s.k = 7168;
  s.a.granularity = Granularity::mx();
  s.b.granularity = Granularity::mx();
  s.promotionInterval = 32;
  Status st = checkSm90Spec(s);
  EXPECT_NE(st.message().find("sm_100a"), std::string::npos) << st.message();
  s = KernelSpec();
  s.n = 64;
  s.k = 128;
  s.a.layout = Layout::MNMajor;
  st = checkSm90Spec(s);
  EXPECT_NE(st.message().find("K-major"), std::string::npos) << st.message();
  s = KernelSpec();
  s.n = 64;
  s.k = 128;
  s.a.granularity = Granularity::block(1, 128);
  s.promotionInterval = std::nullopt;
  st = checkSm90Spec(s);
  // The recipe's rule (core/RecipeRules.h), which the generator applies.
  EXPECT_NE(st.message().find("expected a promotion_interval: the scales of A "
                              "vary along K"),
            std::string::npos)
      << st.message();
  s = KernelSpec();
  s.n = 64;
  s.k = 1000;
  st = checkSm90Spec(s);
  EXPECT_NE(st.message().find("multiple of 16"), std::string::npos)
      << st.message();
  s = KernelSpec();
  s.n = 64;
  s.k = 128;
  s.tile.stages = 40;
  st = checkSm90Spec(s);
  EXPECT_NE(st.message().find("shared memory"), std::string::npos)
      << st.message();
}
} // namespace
