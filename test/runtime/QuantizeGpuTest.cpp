//===- QuantizeGpuTest.cpp - fp8::quantize against the CPU oracle ---------===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh):
// fp8::quantize (runtime/Quantize.h) on random bf16 tensors of ragged shapes
// at every granularity of the vocabulary, current scaling, and per-tensor
// delayed scaling over six calls on one history of four (the ring wraps),
// against numerics::quantizeBF16 bit for bit (codes and scales), also with
// the codes and scales written transposed; fp8::transpose
// of a batch of quantized tensors against fp8::transposeOnHost; per-tensor
// scaling from a given amax against fp8::quantizeOnHost. Outputs are
// poisoned first, so an unwritten element fails.
//
//===----------------------------------------------------------------------===//

#include "numerics/DelayedScaling.h"
#include "numerics/Formats.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/HostOracle.h"
#include "runtime/Quantize.h"
#include "runtime/plan/PlanOracle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

/// The codes and the scales' bytes of the oracle's `q`.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>>
bytesOf(const numerics::QuantizedTensor &q) {
  const bool e8 = q.granularity.scale == ScaleFormat::UE8M0;
  const size_t ns = size_t(q.scaleRows * q.scaleCols);
  std::vector<uint8_t> scales(ns * (e8 ? 1 : 4));
  std::memcpy(scales.data(),
              e8 ? q.scaleCodes.data() : (const void *)q.scales.data(),
              scales.size());
  return {q.codes, scales};
}

/// Quantizes `x` on the GPU with `r` and `t`'s history, batch and
/// orientation (its pointers are set here) and compares the codes and
/// scales with `want` (their bytes, bytesOf).
void expectBytes(
    const QuantRecipe &r, const std::vector<uint16_t> &x, int64_t rows,
    int64_t cols, QuantizeTensors t,
    const std::pair<std::vector<uint8_t>, std::vector<uint8_t>> &want,
    const std::string &what) {
  auto dx = DeviceBuffer::fromHost(x);
  auto dq = DeviceBuffer::alloc(want.first.size());
  auto ds = DeviceBuffer::alloc(want.second.size());
  ASSERT_TRUE(dx.isOk() && dq.isOk() && ds.isOk());
  ASSERT_TRUE(dq->fill(0x5A).isOk());
  ASSERT_TRUE(ds->fill(0x5A).isOk());
  t.x = dx->get();
  t.codes = dq->get();
  t.scales = ds->get();
  Status s = quantize(r, rows, cols, t, nullptr);
  ASSERT_TRUE(s.isOk()) << what << ": " << s.message();
  ASSERT_TRUE(waitStream(nullptr, 60, what).isOk());
  std::vector<uint8_t> codes(want.first.size()), scales(want.second.size());
  ASSERT_TRUE(dq->download(codes).isOk());
  ASSERT_TRUE(ds->download(scales).isOk());
  EXPECT_EQ(codes, want.first) << what << ": codes";
  EXPECT_EQ(scales, want.second) << what << ": scales";
}

