//===- HostOracleTest.cpp - The runtime's entry points on host memory -----===//
//
// fp8::quantizeOnHost (runtime/HostOracle.h) with the codes and scales
// written transposed: bit for bit the untransposed quantize followed by
// fp8::transposeOnHost, on ragged shapes (a short last block of rows,
// columns no multiple of 16) and a batch, for both FP8 formats; refused
// exactly where fp8::quantize refuses it, with a message naming
// `transposed` and nothing written. Outputs are poisoned first, so an
// unwritten element fails.
//
//===----------------------------------------------------------------------===//

#include "runtime/HostOracle.h"

#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

using namespace fp8;

namespace {

constexpr uint8_t kPoison = 0xA5;

struct Shape2 {
  int64_t rows, cols;
};

/// Bytes of the scales of `batch` [rows, cols] matrices at granularity g.
size_t scaleBytes(const Granularity &g, int64_t rows, int64_t cols,
                  int64_t batch) {
  return size_t(batch * g.scaleRows(rows) * g.scaleCols(cols) *
                (g.scale == ScaleFormat::UE8M0 ? 1 : 4));
}

/// Codes and scales of one quantize or transpose, poisoned.
struct Outputs {
  std::vector<uint8_t> codes, scales;
  Outputs(size_t codeBytes, size_t scaleBytes)
      : codes(codeBytes, kPoison), scales(scaleBytes, kPoison) {}
};

using Param = std::tuple<DType, Granularity, int64_t, Shape2>;

class TransposedQuantizeOnHost : public ::testing::TestWithParam<Param> {};

/// "e4m3fn 128x1 b2 129x2048": the format, granularity, batch and shape.
std::string describe(const Param &p) {
  const auto &[format, g, batch, shape] = p;
  return std::string(toString(format)) + " " + toString(g) + " b" +
         std::to_string(batch) + " " + std::to_string(shape.rows) + "x" +
         std::to_string(shape.cols);
}

/// How gtest (and so ctest's test list) prints a parameter.
[[maybe_unused]] void PrintTo(const Param &p, std::ostream *os) {
  *os << describe(p);
}

/// e4m3fn_128x1_b2_129x2048.
std::string paramName(const ::testing::TestParamInfo<Param> &info) {
  std::string name = describe(info.param);
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

TEST_P(TransposedQuantizeOnHost, IsTheQuantizeThenTheTransposeBitForBit) {
  const auto [format, g, batch, shape] = GetParam();
  const auto [rows, cols] = shape;
  QuantRecipe r;
  r.format = format;
  r.granularity = g;
  numerics::RandomSpec spec;
  spec.dist = numerics::Distribution::Outliers;
  spec.seed = uint64_t(rows * 7 + cols);
  const size_t n = size_t(batch * rows * cols);
  const std::vector<uint16_t> x = numerics::randomTensorBF16(int64_t(n), spec);
  const size_t sb = scaleBytes(g, rows, cols, batch);

  QuantizeTensors t;
  t.x = x.data();
  t.batch = batch;
  Outputs plain(n, sb);
  t.codes = plain.codes.data();
  t.scales = plain.scales.data();
  const Status ps = quantizeOnHost(r, rows, cols, t);
  ASSERT_TRUE(ps.isOk()) << ps.message();

  Outputs want(n, sb);
  TransposeTensors tt{plain.codes.data(), plain.scales.data(),
                      want.codes.data(), want.scales.data(), batch};
  const Status ts = transposeOnHost(format, g, rows, cols, tt);
  ASSERT_TRUE(ts.isOk()) << ts.message();

  Outputs got(n, sb);
  t.codes = got.codes.data();
  t.scales = got.scales.data();
  t.transposed = true;
  const Status gs = quantizeOnHost(r, rows, cols, t);
  ASSERT_TRUE(gs.isOk()) << gs.message();
  EXPECT_EQ(got.codes, want.codes) << "codes";
  EXPECT_EQ(got.scales, want.scales) << "scales";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposedQuantizeOnHost,
    ::testing::Combine(
        ::testing::Values(DType::E4M3FN, DType::E5M2),
        ::testing::Values(Granularity::block(128, 1),
                          Granularity::block(32, 1, ScaleFormat::UE8M0)),
        ::testing::Values(int64_t(1), int64_t(2)),
        ::testing::Values(Shape2{1, 8}, Shape2{7, 136}, Shape2{129, 8},
                          Shape2{129, 2048}, Shape2{300, 136},
                          Shape2{300, 2048})),
    paramName);

TEST(QuantizeOnHost, RefusesTransposedWhereTheKernelsDo) {
  const int64_t rows = 129, cols = 136;
  const std::vector<uint16_t> x =
      numerics::randomTensorBF16(rows * cols, numerics::RandomSpec{});
  std::vector<uint8_t> history(size_t(amaxHistoryBytes(16)), 0);
  QuantRecipe tiles;
  tiles.granularity = Granularity::block(1, 128);
  QuantRecipe columns;
  columns.granularity = Granularity::perColumn();
  QuantRecipe delayed;
  delayed.granularity = Granularity::perTensor();
  delayed.mode = ScalingMode::Delayed;
  for (const QuantRecipe &r : {tiles, columns, delayed}) {
    const std::string what = toString(r.granularity);
    Outputs out(size_t(rows * cols), scaleBytes(r.granularity, rows, cols, 1));
    QuantizeTensors t;
    t.x = x.data();
    t.codes = out.codes.data();
    t.scales = out.scales.data();
    t.transposed = true;
    if (r.mode == ScalingMode::Delayed)
      t.history = history.data();
    const Status s = quantizeOnHost(r, rows, cols, t);
    ASSERT_FALSE(s.isOk()) << what;
    EXPECT_NE(s.message().find("transposed"), std::string::npos)
        << what << ": " << s.message();
    // The same rule as the GPU entry point's.
    EXPECT_EQ(s.message(), checkQuantizeArgs(r, rows, cols, t).message());
    EXPECT_EQ(out.codes, std::vector<uint8_t>(out.codes.size(), kPoison))
        << what;
    // Untransposed, the same call is accepted.
    t.transposed = false;
    const Status plain = quantizeOnHost(r, rows, cols, t);
    EXPECT_TRUE(plain.isOk()) << what << ": " << plain.message();
  }
}

} // namespace
