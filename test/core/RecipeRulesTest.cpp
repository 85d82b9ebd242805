//===- RecipeRulesTest.cpp - Target-independent recipe rules --------------===//
//
// Every message of core/RecipeRules.h once, plus the arithmetic the rules
// rest on (ceil-div without overflow, logical frames, dynamic sizes).
//
//===----------------------------------------------------------------------===//

#include "core/RecipeRules.h"

#include <gtest/gtest.h>

#include <limits>

using namespace fp8;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Expects an error whose message is exactly `message`.
void expectError(const Status &s, const std::string &message) {
  ASSERT_FALSE(s.isOk()) << "expected the error: " << message;
  EXPECT_EQ(s.message(), message);
}

OperandSpec operand(Granularity g, Layout l = Layout::KMajor,
                    DType f = DType::E4M3FN) {
  OperandSpec o;
  o.format = f;
  o.layout = l;
  o.granularity = g;
  return o;
}

/// DeepSeek-V3: 1x128 activations, 128x128 weights, promotion every 128.
ScaledGemmArgs deepseek() {
  ScaledGemmArgs g;
  g.a = operand(Granularity::block(1, 128));
  g.b = operand(Granularity::block(128, 128));
  g.aShape = {128, 7168};
  g.aScaleShape = {128, 56};
  g.bShape = {4096, 7168};
  g.bScaleShape = {32, 56};
  g.dShape = {128, 4096};
  g.promotionInterval = 128;
  return g;
}

/// MoE, contiguous groups: A [sumM, K], B [G, N, K], offsets [G + 1].
ScaledGemmArgs contiguous() {
  ScaledGemmArgs g = deepseek();
  g.kind = GemmKind::GroupedContiguous;
  g.aShape = {kDynamic, 7168};
  g.aScaleShape = {kDynamic, 56};
  g.bShape = {8, 4096, 7168};
  g.bScaleShape = {8, 32, 56};
  g.dShape = {kDynamic, 4096};
  g.groupShape = {9};
  return g;
}

/// MoE, masked groups: A [G, maxM, K], D [G, maxM, N], valid rows [G].
ScaledGemmArgs masked() {
  ScaledGemmArgs g = contiguous();
  g.kind = GemmKind::GroupedMasked;
  g.aShape = {8, 256, 7168};
  g.aScaleShape = {8, 256, 56};
  g.dShape = {8, 256, 4096};
  g.groupShape = {8};
  return g;
}

} // namespace

TEST(RecipeRules, ScaleCountIsACeilDivThatNeverOverflows) {
  EXPECT_EQ(scaleCount(128, 4096), 32);
  EXPECT_EQ(scaleCount(128, 4000), 32);
  EXPECT_EQ(scaleCount(128, 4097), 33);
  EXPECT_EQ(scaleCount(128, 0), 0);
  EXPECT_EQ(scaleCount(Granularity::kWhole, 0), 1);
  EXPECT_EQ(scaleCount(Granularity::kWhole, kDynamic), 1);
  EXPECT_EQ(scaleCount(1, kDynamic), kDynamic);
  EXPECT_EQ(scaleCount(2, kMax), kMax / 2 + 1);
  EXPECT_EQ(scaleCount(kMax, kMax), 1);
  EXPECT_EQ(scaleCount(kMax, kMax - 1), 1);
  EXPECT_EQ(scaleCount(1, kMax), kMax);
}

TEST(RecipeRules, ScaleShapes) {
  EXPECT_EQ(scaleShapeFor({128, 7168}, Granularity::block(1, 128)),
            (Shape{128, 56}));
  EXPECT_EQ(scaleShapeFor({4096, 7168}, Granularity::perTensor()),
            (Shape{1, 1}));
  EXPECT_EQ(scaleShapeFor({4096, 7168}, Granularity::perColumn()),
            (Shape{1, 7168}));
  EXPECT_EQ(scaleShapeFor({8, 4096, 7168}, Granularity::block(128, 128)),
            (Shape{8, 32, 56}));
  EXPECT_EQ(scaleShapeFor({kDynamic, 7168}, Granularity::perRow()),
            (Shape{kDynamic, 1}));
  EXPECT_TRUE(scaleShapeFor({7168}, Granularity::perRow()).empty());
  EXPECT_EQ(formatShape({kDynamic, 56}), "[?, 56]");
}

