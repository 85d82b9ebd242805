//===- KernelSpecTest.cpp - KernelSpec naming and JSON --------------------===//

#include "core/KernelSpec.h"

#include "codegen/Gemm.h"
#include "codegen/Sm100Gemm.h"
#include "codegen/Sm90Gemm.h"

#include <climits>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

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

/// The DeepSeek recipe's gate and up projections as one GEMM over weights
/// interleaved in 128-row blocks, SwiGLU and the 1x128 quantize of the
/// result in the epilogue.
static KernelSpec pairedSpec() {
  KernelSpec s = deepseekSpec();
  s.n = 22016;
  s.k = 4096;
  s.tile.blockN = 256;
  GemmEpilogue e;
  e.program = swigluProgram();
  e.pairBlock = 128;
  e.granularity = Granularity::block(1, 128);
  s.epilogue = e;
  return s;
}

TEST(KernelSpec, AnEpilogueRoundTripsAndNamesTheKernel) {
  const KernelSpec s = pairedSpec();
  auto back = kernelSpecFromJSON(toJSON(s));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->epilogue->outCols(s.n), 11008);
  // The epilogue changes the code: its format, blocks, pairing and program
  // are in the name (the program by a hash).
  KernelSpec plain = s;
  plain.epilogue.reset();
  EXPECT_NE(s.kernelName(), plain.kernelName());
  EXPECT_NE(s.kernelName().find("_qe4m31x128pb128_"), std::string::npos)
      << s.kernelName();
  KernelSpec other = s;
  other.epilogue->program.instrs[6].op = EwOp::Add;
  EXPECT_NE(s.kernelName(), other.kernelName());
  EXPECT_NE(s.problemKey(), other.problemKey());
  other = s;
  other.epilogue->format = DType::E5M2;
  EXPECT_NE(s.kernelName(), other.kernelName());
}

TEST(KernelSpec, EpilogueChecksNameTheProblem) {
  auto message = [](KernelSpec s) { return checkKernelSpec(s).message(); };
  KernelSpec s = pairedSpec();
  EXPECT_TRUE(checkKernelSpec(s).isOk()) << message(s);
  s.epilogue->program = EwProgram::identity(DType::BF16);
  EXPECT_EQ(message(s), "expected the epilogue's program to read 2 inputs "
                        "(the two halves of each block pair), found 1");
  s = pairedSpec();
  s.epilogue->program.inputs[1] = DType::F32;
  EXPECT_EQ(message(s), "expected the epilogue's program input 1 to have the "
                        "GEMM's result type bf16, found f32");
  s = pairedSpec();
  s.epilogue->format = DType::BF16;
  EXPECT_NE(message(s).find("expected the epilogue to quantize to an FP8 "
                            "format"),
            std::string::npos);
  s = pairedSpec();
  s.epilogue->granularity = Granularity::block(128, 128);
  EXPECT_EQ(message(s), "expected the epilogue's scale blocks to lie along the "
                        "rows (1 x C or per_row), found 128x128");
  s = pairedSpec();
  s.epilogue->pairBlock = 100;
  EXPECT_EQ(message(s), "expected the epilogue's pair block to be 0 or a "
                        "multiple of 8 whose pairs tile N (22016), found 100");
  s = pairedSpec();
  s.n = 22016 + 128; // not a whole number of block pairs
  EXPECT_NE(message(s).find("pair block"), std::string::npos);
  // Hostile JSON: a program that is not one, a pair block out of range.
  std::string json = toJSON(pairedSpec());
  const std::string from = "\"pair_block\":128";
  ASSERT_NE(json.find(from), std::string::npos) << json;
  json.replace(json.find(from), from.size(), "\"pair_block\":-8");
  EXPECT_NE(kernelSpecFromJSON(json).message().find("'pair_block'"),
            std::string::npos);
  EXPECT_FALSE(
      kernelSpecFromJSON(R"({"arch":"sm_90a","n":256,"k":256,"out":"bf16",)"
                         R"("promotion_interval":128,)"
                         R"("a":{"format":"e4m3fn","granularity":"1x128"},)"
                         R"("b":{"format":"e4m3fn","granularity":"128x128"},)"
                         R"("tile":{"block_m":128,"block_n":128,"block_k":128,)"
                         R"("stages":4},"epilogue":{"program":7,)"
                         R"("format":"e4m3fn","granularity":"1x128"}})")
          .isOk());
}

