//===- QuantizeArgsTest.cpp - fp8::quantize's checks before launch --------===//
//
// Everything fp8::quantize (runtime/Quantize.h) refuses without a GPU, each
// with the argument it names; and, on a machine without a CUDA driver, the
// driver's message at the first call that needs the GPU (not a crash).
//
//===----------------------------------------------------------------------===//

#include "runtime/HostOracle.h"
#include "runtime/Quantize.h"

#include "core/RecipeRules.h"
#include "runtime/CudaDriver.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

/// Plausible (never dereferenced) device addresses, 256-byte aligned.
void *fakePtr(uintptr_t i) {
  return reinterpret_cast<void *>(uintptr_t(0x7f0000000000) + i * 256);
}

QuantizeTensors tensors() {
  QuantizeTensors t;
  t.x = fakePtr(1);
  t.codes = fakePtr(2);
  t.scales = fakePtr(3);
  return t;
}

QuantRecipe tiles() {
  QuantRecipe r;
  r.granularity = Granularity::block(1, 128);
  return r;
}

std::string problem(QuantRecipe r, int64_t rows, int64_t cols,
                    QuantizeTensors t) {
  return checkQuantizeArgs(r, rows, cols, t).message();
}

} // namespace

TEST(QuantizeArgs, AcceptsEveryGranularityAndScaling) {
  EXPECT_TRUE(checkQuantizeArgs(tiles(), 4096, 7168, tensors()).isOk());
  QuantRecipe r = tiles();
  for (Granularity g : {Granularity::perTensor(), Granularity::perRow(),
                        Granularity::perColumn(), Granularity::block(128, 128),
                        Granularity::mx(), Granularity::block(128, 1)}) {
    r.granularity = g;
    EXPECT_TRUE(checkQuantizeArgs(r, 129, 7, tensors()).isOk()) << toString(g);
  }
  r.granularity = Granularity::perTensor();
  r.mode = ScalingMode::Delayed;
  QuantizeTensors t = tensors();
  t.history = fakePtr(4);
  EXPECT_TRUE(checkQuantizeArgs(r, 64, 64, t).isOk());
  EXPECT_EQ(amaxHistoryBytes(16), 16 + 4 * 16);
}

TEST(QuantizeArgs, AnEmptyTensorIsNothingToDoUnlessAScaleCoversNoElements) {
  // Blocks of 1x128, 128x128, MX or 128x1: no codes, no scales, and null
  // pointers (an empty tensor's data pointer), on the GPU and the CPU alike.
  QuantizeTensors none;
  for (Granularity g :
       {Granularity::block(1, 128), Granularity::block(128, 128),
        Granularity::mx(), Granularity::block(128, 1)}) {
    QuantRecipe r = tiles();
    r.granularity = g;
    EXPECT_TRUE(checkQuantizeArgs(r, 0, 256, none).isOk()) << toString(g);
    EXPECT_TRUE(checkQuantizeArgs(r, 256, 0, none).isOk()) << toString(g);
    EXPECT_TRUE(quantizeOnHost(r, 0, 256, none).isOk()) << toString(g);
  }
  // A per-tensor scale, or a per-row one of rows of no columns, would be of
  // an amax of nothing.
  QuantRecipe r = tiles();
  r.granularity = Granularity::perTensor();
  EXPECT_NE(problem(r, 0, 256, tensors()).find("expected a non-empty tensor"),
            std::string::npos)
      << problem(r, 0, 256, tensors());
  r.granularity = Granularity::perRow();
  EXPECT_NE(problem(r, 8, 0, none).find("8 of them"), std::string::npos)
      << problem(r, 8, 0, none);
  EXPECT_TRUE(checkQuantizeArgs(r, 0, 8, none).isOk());
}

TEST(QuantizeArgs, RefusalsNameTheArgument) {
  QuantRecipe r = tiles();
  r.format = DType::BF16;
  EXPECT_EQ(problem(r, 8, 8, tensors()),
            "expected x to be quantized to an FP8 format (e4m3fn or e5m2), "
            "found bf16");
  QuantizeTensors t = tensors();
  t.xType = DType::E4M3FN;
  EXPECT_EQ(problem(tiles(), 8, 8, t),
            "expected x to be bf16, f16 or f32, found e4m3fn");
  EXPECT_EQ(problem(tiles(), -1, 8, tensors()),
            "expected rows and cols in [0, 2^40), found -1 x 8");
  t = tensors();
  t.batch = 0;
  EXPECT_EQ(problem(tiles(), 8, 8, t),
            "expected a batch in [1, 2^40), found 0");
  t = tensors();
  t.batch = int64_t(1) << 20;
  EXPECT_EQ(problem(tiles(), int64_t(1) << 20, int64_t(1) << 20, t),
            "expected at most 2^47 elements, found a batch of 1048576 "
            "matrices of 1048576 x 1048576");
  t = tensors();
  t.scales = nullptr;
  EXPECT_NE(problem(tiles(), 8, 8, t)
                .find("expected pointers to x, codes and scales"),
            std::string::npos);
  t = tensors();
  t.x = static_cast<char *>(fakePtr(1)) + 1;
  EXPECT_NE(problem(tiles(), 8, 8, t)
                .find("expected x to be aligned to its element size (2 "
                      "bytes)"),
            std::string::npos);
  t = tensors();
  t.scales = static_cast<char *>(fakePtr(3)) + 2;
  EXPECT_NE(problem(tiles(), 8, 8, t)
                .find("expected the f32 scales to be 4-byte aligned"),
            std::string::npos);
  r = tiles();
  r.granularity.scale = ScaleFormat::UE8M0; // bytes: any address
  EXPECT_TRUE(checkQuantizeArgs(r, 8, 8, t).isOk());
  // Delayed scaling: per tensor, a history, one matrix.
  r = tiles();
  r.mode = ScalingMode::Delayed;
  EXPECT_NE(problem(r, 8, 8, tensors()).find("per_tensor"), std::string::npos);
  r.granularity = Granularity::perTensor();
  EXPECT_EQ(problem(r, 8, 8, tensors()),
            "expected an amax history state (history: 80 bytes, zeroed "
            "before the first call) with delayed scaling");
  t = tensors();
  t.history = fakePtr(4);
  t.batch = 2;
  EXPECT_EQ(problem(r, 8, 8, t),
            "expected one matrix with delayed scaling (one amax history), "
            "found a batch of 2");
  EXPECT_EQ(problem(tiles(), 8, 8, t),
            "expected no amax history with current scaling");
  // Transposed codes and scales: R x 1 blocks, current scaling.
  t = tensors();
  t.transposed = true;
  r = tiles();
  r.granularity = Granularity::block(128, 1);
  EXPECT_TRUE(checkQuantizeArgs(r, 129, 7, t).isOk());
  r.granularity = Granularity::block(1, 128);
  EXPECT_EQ(problem(r, 8, 8, t),
            "expected blocks of several rows by one column (R x 1, R > 1, "
            "such as 128x1) with current scaling for transposed codes and "
            "scales, found 1x128");
  r.granularity = Granularity::perColumn();
  EXPECT_EQ(problem(r, 8, 8, t),
            "expected blocks of several rows by one column (R x 1, R > 1, "
            "such as 128x1) with current scaling for transposed codes and "
            "scales, found per_column");
}