TEST(RecipeRules, LogicalFrameSwapsForMNMajor) {
  Granularity stored = Granularity::block(128, 1, ScaleFormat::F32Pow2);
  EXPECT_EQ(logicalGranularity(stored, Layout::MNMajor),
            Granularity::block(1, 128, ScaleFormat::F32Pow2));
  EXPECT_EQ(logicalGranularity(stored, Layout::KMajor), stored);
  EXPECT_EQ(kBlock(stored, Layout::MNMajor), 128);
  EXPECT_EQ(kBlock(stored, Layout::KMajor), 1);
  EXPECT_EQ(kBlock(Granularity::perRow(), Layout::KMajor), Granularity::kWhole);
  EXPECT_TRUE(isMX(Granularity::mx(), Layout::KMajor));
  EXPECT_TRUE(
      isMX(Granularity::block(32, 1, ScaleFormat::UE8M0), Layout::MNMajor));
  EXPECT_FALSE(isMX(Granularity::mx(), Layout::MNMajor));
  EXPECT_FALSE(isMX(Granularity::block(1, 32), Layout::KMajor));
}

TEST(RecipeRules, ValidGemmsPass) {
  EXPECT_TRUE(checkScaledGemm(deepseek()).isOk());
  EXPECT_TRUE(checkScaledGemm(contiguous()).isOk());
  EXPECT_TRUE(checkScaledGemm(masked()).isOk());

  // K need not be a multiple of the K block: the last block is partial.
  ScaledGemmArgs partial = deepseek();
  partial.aShape = {128, 4000};
  partial.bShape = {4096, 4000};
  partial.aScaleShape = {128, 32};
  partial.bScaleShape = {32, 32};
  EXPECT_TRUE(checkScaledGemm(partial).isOk());

  // Per-tensor, tensor-core accumulation only, e5m2 x e4m3, f32 out.
  ScaledGemmArgs perTensor = deepseek();
  perTensor.a = operand(Granularity::perTensor(), Layout::KMajor, DType::E5M2);
  perTensor.b = operand(Granularity::perTensor());
  perTensor.aScaleShape = {1, 1};
  perTensor.bScaleShape = {1, 1};
  perTensor.promotionInterval.reset();
  perTensor.out = DType::F32;
  EXPECT_TRUE(checkScaledGemm(perTensor).isOk());

  // MX on both operands needs no promotion; B stored MN-major.
  ScaledGemmArgs mx = deepseek();
  mx.a = operand(Granularity::mx());
  mx.b =
      operand(Granularity::block(32, 1, ScaleFormat::UE8M0), Layout::MNMajor);
  mx.bShape = {7168, 4096};
  mx.aScaleShape = {128, 224};
  mx.bScaleShape = {224, 4096};
  mx.aScaleType = mx.bScaleType = DType::UE8M0;
  mx.promotionInterval.reset();
  EXPECT_TRUE(checkScaledGemm(mx).isOk()) << checkScaledGemm(mx).message();

  // Dynamic sizes skip only the comparisons they are part of.
  ScaledGemmArgs dyn = deepseek();
  dyn.aShape = {kDynamic, kDynamic};
  dyn.aScaleShape = {kDynamic, 56};
  dyn.dShape = {kDynamic, 4096};
  EXPECT_TRUE(checkScaledGemm(dyn).isOk());
}

TEST(RecipeRules, GranularityMessages) {
  expectError(checkGranularity(Granularity::block(-1, 128), "A's granularity"),
              "expected the block rows of A's granularity to be positive or "
              "whole, found -1");
  expectError(checkGranularity(Granularity::block(1, -128), "B's granularity"),
              "expected the block columns of B's granularity to be positive "
              "or whole, found -128");
}

TEST(RecipeRules, DelayedScalingMessages) {
  DelayedScaling d;
  EXPECT_TRUE(checkDelayedScaling(d).isOk());
  d.historyLength = 0;
  expectError(
      checkDelayedScaling(d),
      "expected the amax history length to be in [1, 1048576], found 0");
  d = DelayedScaling();
  d.updateInterval = -3;
  expectError(
      checkDelayedScaling(d),
      "expected the amax update interval to be in [1, 2147483647], found -3");
  d = DelayedScaling();
  d.historyLength = kMaxHistoryLength + 1; // the kernels count in 32 bits
  expectError(checkDelayedScaling(d), "expected the amax history length to "
                                      "be in [1, 1048576], found 1048577");
  d = DelayedScaling();
  d.updateInterval = int64_t(1) << 40;
  EXPECT_FALSE(checkDelayedScaling(d).isOk());
  d = DelayedScaling();
  d.margin = 128;
  expectError(checkDelayedScaling(d), "expected the margin to be in [0, 127] "
                                      "(a headroom of 2^margin on the amax), "
                                      "found 128");
  EXPECT_TRUE(checkScalingMode(ScalingMode::Current, Granularity::block(1, 128))
                  .isOk());
  expectError(
      checkScalingMode(ScalingMode::Delayed, Granularity::block(1, 128)),
      "expected per_tensor granularity with delayed scaling (one amax "
      "history per tensor), found 1x128");
  EXPECT_TRUE(checkAmaxHistory(DelayedScaling(), {16}).isOk());
  EXPECT_TRUE(checkAmaxHistory(DelayedScaling(), {kDynamic}).isOk());
  expectError(checkAmaxHistory(DelayedScaling(), {8}),
              "expected the amax history to have shape [16] (the history "
              "length), found [8]");
}