/// Quantizes `x` on the GPU with `r` (`history`: the device state of
/// delayed scaling) and compares with the oracle's `want`.
void expectSame(const QuantRecipe &r, const std::vector<uint16_t> &x,
                int64_t rows, int64_t cols, DeviceBuffer *history,
                const numerics::QuantizedTensor &want,
                const std::string &what) {
  QuantizeTensors t;
  t.history = history ? history->get() : nullptr;
  expectBytes(r, x, rows, cols, t, bytesOf(want), what);
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

// Per-tensor current scaling of one matrix runs in one kernel that holds up
// to kTensorResidentBytes of the input an SM on chip across a grid-wide
// wait (quantize_resident_tensor_body): 4096x4096 and 6144x4096 hold 29
// MiB on the H100 and read the rest again; each call resets the amax
// scratch for the next, which a smaller matrix of smaller values after a
// larger one would show; an input off the 16-byte alignment is walked
// element by element.
TEST(QuantizeGpuOneKernel, PerTensorCurrentMatchesTheOracle) {
  QuantRecipe r;
  r.granularity = Granularity::perTensor();
  const struct {
    Shape2 shape;
    float scale;
    int64_t offset; // elements the input starts past a 16-byte boundary
  } cases[] = {{{4096, 4096}, 8.0f, 0}, {{6144, 4096}, 1.0f, 0},
               {{7, 384}, 0.25f, 0},    {{4096, 4096}, 2.0f, 0},
               {{129, 200}, 0.5f, 1},   {{2048, 4100}, 4.0f, 3}};
  uint64_t seed = 11;
  for (const auto &c : cases) {
    const int64_t rows = c.shape.rows, cols = c.shape.cols;
    const std::string what = std::to_string(rows) + "x" + std::to_string(cols) +
                             " at element offset " + std::to_string(c.offset);
    numerics::RandomSpec spec;
    spec.dist = numerics::Distribution::Outliers;
    spec.scale = c.scale;
    spec.seed = seed++;
    const std::vector<uint16_t> x =
        numerics::randomTensorBF16(rows * cols, spec);
    auto want = numerics::quantizeBF16(x.data(), rows, cols, r);
    ASSERT_TRUE(want.isOk()) << want.message();
    std::vector<uint16_t> padded(size_t(rows * cols + c.offset), 0);
    std::copy(x.begin(), x.end(), padded.begin() + c.offset);
    auto dx = DeviceBuffer::fromHost(padded);
    ASSERT_TRUE(dx.isOk());
    const auto bytes = bytesOf(*want);
    auto dq = DeviceBuffer::alloc(bytes.first.size());
    auto ds = DeviceBuffer::alloc(bytes.second.size());
    ASSERT_TRUE(dq.isOk() && ds.isOk());
    ASSERT_TRUE(dq->fill(0x5A).isOk());
    QuantizeTensors t;
    t.x = static_cast<uint16_t *>(dx->get()) + c.offset;
    t.codes = dq->get();
    t.scales = ds->get();
    Status st = quantize(r, rows, cols, t, nullptr);
    ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
    ASSERT_TRUE(waitStream(nullptr, 60, what).isOk());
    std::vector<uint8_t> codes(bytes.first.size()), scales(bytes.second.size());
    ASSERT_TRUE(dq->download(codes).isOk());
    ASSERT_TRUE(ds->download(scales).isOk());
    EXPECT_EQ(scales, bytes.second) << what << ": scale";
    EXPECT_TRUE(codes == bytes.first) << what << ": codes differ";
  }
}

// Per-tensor current scaling from a given amax (QuantizeTensors::amax, a
// GEMM epilogue's): one pass over x. Against quantizeOnHost with the same
// amax, bit for bit: x's own amax (then also the two-pass result), a
// smaller one (values past it saturate), a larger one, an infinite one
// (NaN scale and codes); a batch with an amax each; f32, power-of-two and
// UE8M0 scales; a matrix past the L2 (the backward walk) and an input off
// the 16-byte alignment (element by element).
TEST(QuantizeGpuGivenAmax, MatchesTheOracleBitForBit) {
  const struct {
    int64_t batch, rows, cols;
    ScaleFormat scale;
    float factor; // the given amax: factor x the matrix's own
    bool unaligned;
  } cases[] = {{1, 7, 384, ScaleFormat::F32, 1.0f, false},
               {1, 129, 200, ScaleFormat::F32, 0.25f, false},
               {3, 129, 200, ScaleFormat::UE8M0, 1.0f, false},
               {2, 64, 4096, ScaleFormat::F32Pow2, 3.0f, false},
               {1, 8192, 4096, ScaleFormat::F32, 1.0f, false},
               {1, 1, 256, ScaleFormat::F32, INFINITY, false},
               {1, 129, 200, ScaleFormat::F32, 1.0f, true}};
  uint64_t seed = 31;
  for (const auto &c : cases) {
    QuantRecipe r;
    r.granularity = Granularity::perTensor();
    r.granularity.scale = c.scale;
    const int64_t n = c.rows * c.cols;
    const std::string what =
        std::to_string(c.batch) + " x " + std::to_string(c.rows) + "x" +
        std::to_string(c.cols) + " " + toString(r.granularity) + ", amax x" +
        std::to_string(c.factor) + (c.unaligned ? ", unaligned" : "");
    numerics::RandomSpec spec;
    spec.dist = numerics::Distribution::Outliers;
    spec.seed = seed++;
    const std::vector<uint16_t> x =
        numerics::randomTensorBF16(c.batch * n, spec);
    std::vector<float> amax(size_t(c.batch));
    for (int64_t b = 0; b < c.batch; ++b) {
      float m = 0;
      for (int64_t i = 0; i < n; ++i)
        m = std::max(m, std::fabs(numerics::bf16ToFloat(x[size_t(b * n + i)])));
      amax[size_t(b)] = m * c.factor;
    }
    QuantizeTensors h;
    h.batch = c.batch;
    h.amax = amax.data();
    const size_t scaleBytes =
        size_t(c.batch) * (c.scale == ScaleFormat::UE8M0 ? 1 : 4);
    std::vector<uint8_t> codes(size_t(c.batch * n)), scales(scaleBytes);
    h.x = x.data();
    h.codes = codes.data();
    h.scales = scales.data();
    Status hs = quantizeOnHost(r, c.rows, c.cols, h);
    ASSERT_TRUE(hs.isOk()) << what << ": " << hs.message();
    if (c.factor == 1.0f && c.batch == 1) { // the two-pass result, too
      auto own = numerics::quantizeBF16(x.data(), c.rows, c.cols, r);
      ASSERT_TRUE(own.isOk()) << own.message();
      ASSERT_EQ(bytesOf(*own), std::make_pair(codes, scales)) << what;
    }
    std::vector<uint16_t> padded(size_t(c.batch * n + 1), 0);
    std::copy(x.begin(), x.end(), padded.begin() + (c.unaligned ? 1 : 0));
    auto dx = DeviceBuffer::fromHost(padded);
    auto da = DeviceBuffer::fromHost(amax);
    auto dq = DeviceBuffer::alloc(codes.size());
    auto ds = DeviceBuffer::alloc(scales.size());
    ASSERT_TRUE(dx.isOk() && da.isOk() && dq.isOk() && ds.isOk());
    ASSERT_TRUE(dq->fill(0x5A).isOk());
    ASSERT_TRUE(ds->fill(0x5A).isOk());
    QuantizeTensors t;
    t.batch = c.batch;
    t.x = static_cast<uint16_t *>(dx->get()) + (c.unaligned ? 1 : 0);
    t.codes = dq->get();
    t.scales = ds->get();
    t.amax = static_cast<const float *>(da->get());
    Status st = quantize(r, c.rows, c.cols, t, nullptr);
    ASSERT_TRUE(st.isOk()) << what << ": " << st.message();
    ASSERT_TRUE(waitStream(nullptr, 60, what).isOk());
    std::vector<uint8_t> gc(codes.size()), gs(scales.size());
    ASSERT_TRUE(dq->download(gc).isOk());
    ASSERT_TRUE(ds->download(gs).isOk());
    EXPECT_EQ(gs, scales) << what << ": scales";
    EXPECT_TRUE(gc == codes) << what << ": codes differ";
  }
}

/// Codes and scales written transposed (the FP8 transpose fused into the
/// quantize): the oracle's quantize, transposed. Ragged rows (a short last
/// block, rows no multiple of 16: the byte stores), columns no multiple of
/// 8 (the lane-per-column path), a stack, and the weight gradients' shape.
class TransposedQuantizeGpu
    : public ::testing::TestWithParam<std::tuple<int64_t, Shape2>> {};

TEST_P(TransposedQuantizeGpu, MatchesTheOracleBitForBit) {
  auto [batch, shape] = GetParam();
  QuantRecipe r;
  r.granularity = Granularity::block(128, 1);
  const int64_t n = shape.rows * shape.cols;
  numerics::RandomSpec spec;
  spec.dist = numerics::Distribution::Outliers;
  const std::vector<uint16_t> x = numerics::randomTensorBF16(batch * n, spec);
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> want;
  for (int64_t b = 0; b < batch; ++b) {
    auto q =
        numerics::quantizeBF16(x.data() + b * n, shape.rows, shape.cols, r);
    ASSERT_TRUE(q.isOk()) << q.message();
    const auto [codes, scales] = bytesOf(numerics::transpose(*q));
    want.first.insert(want.first.end(), codes.begin(), codes.end());
    want.second.insert(want.second.end(), scales.begin(), scales.end());
  }
  QuantizeTensors t;
  t.batch = batch;
  t.transposed = true;
  expectBytes(r, x, shape.rows, shape.cols, t, want,
              std::to_string(batch) + " x " + std::to_string(shape.rows) + "x" +
                  std::to_string(shape.cols) + ", transposed");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposedQuantizeGpu,
    ::testing::Combine(::testing::Values(int64_t(1), int64_t(3)),
                       ::testing::Values(Shape2{1, 256}, Shape2{7, 384},
                                         Shape2{129, 200}, Shape2{300, 37},
                                         Shape2{640, 2048},
                                         Shape2{4096, 7168})));

TEST(QuantizeGpuDelayed, SixStepsOnOneHistoryMatchTheOracle) {
  QuantRecipe r;
  r.granularity = Granularity::perTensor();
  r.mode = ScalingMode::Delayed;
  r.delayed.historyLength = 4;
  auto history = DeviceBuffer::alloc(size_t(amaxHistoryBytes(4)));
  ASSERT_TRUE(history.isOk()) << history.message();
  ASSERT_TRUE(history->fill(0).isOk());
  numerics::AmaxHistory oracle(r.delayed);
  for (int step = 0; step < 6; ++step) {
    numerics::RandomSpec spec;
    spec.seed = uint64_t(step + 1);
    spec.scale = float(1 + step);
    const std::vector<uint16_t> x = numerics::randomTensorBF16(129 * 200, spec);
    auto want = numerics::quantizeBF16(x.data(), 129, 200, r, nullptr, &oracle);
    ASSERT_TRUE(want.isOk()) << want.message();
    expectSame(r, x, 129, 200, &*history, *want,
               "delayed step " + std::to_string(step));
    // The state's bytes too: the oracle writes the kernels' ring layout.
    std::vector<uint8_t> got(size_t(amaxHistoryBytes(4))), expect(got.size());
    ASSERT_TRUE(history->download(got).isOk());
    stateFromHistory(oracle, expect.data(), expect.size());
    EXPECT_EQ(got, expect) << "history state after step " << step;
  }
}

class TransposeGpu
    : public ::testing::TestWithParam<std::tuple<Granularity, Shape2>> {};

TEST_P(TransposeGpu, MatchesTheHostOracleBitForBit) {
  auto [g, shape] = GetParam();
  const int64_t batch = 2, rows = shape.rows, cols = shape.cols;
  QuantRecipe r;
  r.granularity = g;
  // Two quantized matrices, one after the other (codes, then scales).
  std::vector<uint8_t> codes, scales;
  for (int64_t b = 0; b < batch; ++b) {
    numerics::RandomSpec spec;
    spec.seed = uint64_t(b + 11);
    const std::vector<uint16_t> x =
        numerics::randomTensorBF16(rows * cols, spec);
    auto q = numerics::quantizeBF16(x.data(), rows, cols, r);
    ASSERT_TRUE(q.isOk()) << q.message();
    codes.insert(codes.end(), q->codes.begin(), q->codes.end());
    const auto *f = reinterpret_cast<const uint8_t *>(q->scales.data());
    scales.insert(scales.end(), f, f + q->scales.size() * 4);
  }
  std::vector<uint8_t> wantCodes(codes.size()), wantScales(scales.size());
  TransposeTensors h{codes.data(), scales.data(), wantCodes.data(),
                     wantScales.data(), batch};
  Status hs = transposeOnHost(DType::E4M3FN, g, rows, cols, h);
  ASSERT_TRUE(hs.isOk()) << hs.message();

  auto dc = DeviceBuffer::fromHost(codes);
  auto ds = DeviceBuffer::fromHost(scales);
  auto oc = DeviceBuffer::alloc(codes.size());
  auto os = DeviceBuffer::alloc(scales.size());
  ASSERT_TRUE(dc.isOk() && ds.isOk() && oc.isOk() && os.isOk());
  ASSERT_TRUE(oc->fill(0x5A).isOk());
  ASSERT_TRUE(os->fill(0x5A).isOk());
  TransposeTensors t{dc->get(), ds->get(), oc->get(), os->get(), batch};
  const std::string what =
      toString(g) + " on " + std::to_string(rows) + "x" + std::to_string(cols);
  Status s = transpose(DType::E4M3FN, g, rows, cols, t, nullptr);
  ASSERT_TRUE(s.isOk()) << what << ": " << s.message();
  ASSERT_TRUE(waitStream(nullptr, 60, what).isOk());
  std::vector<uint8_t> gotCodes(codes.size()), gotScales(scales.size());
  ASSERT_TRUE(oc->download(gotCodes).isOk());
  ASSERT_TRUE(os->download(gotScales).isOk());
  EXPECT_EQ(gotCodes, wantCodes) << what << ": codes";
  EXPECT_EQ(gotScales, wantScales) << what << ": scales";
}

INSTANTIATE_TEST_SUITE_P(
    Granularities, TransposeGpu,
    ::testing::Combine(::testing::Values(Granularity::block(1, 128),
                                         Granularity::block(128, 128),
                                         Granularity::perTensor(),
                                         Granularity::block(32, 64)),
                       ::testing::Values(Shape2{1, 256}, Shape2{129, 520},
                                         Shape2{512, 4096})));

} // namespace