// A given amax (a GEMM epilogue's): per-tensor current scaling only, an f32
// 4-byte aligned; any batch (one amax a matrix).
TEST(QuantizeArgs, AGivenAmaxIsPerTensorCurrentScalingAndAligned) {
  QuantRecipe r = tiles();
  r.granularity = Granularity::perTensor();
  QuantizeTensors t = tensors();
  t.amax = static_cast<const float *>(fakePtr(5));
  EXPECT_TRUE(checkQuantizeArgs(r, 129, 7, t).isOk());
  t.batch = 3;
  EXPECT_TRUE(checkQuantizeArgs(r, 129, 7, t).isOk());
  t.batch = 1;
  for (Granularity g : {Granularity::block(1, 128), Granularity::perRow(),
                        Granularity::block(128, 128)}) {
    r.granularity = g;
    EXPECT_EQ(problem(r, 8, 8, t),
              "expected per-tensor current scaling with a given amax (amax), "
              "found " +
                  toString(g));
  }
  r.granularity = Granularity::perTensor();
  r.mode = ScalingMode::Delayed;
  t.history = fakePtr(4);
  EXPECT_EQ(problem(r, 8, 8, t),
            "expected per-tensor current scaling with a given amax (amax), "
            "found per_tensor delayed");
  r.mode = ScalingMode::Current;
  t.history = nullptr;
  t.amax = reinterpret_cast<const float *>(static_cast<char *>(fakePtr(5)) + 2);
  EXPECT_NE(problem(r, 8, 8, t)
                .find("expected the given amax to be 4-byte aligned (f32)"),
            std::string::npos);
}

TEST(QuantizeArgs, TransposedExactlyWhereTheRecipeWritesIt) {
  struct Case {
    DType format;
    Granularity g;
    ScalingMode mode;
    bool writesTransposed;
  };
  const ScalingMode current = ScalingMode::Current;
  const ScalingMode delayed = ScalingMode::Delayed;
  for (const Case &c : {
           Case{DType::E4M3FN, Granularity::block(128, 1), current, true},
           Case{DType::E5M2, Granularity::block(256, 1), current, true},
           Case{DType::E4M3FN, Granularity::block(1, 128), current, false},
           Case{DType::E4M3FN, Granularity::block(128, 128), current, false},
           Case{DType::E4M3FN, Granularity::perTensor(), current, false},
           Case{DType::E4M3FN, Granularity::perColumn(), current, false},
           Case{DType::E4M3FN, Granularity::perTensor(), delayed, false},
           // Not a valid recipe (delayed scaling is per tensor), and not
           // the column path either.
           Case{DType::E4M3FN, Granularity::block(128, 1), delayed, false},
       }) {
    QuantRecipe r;
    r.format = c.format;
    r.granularity = c.g;
    r.mode = c.mode;
    const std::string name =
        toString(c.g) + (c.mode == delayed ? " delayed" : "");
    EXPECT_EQ(quantizeWritesTransposed(r), c.writesTransposed) << name;
    QuantizeTensors t = tensors();
    if (c.mode == delayed)
      t.history = fakePtr(4);
    // The plain call: refused only for an invalid recipe.
    const bool valid = checkQuantizeArgs(r, 256, 64, t).isOk();
    EXPECT_EQ(valid, checkQuantRecipe(r, "x").isOk()) << name;
    // checkQuantizeArgs takes `transposed` exactly where the rule says so.
    t.transposed = true;
    EXPECT_EQ(checkQuantizeArgs(r, 256, 64, t).isOk(),
              valid && c.writesTransposed)
        << name;
  }
}

TEST(QuantizeArgs, WithoutADriverTheFirstGpuCallSaysSo) {
  if (CudaDriver::get().isOk())
    GTEST_SKIP() << "a CUDA driver is present: this test is for machines "
                    "without one (CI)";
  // An empty tensor needs no GPU.
  EXPECT_TRUE(quantize(tiles(), 0, 128, tensors(), nullptr).isOk());
  const Status s = quantize(tiles(), 8, 128, tensors(), nullptr);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("no CUDA driver found"), std::string::npos)
      << s.message();
}