TEST(RecipeRules, QuantRecipeMessages) {
  QuantRecipe q;
  q.granularity = Granularity::block(1, 128);
  EXPECT_TRUE(checkQuantRecipe(q, "A").isOk());
  q.format = DType::BF16;
  expectError(checkQuantRecipe(q, "A"), "expected A to be quantized to an FP8 "
                                        "format (e4m3fn or e5m2), found bf16");
  q.format = DType::E5M2;
  q.granularity.cols = -2;
  expectError(checkQuantRecipe(q, "A"), "expected the block columns of A's "
                                        "granularity to be positive or whole, "
                                        "found -2");
  q.granularity = Granularity::perTensor();
  q.mode = ScalingMode::Delayed;
  EXPECT_TRUE(checkQuantRecipe(q, "A").isOk());
  q.delayed.historyLength = 0;
  EXPECT_FALSE(checkQuantRecipe(q, "A").isOk());
  q.delayed.historyLength = 16;
  q.granularity = Granularity::perRow();
  EXPECT_FALSE(checkQuantRecipe(q, "A").isOk());
}

TEST(RecipeRules, ScaleMessages) {
  Granularity tile = Granularity::block(1, 128);
  expectError(checkScaleShape({128, 4096}, tile, {128, 16}, "A"),
              "expected the scale of A to have shape [128, 32] for a [128, "
              "4096] operand with 1x128 granularity, found [128, 16]");
  expectError(checkScaleShape({128, 4096}, tile, {128, 32, 1}, "A"),
              "expected the scale of A to have rank 2 (A's), found 3");
  expectError(
      checkScaleShape({4096}, tile, {32}, "A"),
      "expected A to have rank 2 (or 3 for a stack of groups), found 1");
  expectError(checkScaleShape({-5, 4096}, tile, {1, 32}, "A"),
              "expected the sizes of A to be non-negative, found [-5, 4096]");
  expectError(checkScaleShape({5, 4096}, tile, {5, -32}, "A"),
              "expected the sizes of the scale of A to be non-negative, found "
              "[5, -32]");
  expectError(checkScaleType(Granularity::perRow(ScaleFormat::F32Pow2),
                             DType::UE8M0, "B"),
              "expected the scale of B to be f32 (f32_pow2 scales), found "
              "ue8m0");
  expectError(checkScaleType(Granularity::mx(), DType::F32, "A"),
              "expected the scale of A to be ue8m0 (ue8m0 scales), found f32");
}

TEST(RecipeRules, FormatPairMessages) {
  EXPECT_TRUE(checkFormatPair(DType::E5M2, DType::E5M2, DType::F32).isOk());
  expectError(checkFormatPair(DType::BF16, DType::E4M3FN, DType::BF16),
              "expected A to be an FP8 format (e4m3fn or e5m2), found bf16");
  expectError(checkFormatPair(DType::E4M3FN, DType::UE8M0, DType::BF16),
              "expected B to be an FP8 format (e4m3fn or e5m2), found ue8m0");
  expectError(checkFormatPair(DType::E4M3FN, DType::E4M3FN, DType::F16),
              "expected the result to be bf16 or f32, found f16");
}

TEST(RecipeRules, KBlockAndPromotionMessages) {
  OperandSpec tile = operand(Granularity::block(1, 128));
  OperandSpec block = operand(Granularity::block(128, 128));
  OperandSpec channel = operand(Granularity::perRow());
  expectError(checkMXPair(operand(Granularity::mx()), block),
              "expected B to have MX granularity like A (one ue8m0 scale per "
              "1x32 elements along K), found 128x128 (k_major)");
  expectError(checkMXPair(tile, operand(Granularity::mx())),
              "expected A to have MX granularity like B (one ue8m0 scale per "
              "1x32 elements along K), found 1x128 (k_major)");
  expectError(checkKBlocks(operand(Granularity::block(1, 48)), block),
              "expected the K block of A's scales (48) to be a multiple of 32 "
              "(the FP8 MMA K step)");
  // Per-row scales of an MN-major B vary along K every element.
  expectError(
      checkKBlocks(tile, operand(Granularity::perRow(), Layout::MNMajor)),
      "expected the K block of B's scales (1) to be a multiple of 32 "
      "(the FP8 MMA K step)");
  expectError(checkKBlocks(tile, operand(Granularity::block(128, 64))),
              "expected the K blocks of A's and B's scales to be equal when "
              "both vary along K, found 128 and 64");
  EXPECT_TRUE(checkPromotionInterval(std::nullopt, channel, channel).isOk());
  EXPECT_TRUE(checkPromotionInterval(64, tile, block).isOk());
  expectError(checkPromotionInterval(48, channel, channel),
              "expected promotion_interval to be a positive multiple of 32, "
              "found 48");
  expectError(checkPromotionInterval(0, channel, channel),
              "expected promotion_interval to be a positive multiple of 32, "
              "found 0");
  expectError(checkPromotionInterval(std::nullopt, channel, block),
              "expected a promotion_interval: the scales of B vary along K "
              "(blocks of 128), so partial sums must be promoted to apply "
              "them");
  expectError(checkPromotionInterval(256, tile, block),
              "expected promotion_interval (256) to divide the K block of A's "
              "scales (128)");
  EXPECT_TRUE(checkPromotionInterval(std::nullopt, operand(Granularity::mx()),
                                     operand(Granularity::mx()))
                  .isOk());
  expectError(checkPromotionInterval(64, operand(Granularity::mx()),
                                     operand(Granularity::mx())),
              "expected promotion_interval (64) to divide the K block of A's "
              "scales (32)");
}

