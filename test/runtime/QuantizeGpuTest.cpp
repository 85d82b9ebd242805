//===- QuantizeGpuTest.cpp - fp8::quantize against the CPU oracle ---------===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh):
// fp8::quantize (runtime/Quantize.h) on random bf16 tensors of ragged shapes
// at every granularity of the vocabulary, current scaling, and per-tensor
// delayed scaling over three calls on one history, against
// numerics::quantizeBF16 bit for bit (codes and scales). Codes and scales
// are poisoned first, so an unwritten element fails.
//
//===----------------------------------------------------------------------===//

#include "numerics/DelayedScaling.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Quantize.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

using namespace fp8;

namespace {

struct Shape2 {
  int64_t rows, cols;
};

class QuantizeGpu
    : public ::testing::TestWithParam<std::tuple<Granularity, Shape2>> {};

/// Quantizes `x` on the GPU with `r` (`history`: the device state of
/// delayed scaling) and compares with the oracle's `want`.
void expectSame(const QuantRecipe &r, const std::vector<uint16_t> &x,
                int64_t rows, int64_t cols, DeviceBuffer *history,
                const numerics::QuantizedTensor &want,
                const std::string &what) {
  const bool e8 = r.granularity.scale == ScaleFormat::UE8M0;
  const size_t ns = size_t(want.scaleRows * want.scaleCols);
  auto dx = DeviceBuffer::fromHost(x);
  auto dq = DeviceBuffer::alloc(size_t(rows * cols));
  auto ds = DeviceBuffer::alloc(ns * (e8 ? 1 : 4));
  ASSERT_TRUE(dx.isOk() && dq.isOk() && ds.isOk());
  ASSERT_TRUE(dq->fill(0x5A).isOk());
  ASSERT_TRUE(ds->fill(0x5A).isOk());
  QuantizeTensors t;
  t.x = dx->get();
  t.codes = dq->get();
  t.scales = ds->get();
  t.history = history ? history->get() : nullptr;
  Status s = quantize(r, rows, cols, t, nullptr);
  ASSERT_TRUE(s.isOk()) << what << ": " << s.message();
  ASSERT_TRUE(waitStream(nullptr, 60, what).isOk());
  std::vector<uint8_t> codes(size_t(rows * cols)), scales(ns * (e8 ? 1 : 4));
  ASSERT_TRUE(dq->download(codes).isOk());
  ASSERT_TRUE(ds->download(scales).isOk());
  EXPECT_EQ(codes, want.codes) << what << ": codes";
  std::vector<uint8_t> wantScales(scales.size());
  if (e8)
    std::memcpy(wantScales.data(), want.scaleCodes.data(), ns);
  else
    std::memcpy(wantScales.data(), want.scales.data(), ns * 4);
  EXPECT_EQ(scales, wantScales) << what << ": scales";
}

TEST_P(QuantizeGpu, MatchesTheOracleBitForBit) {
  auto [g, shape] = GetParam();
  QuantRecipe r;
  r.granularity = g;
  numerics::RandomSpec spec;
  spec.dist = numerics::Distribution::Outliers;
  const std::vector<uint16_t> x =
      numerics::randomTensorBF16(shape.rows * shape.cols, spec);
  auto want = numerics::quantizeBF16(x.data(), shape.rows, shape.cols, r);
  ASSERT_TRUE(want.isOk()) << want.message();
  expectSame(r, x, shape.rows, shape.cols, nullptr, *want,
             toString(g) + " on " + std::to_string(shape.rows) + "x" +
                 std::to_string(shape.cols));
}

INSTANTIATE_TEST_SUITE_P(
    Granularities, QuantizeGpu,
    ::testing::Combine(
        ::testing::Values(Granularity::block(1, 128), Granularity::perRow(),
                          Granularity::mx(), Granularity::block(128, 1),
                          Granularity::block(128, 128),
                          Granularity::perTensor(),
                          Granularity::block(1, 128, ScaleFormat::F32Pow2)),
        ::testing::Values(Shape2{1, 256}, Shape2{7, 384}, Shape2{129, 200},
                          Shape2{512, 4096})));

TEST(QuantizeGpuDelayed, ThreeStepsOnOneHistoryMatchTheOracle) {
  QuantRecipe r;
  r.granularity = Granularity::perTensor();
  r.mode = ScalingMode::Delayed;
  r.delayed.historyLength = 4;
  auto history = DeviceBuffer::alloc(size_t(amaxHistoryBytes(4)));
  ASSERT_TRUE(history.isOk()) << history.message();
  ASSERT_TRUE(history->fill(0).isOk());
  numerics::AmaxHistory oracle(r.delayed);
  for (int step = 0; step < 3; ++step) {
    numerics::RandomSpec spec;
    spec.seed = uint64_t(step + 1);
    spec.scale = float(1 + step);
    const std::vector<uint16_t> x = numerics::randomTensorBF16(129 * 200, spec);
    auto want = numerics::quantizeBF16(x.data(), 129, 200, r, nullptr, &oracle);
    ASSERT_TRUE(want.isOk()) << want.message();
    expectSame(r, x, 129, 200, &*history, *want,
               "delayed step " + std::to_string(step));
  }
}

} // namespace