TEST(KernelSpec, TheSm90aGeneratorHoldsTheEpilogueInWholeTiles) {
  KernelSpec s = pairedSpec();
  s.tile.blockM = 128;
  s.tile.mathWarpgroups = 2;
  s.tile.stages = 4;
  EXPECT_TRUE(checkGemmSpec(s).isOk()) << checkGemmSpec(s).message();
  // A tile narrower than a block pair, or than a scale block.
  s.tile.blockN = 128;
  EXPECT_EQ(checkGemmSpec(s).message(),
            "expected block_n (128) to hold whole pairs of the epilogue's "
            "128-column blocks (a multiple of 256)");
  s = pairedSpec();
  s.epilogue->pairBlock = 64;
  s.tile.blockN = 128;
  EXPECT_EQ(checkGemmSpec(s).message(),
            "expected the tile's 64 quantized columns to hold whole scale "
            "blocks of 128: a tile narrower than a scale block cannot "
            "quantize it");
  // Whole rows: one tile must hold the row.
  s = pairedSpec();
  s.epilogue->granularity = Granularity::perRow();
  EXPECT_NE(checkGemmSpec(s).message().find("(whole rows)"), std::string::npos);
  // Accumulate-into-C, grouped GEMMs and sm_100a have no such epilogue.
  s = pairedSpec();
  s.accumulate = true;
  EXPECT_EQ(checkGemmSpec(s).message(),
            "expected no accumulation into C with a quantizing epilogue");
  s = pairedSpec();
  s.arch = Arch::SM100a;
  EXPECT_NE(checkGemmSpec(s).message().find("no quantizing epilogue"),
            std::string::npos)
      << checkGemmSpec(s).message();
}