TEST(RecipeRules, GemmShapeMessages) {
  ScaledGemmArgs g = deepseek();
  g.bShape = {4096, 4000};
  expectError(checkScaledGemm(g),
              "expected K of B (4000) to equal K of A (7168)");
  g = deepseek();
  g.dShape = {64, 4096};
  expectError(checkScaledGemm(g),
              "expected the result's rows (64) to equal M (128)");
  g = deepseek();
  g.dShape = {128, 4000};
  expectError(checkScaledGemm(g),
              "expected the result's columns (4000) to equal N (4096)");
  g = deepseek();
  g.aShape = {1, 128, 7168};
  expectError(checkScaledGemm(g),
              "expected A of a dense GEMM to have rank 2, found 3");
  g = deepseek();
  g.dShape = {-1000, 4096};
  expectError(checkScaledGemm(g), "expected the sizes of the result to be "
                                  "non-negative, found [-1000, 4096]");
  // MN-major A is stored [K, M].
  g = deepseek();
  g.a = operand(Granularity::block(128, 1), Layout::MNMajor);
  g.aShape = {7168, 128};
  g.aScaleShape = {56, 128};
  EXPECT_TRUE(checkScaledGemm(g).isOk()) << checkScaledGemm(g).message();
  g.aScaleShape = {56, 1};
  expectError(checkScaledGemm(g),
              "expected the scale of A to have shape [56, 128] for a [7168, "
              "128] operand with 128x1 granularity, found [56, 1]");
}

TEST(RecipeRules, GroupedMessages) {
  ScaledGemmArgs g = contiguous();
  g.bShape = {8, 4096};
  expectError(
      checkScaledGemm(g),
      "expected B of a contiguous grouped GEMM to have rank 3, found 2");
  g = contiguous();
  g.groupShape = {8};
  expectError(checkScaledGemm(g),
              "expected the group offsets to have one element more than "
              "there are groups (8), found 8");
  g.groupShape = {0};
  EXPECT_FALSE(checkScaledGemm(g).isOk());
  g.groupShape = {9, 1};
  expectError(checkScaledGemm(g),
              "expected the group offsets to have rank 1, found 2");
  g.groupShape = {kDynamic};
  EXPECT_TRUE(checkScaledGemm(g).isOk());
  // An absurd group count must not overflow "groups + 1".
  g.bShape = {kMax, 4096, 7168};
  g.bScaleShape = {kMax, 32, 56};
  g.groupShape = {kMax};
  EXPECT_FALSE(checkScaledGemm(g).isOk());
  g.groupShape = {kDynamic};
  EXPECT_TRUE(checkScaledGemm(g).isOk());

  g = masked();
  g.groupShape = {4};
  expectError(checkScaledGemm(g), "expected the valid-row counts to have one "
                                  "element per group (8), found 4");
  g = masked();
  g.aShape = {4, 256, 7168};
  expectError(checkScaledGemm(g), "expected the group count of A (4) to equal "
                                  "the group count of B (8)");
  g = masked();
  g.dShape = {4, 256, 4096};
  expectError(checkScaledGemm(g), "expected the group count of the result (4) "
                                  "to equal the group count of B (8)");
  g = masked();
  g.dShape = {8, 128, 4096};
  expectError(checkScaledGemm(g),
              "expected the result's rows (128) to equal A's maxM (256)");
  g = masked();
  g.bScaleShape = {8, 32, 28};
  expectError(checkScaledGemm(g),
              "expected the scale of B to have shape [8, 32, 56] for a [8, "
              "4096, 7168] operand with 128x128 granularity, found [8, 32, "
              "28]");
}