// D's amax from the epilogue: its own kernel (the name says so), written to
// JSON only when set (the specs of committed plans keep their bytes), and
// refused where it has no meaning or no generator.
TEST(KernelSpec, AnAmaxOutputRoundTripsAndNamesTheKernel) {
  KernelSpec s = deepseekSpec();
  const std::string plainJson = toJSON(s);
  EXPECT_EQ(plainJson.find("amax_out"), std::string::npos) << plainJson;
  KernelSpec t = s;
  t.amaxOut = true;
  EXPECT_FALSE(s == t);
  EXPECT_NE(s.kernelName(), t.kernelName());
  EXPECT_NE(t.kernelName().find("_bf16amax_"), std::string::npos)
      << t.kernelName();
  EXPECT_NE(s.problemKey(), t.problemKey());
  auto back = kernelSpecFromJSON(toJSON(t));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_TRUE(back->amaxOut);
  EXPECT_EQ(*back, t);
  EXPECT_TRUE(checkSm90Spec(t).isOk()) << checkSm90Spec(t).message();

  KernelSpec q = pairedSpec();
  q.amaxOut = true;
  EXPECT_EQ(checkKernelSpec(q).message(),
            "expected no 'amax_out' in a kernel spec with a quantizing "
            "epilogue (its D is FP8 codes with scales), found both");
  KernelSpec g = t;
  g.kind = GemmKind::GroupedContiguous;
  g.groups = 4;
  g.m = kDynamic;
  EXPECT_NE(
      checkSm90Spec(g).message().find("expected a dense GEMM with 'amax_out'"),
      std::string::npos)
      << checkSm90Spec(g).message();
  KernelSpec b = t;
  b.arch = Arch::SM100a;
  b.promotionInterval = 32;
  EXPECT_NE(checkSm100Spec(b).message().find("no amax output"),
            std::string::npos)
      << checkSm100Spec(b).message();
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

/// The message of parsing deepseekSpec()'s JSON with the text `from`
/// replaced by `to` (which must occur once).
static std::string parseEdited(const std::string &from, const std::string &to) {
  std::string json = toJSON(deepseekSpec());
  const size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(json.find(from, at + 1), std::string::npos) << from;
  json.replace(at, from.size(), to);
  return kernelSpecFromJSON(json).message();
}

TEST(KernelSpec, JSONIntegersAreExactlyTypedAndInRange) {
  // 4294967424 = 2^32 + 128: read as 32 bits it was block_n 128.
  EXPECT_EQ(parseEdited("\"block_n\":128", "\"block_n\":4294967424"),
            "expected 'block_n' in tile to be an integer in [1, 256], found "
            "4294967424");
  EXPECT_EQ(parseEdited("\"block_n\":128", "\"block_n\":128.5"),
            "expected 'block_n' in tile to be an integer in [1, 256], found "
            "128.5");
  EXPECT_EQ(parseEdited("\"block_n\":128", "\"block_n\":128.0"),
            "expected 'block_n' in tile to be an integer in [1, 256], found "
            "128.0");
  EXPECT_EQ(parseEdited("\"block_n\":128", "\"block_n\":true"),
            "expected 'block_n' in tile to be an integer in [1, 256], found "
            "true");
  EXPECT_EQ(parseEdited("\"block_n\":128", "\"block_n\":\"128\""),
            "expected 'block_n' in tile to be an integer in [1, 256], found "
            "\"128\"");
  EXPECT_EQ(parseEdited("\"block_n\":128", "\"block_n\":0"),
            "expected 'block_n' in tile to be an integer in [1, 256], found 0");
  EXPECT_EQ(parseEdited("\"stages\":4", "\"stages\":0"),
            "expected 'stages' in tile to be an integer in [2, 32], found 0");
  EXPECT_EQ(
      parseEdited("\"math_warpgroups\":2", "\"math_warpgroups\":99999999999"),
      "expected 'math_warpgroups' in tile to be an integer in [1, 4], "
      "found 99999999999");
  EXPECT_EQ(parseEdited("\"split_k\":1", "\"split_k\":18446744073709551615"),
            "expected 'split_k' in tile to be an integer in [1, 16777216], "
            "found 18446744073709551615");
  EXPECT_EQ(parseEdited("\"k\":2048", "\"k\":-2048"),
            "expected 'k' in kernel spec to be an integer in [-1, "
            "2147483647], found -2048");
  // -1 (K known at launch) only for a K-grouped GEMM.
  EXPECT_EQ(parseEdited("\"k\":2048", "\"k\":-1"),
            "expected 'k' in kernel spec to be an integer in [1, 2147483647] "
            "(or -1 for a grouped_k GEMM, whose K is known at launch), found "
            "-1");
  EXPECT_EQ(parseEdited("\"k\":2048", "\"k\":0"),
            "expected 'k' in kernel spec to be an integer in [1, 2147483647] "
            "(or -1 for a grouped_k GEMM, whose K is known at launch), found "
            "0");
  EXPECT_EQ(parseEdited("\"m\":-1", "\"m\":-2"),
            "expected 'm' in kernel spec to be an integer in [-1, "
            "2147483647], found -2");
  EXPECT_EQ(parseEdited("\"n\":7168", "\"n\":7168.0"),
            "expected 'n' in kernel spec to be an integer in [1, 2147483647], "
            "found 7168.0");
  EXPECT_EQ(
      parseEdited("\"promotion_interval\":128", "\"promotion_interval\":false"),
      "expected 'promotion_interval' in kernel spec to be an integer in "
      "[0, 2147483647], found false");
}

TEST(KernelSpec, AKGroupedSpecMayLeaveKToTheLaunch) {
  // The plan of a K-grouped GEMM: K is every group's tokens, a launch value
  // like M; its kernel name has no K.
  KernelSpec s = deepseekSpec();
  s.kind = GemmKind::GroupedK;
  s.groups = 16;
  s.k = kDynamic;
  auto back = kernelSpecFromJSON(toJSON(s));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->kernelName().find("_k"), std::string::npos)
      << back->kernelName();
  s.kind = GemmKind::GroupedContiguous;
  EXPECT_FALSE(checkKernelSpec(s).isOk());
}

TEST(KernelSpec, JSONOptionalFieldsOfTheWrongTypeAreErrors) {
  EXPECT_EQ(parseEdited("\"persistent\":true", "\"persistent\":1"),
            "expected 'persistent' in tile to be a boolean, found 1");
  EXPECT_EQ(parseEdited("\"accumulate\":false", "\"accumulate\":0"),
            "expected 'accumulate' in kernel spec to be a boolean, found 0");
  EXPECT_EQ(parseEdited("\"accumulate\":false",
                        "\"accumulate\":false,\"amax_out\":\"yes\""),
            "expected 'amax_out' in kernel spec to be a boolean, found "
            "\"yes\"");
  EXPECT_EQ(parseEdited("\"raster\":\"along_n\"", "\"raster\":1"),
            "expected 'raster' in tile to be a string, found 1");
  EXPECT_EQ(parseEdited("\"raster\":\"along_n\"", "\"raster\":\"diagonal\""),
            "expected 'raster' in tile to be one of along_n, along_m, found "
            "'diagonal'");
  EXPECT_EQ(parseEdited("\"kind\":\"dense\"", "\"kind\":null"),
            "expected 'kind' in kernel spec to be a string, found null");
  EXPECT_EQ(parseEdited("\"granularity\":\"1x128\",\"layout\":\"k_major\"",
                        "\"granularity\":\"1x128\",\"layout\":[]"),
            "expected 'layout' in operand 'a' to be a string, found []");
  EXPECT_EQ(parseEdited("\"tile\":{", "\"tile\":7,\"x\":{"),
            "expected 'tile' in kernel spec to be an object, found 7");
}

TEST(KernelSpec, FieldChecksCoverValuesBuiltInMemory) {
  KernelSpec s = deepseekSpec();
  EXPECT_TRUE(checkKernelSpec(s).isOk()) << checkKernelSpec(s).message();
  s.tile.blockN = 0;
  EXPECT_EQ(checkTileConfig(s.tile).message(),
            "expected 'block_n' in tile to be an integer in [1, 256], found 0");
  EXPECT_EQ(checkKernelSpec(s).message(), checkTileConfig(s.tile).message());
  s = deepseekSpec();
  s.n = int64_t(1) << 40;
  EXPECT_EQ(checkKernelSpec(s).message(),
            "expected 'n' in kernel spec to be an integer in [1, 2147483647], "
            "found 1099511627776");
  // checkGemmSpec runs the field check before the arch's arithmetic.
  s = deepseekSpec();
  s.tile.stages = 0;
  EXPECT_EQ(checkGemmSpec(s).message(),
            "expected 'stages' in tile to be an integer in [2, 32], found 0");
}

/// Every integer field of a tile, each set to each hostile value, on both
/// archs: checkGemmSpec refuses it with an error and never crashes (a block
/// of 0 divided by zero in the shared-memory model).
TEST(KernelSpec, HostileTilesAreRefusedNotCrashedOn) {
  int TileConfig::*fields[] = {
      &TileConfig::blockM,         &TileConfig::blockN,
      &TileConfig::blockK,         &TileConfig::stages,
      &TileConfig::mathWarpgroups, &TileConfig::clusterM,
      &TileConfig::clusterN,       &TileConfig::swizzleGroup,
      &TileConfig::splitK,         &TileConfig::tailSplit,
      &TileConfig::ctaGroup};
  for (Arch arch : {Arch::SM90a, Arch::SM100a}) {
    KernelSpec base = deepseekSpec();
    base.arch = arch;
    if (arch == Arch::SM100a) {
      base.a.granularity = base.b.granularity = Granularity::mx();
      base.promotionInterval = std::nullopt;
      base.tile.mathWarpgroups = 1;
    }
    ASSERT_TRUE(checkGemmSpec(base).isOk()) << checkGemmSpec(base).message();
    for (int TileConfig::*f : fields)
      for (int v : {0, -1, INT_MIN, INT_MAX, 4097}) {
        KernelSpec s = base;
        s.tile.*f = v;
        EXPECT_FALSE(checkGemmSpec(s).isOk()) << toJSON(s.tile);
        // 4097 is in split_k's range; the arch check refuses it.
        if (v != 4097)
          EXPECT_FALSE(checkTileConfig(s.tile).isOk()) << toJSON(s.tile);
      }
  }
}

TEST(KernelSpec, LoadRefusesSpecialAndOversizedFiles) {
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(loadKernelSpec(dir).message(),
            "expected kernel spec '" + dir +
                "' to be a regular file, found a directory");
  EXPECT_EQ(loadKernelSpec("/dev/zero").message(),
            "expected kernel spec '/dev/zero' to be a regular file, found a "
            "character device");
  const std::string fifo = dir + "/spec-fifo-" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opened without waiting for a writer, and refused.
  EXPECT_EQ(loadKernelSpec(fifo).message(),
            "expected kernel spec '" + fifo +
                "' to be a regular file, found a FIFO");
  std::remove(fifo.c_str());
  const std::string big = dir + "/spec-big-" + std::to_string(getpid());
  {
    std::ofstream out(big);
    out << std::string(size_t(kMaxKernelSpecBytes) + 1, ' ');
  }
  EXPECT_EQ(loadKernelSpec(big).message(),
            "expected kernel spec '" + big + "' to be at most 1048576 bytes, " +
                "found 1048577");
  {
    std::ofstream out(big);
    out << toJSON(deepseekSpec());
  }
  auto back = loadKernelSpec(big);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, deepseekSpec());
  std::remove(big.c_str());
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
