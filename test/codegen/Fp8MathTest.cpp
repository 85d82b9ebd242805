//===- Fp8MathTest.cpp - The kernels' arithmetic equals the oracle's ------===//
//
// codegen/kernels/fp8_math.h is the arithmetic of the generated quantize,
// transpose and elementwise kernels; NVRTC compiles it for the GPU, g++
// compiles it here. These tests compare it bit for bit with the CPU oracle
// (numerics/), which FormatsTest compares with cuda_fp8.h:
// conversions over stratified and random bit patterns, scales over every
// format, and whole quantizations (both kernel paths, emulated with the
// kernels' own per-block steps) and delayed-scaling sequences against
// numerics::quantize.
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "codegen/kernels/fp8_delayed.h"
#include "codegen/kernels/fp8_functions.h"
#include "codegen/kernels/fp8_math.h"
#include "numerics/DelayedScaling.h"
#include "numerics/Formats.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

using namespace fp8;
namespace nm = fp8::numerics;

namespace {

float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// Every float whose upper 16 bits take all values and whose lower 16 bits
/// take patterns around the rounding points of bf16 (and, with the upper
/// half, of FP8 and binary16), then random patterns.
template <typename F> void forStratifiedFloats(F f) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x3FFF, 0x4000, 0x7FFF,
                           0x8000, 0x8001, 0xBFFF, 0xC000, 0xFFFF};
  for (uint32_t hi = 0; hi < 0x10000; ++hi)
    for (uint32_t lo : lows)
      f(bitsToFloat((hi << 16) | lo));
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000000; ++i)
    f(bitsToFloat(uint32_t(rng())));
}

int fmtCode(DType t) { return t == DType::E5M2 ? fp8k::kE5M2 : fp8k::kE4M3; }

int scaleCode(ScaleFormat f) {
  return f == ScaleFormat::F32       ? fp8k::kScaleF32
         : f == ScaleFormat::F32Pow2 ? fp8k::kScaleF32Pow2
                                     : fp8k::kScaleUE8M0;
}

} // namespace

TEST(Fp8Math, FloatToFP8MatchesOracle) {
  int64_t checked = 0, bad = 0;
  forStratifiedFloats([&](float x) {
    for (DType fmt : {DType::E4M3FN, DType::E5M2}) {
      const uint8_t want = nm::floatToFP8(x, fmt, nm::Saturation::SatFinite);
      const uint8_t got = fp8k::float_to_fp8(x, fmtCode(fmt));
      if (want != got && bad++ < 5)
        ADD_FAILURE() << "float bits 0x" << std::hex << floatToBits(x)
                      << " fmt " << toString(fmt) << ": oracle 0x" << int(want)
                      << ", kernel 0x" << int(got);
      ++checked;
    }
  });
  EXPECT_EQ(bad, 0) << "of " << checked;
}

TEST(Fp8Math, FP8DecodeMatchesOracle) {
  for (DType fmt : {DType::E4M3FN, DType::E5M2})
    for (int c = 0; c < 256; ++c) {
      const float want = nm::fp8ToFloat(uint8_t(c), fmt);
      const float got = fp8k::fp8_to_float(uint8_t(c), fmtCode(fmt));
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << toString(fmt) << " code " << c;
      else
        EXPECT_EQ(floatToBits(want), floatToBits(got))
            << toString(fmt) << " code " << c;
    }
}

TEST(Fp8Math, BF16AndF16MatchOracle) {
  int64_t bad = 0;
  forStratifiedFloats([&](float x) {
    if (nm::floatToBF16(x) != fp8k::float_to_bf16(x) && bad++ < 5)
      ADD_FAILURE() << "bf16 of 0x" << std::hex << floatToBits(x);
    if (nm::floatToF16(x) != fp8k::float_to_f16(x) && bad++ < 5)
      ADD_FAILURE() << "f16 of 0x" << std::hex << floatToBits(x);
  });
  for (uint32_t b = 0; b < 0x10000; ++b) {
    EXPECT_EQ(floatToBits(nm::bf16ToFloat(uint16_t(b))),
              floatToBits(fp8k::bf16_to_float(uint16_t(b))));
    EXPECT_EQ(floatToBits(nm::f16ToFloat(uint16_t(b))),
              floatToBits(fp8k::f16_to_float(uint16_t(b))))
        << "f16 0x" << std::hex << b;
  }
  EXPECT_EQ(bad, 0);
}

TEST(Fp8Math, UE8M0MatchesOracle) {
  int64_t bad = 0;
  forStratifiedFloats([&](float x) {
    const uint8_t want =
        nm::floatToUE8M0(x, nm::PowerRounding::Up, nm::Saturation::SatFinite);
    if (want != fp8k::float_to_ue8m0_up(x) && bad++ < 5)
      ADD_FAILURE() << "ue8m0 of 0x" << std::hex << floatToBits(x);
  });
  EXPECT_EQ(bad, 0);
  for (int c = 0; c < 256; ++c) {
    const float want = nm::ue8m0ToFloat(uint8_t(c));
    const float got = fp8k::ue8m0_to_float(uint8_t(c));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got));
    else
      EXPECT_EQ(floatToBits(want), floatToBits(got)) << "code " << c;
  }
}

TEST(Fp8Math, ScaleFromAmaxMatchesOracle) {
  std::vector<float> amaxes = {0.0f,      -0.0f,     1.0f,     448.0f,
                               57344.0f,  1e-30f,    1e-45f,   3e38f,
                               0x1p-126f, 0x1p-140f, 0x1p127f, 1.5f,
                               INFINITY,  NAN,       FLT_MAX,  0x1.fffffep-1f};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> expo(-140.0f, 127.0f);
  for (int i = 0; i < 200000; ++i)
    amaxes.push_back(
        std::ldexp(1.0f + float(rng() % 1000000) / 1e6f, int(expo(rng))));
  for (float a : amaxes)
    for (DType fmt : {DType::E4M3FN, DType::E5M2})
      for (ScaleFormat sf :
           {ScaleFormat::F32, ScaleFormat::F32Pow2, ScaleFormat::UE8M0})
        for (int margin : {0, 1, 7, 127}) {
          uint8_t wantCode = 0, gotCode = 0;
          const float want = nm::scaleFromAmax(a, fmt, sf, margin, &wantCode);
          const float got = fp8k::scale_from_amax(
              a, fmtCode(fmt), scaleCode(sf), margin, &gotCode);
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << a;
          } else {
            ASSERT_EQ(floatToBits(want), floatToBits(got))
                << "amax " << a << " " << toString(fmt) << " " << toString(sf)
                << " margin " << margin;
          }
          if (sf == ScaleFormat::UE8M0)
            ASSERT_EQ(wantCode, gotCode) << "amax " << a;
        }
}

// quantize_codes (a block's reciprocal and two FMAs, Markstein's
// correction) gives quantize_value's codes (the division) for every |x| <=
// the amax: random inputs, the inputs next to every FP8 rounding boundary
// of the block's scale (where a quotient one ulp off would change the
// code), and the amax itself. The GPU test (Fp8ConvertGpuTest) covers every
// float for a set of amaxes.
TEST(Fp8Math, ScaledQuantizeEqualsTheDivision) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> expo(-125.0f, 127.0f);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int t = 0; t < 3000; ++t) {
    const float amax =
        std::ldexp(1.0f + float(rng() % 1000000) / 1e6f, int(expo(rng)));
    for (int fmt : {fp8k::kE4M3, fp8k::kE5M2}) {
      uint8_t code;
      const float s =
          fp8k::scale_from_amax(amax, fmt, fp8k::kScaleF32, 0, &code);
      const fp8k::ScaleDivisor d = fp8k::scale_divisor(s);
      std::vector<float> xs = {amax, -amax, 0.0f, -0.0f};
      for (int i = 0; i < 512; ++i)
        xs.push_back(amax * unit(rng));
      // Boundaries: midpoints between neighbouring codes, times the scale.
      for (int c = 0; c < 127; ++c) {
        const float lo = nm::fp8ToFloat(
            uint8_t(c), fmt == fp8k::kE4M3 ? DType::E4M3FN : DType::E5M2);
        const float hi = nm::fp8ToFloat(
            uint8_t(c + 1), fmt == fp8k::kE4M3 ? DType::E4M3FN : DType::E5M2);
        if (!std::isfinite(hi))
          break;
        const float mid = (lo + hi) * 0.5f * s;
        for (float y :
             {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e38f)})
          if (std::fabs(y) <= amax) {
            xs.push_back(y);
            xs.push_back(-y);
          }
      }
      while (xs.size() % 4)
        xs.push_back(0.0f);
      for (size_t i = 0; i < xs.size(); i += 4) {
        uint32_t w;
        fp8k::quantize_codes<4>(&xs[i], d, fmt, &w);
        for (size_t k = 0; k < 4; ++k)
          ASSERT_EQ(uint8_t(w >> (8 * k)),
                    fp8k::quantize_value(xs[i + k], s, fmt))
              << "x " << xs[i + k] << " amax " << amax << " fmt " << fmt;
      }
    }
  }
}

// quantize_codes_unbounded (delayed scaling's codes, the scale made
// before the values were seen) gives quantize_value's codes for any value:
// every bf16 (infinities and NaNs included) and the floats next to the
// fast path's bound (scale * 2^16), times each scale, with a NaN, an
// infinity or an out-of-bound value beside in-bound ones in a word. The
// scales: ordinary, not powers of two, the ends of ScaleDivisor's range and
// past them. The GPU test (Fp8ConvertGpuTest) covers every float.
TEST(Fp8Math, UnboundedQuantizeEqualsTheDivision) {
  std::vector<float> scales = {
      1.0f,      1.0f / 448.0f, 3.0f / 448.0f, 0.1f,   7.0f, 0x1p-100f,
      0x1p+100f, 0x1.8p-101f,   0x1p+101f,     1e-35f, 1e35f};
  for (int e = -90; e <= 90; e += 15)
    scales.push_back(std::ldexp(1.0f + float(e + 91) / 181.0f, e));
  std::vector<float> xs;
  for (uint32_t b = 0; b < 0x10000u; ++b)
    xs.push_back(nm::bf16ToFloat(uint16_t(b)));
  for (float s : scales) {
    const fp8k::ScaleDivisor d = fp8k::scale_divisor(s);
    const float bound = s * 65536.0f;
    for (float y : {bound, std::nextafter(bound, 0.0f),
                    std::nextafter(bound, INFINITY), bound * 0.999f})
      for (float z : {y, -y})
        for (float w : {0.5f * s, -INFINITY, NAN, z})
          xs.insert(xs.end(), {z, w, 1.0f * s, -3.0f * s});
    while (xs.size() % 4)
      xs.push_back(0.0f);
    for (int fmt : {fp8k::kE4M3, fp8k::kE5M2})
      for (size_t i = 0; i < xs.size(); i += 4) {
        uint32_t w;
        fp8k::quantize_codes_unbounded<4>(&xs[i], d, fmt, &w);
        for (size_t k = 0; k < 4; ++k)
          ASSERT_EQ(uint8_t(w >> (8 * k)),
                    fp8k::quantize_value(xs[i + k], s, fmt))
              << "x " << xs[i + k] << " scale " << s << " fmt " << fmt;
      }
    xs.resize(0x10000u);
  }
}

namespace {

/// What the generated kernels compute for one [rows, cols] matrix, with the
/// kernels' per-block steps: the amax as the maximum of abs_bits over the
/// block (any order: the row path's warp and the block path's atomics both
/// take a maximum of unsigned integers), scale_from_amax, quantize_value.
struct KernelResult {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  std::vector<uint8_t> scaleCodes;
};

KernelResult kernelQuantize(const std::vector<float> &x, int64_t rows,
                            int64_t cols, const QuantRecipe &r) {
  const Granularity &g = r.granularity;
  const int64_t br = std::max<int64_t>(Granularity::extent(g.rows, rows), 1);
  const int64_t bc = std::max<int64_t>(Granularity::extent(g.cols, cols), 1);
  const int64_t sr = g.scaleRows(rows), sc = g.scaleCols(cols);
  std::vector<uint32_t> amax(size_t(sr * sc), 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      uint32_t &m = amax[size_t((i / br) * sc + j / bc)];
      m = std::max(m, fp8k::abs_bits(x[size_t(i * cols + j)]));
    }
  KernelResult out;
  out.scales.resize(amax.size());
  out.scaleCodes.resize(amax.size());
  for (size_t b = 0; b < amax.size(); ++b)
    out.scales[b] =
        fp8k::scale_from_amax(fp8k::u2f(amax[b]), fmtCode(r.format),
                              scaleCode(g.scale), 0, &out.scaleCodes[b]);
  out.codes.resize(x.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out.codes[size_t(i * cols + j)] = fp8k::quantize_value(
          x[size_t(i * cols + j)], out.scales[size_t((i / br) * sc + j / bc)],
          fmtCode(r.format));
  return out;
}

std::vector<float> testTensor(int64_t n, uint64_t seed) {
  nm::RandomSpec spec;
  spec.dist = nm::Distribution::Outliers;
  spec.seed = seed;
  std::vector<float> x = nm::randomTensor(n, spec);
  // Zeros, negative zeros, values that underflow, and a block of zeros.
  for (int64_t i = 0; i < n; i += 17)
    x[size_t(i)] = 0.0f;
  for (int64_t i = 5; i < n; i += 23)
    x[size_t(i)] = -0.0f;
  for (int64_t i = 3; i < n; i += 29)
    x[size_t(i)] *= 1e-6f;
  for (int64_t i = 0; i < std::min<int64_t>(n, 40); ++i)
    x[size_t(i)] = 0.0f;
  return x;
}

void expectSameQuantization(const KernelResult &k, const nm::QuantizedTensor &q,
                            const std::string &what) {
  ASSERT_EQ(k.codes.size(), q.codes.size()) << what;
  ASSERT_EQ(k.scales.size(), q.scales.size()) << what;
  for (size_t i = 0; i < q.scales.size(); ++i) {
    if (std::isnan(q.scales[i]))
      ASSERT_TRUE(std::isnan(k.scales[i])) << what << " scale " << i;
    else
      ASSERT_EQ(floatToBits(q.scales[i]), floatToBits(k.scales[i]))
          << what << " scale " << i;
    if (!q.scaleCodes.empty())
      ASSERT_EQ(q.scaleCodes[i], k.scaleCodes[i]) << what << " scale " << i;
  }
  for (size_t i = 0; i < q.codes.size(); ++i)
    ASSERT_EQ(int(q.codes[i]), int(k.codes[i])) << what << " element " << i;
}

} // namespace

TEST(Fp8Math, QuantizeMatchesOracleAtEveryGranularity) {
  const Granularity grans[] = {
      Granularity::perTensor(),
      Granularity::perRow(),
      Granularity::perColumn(),
      Granularity::block(1, 128),
      Granularity::block(128, 128),
      Granularity::mx(),
      Granularity::block(1, 128, ScaleFormat::F32Pow2),
      Granularity::block(128, 128, ScaleFormat::UE8M0),
      Granularity::block(37, 5),
      Granularity::block(Granularity::kWhole, 128),
  };
  const std::pair<int64_t, int64_t> shapes[] = {
      {129, 200}, {300, 31}, {1, 33}, {64, 96}, {2, 1}};
  uint64_t seed = 1;
  for (const Granularity &g : grans)
    for (DType fmt : {DType::E4M3FN, DType::E5M2})
      for (auto [rows, cols] : shapes) {
        QuantRecipe r;
        r.format = fmt;
        r.granularity = g;
        std::vector<float> x = testTensor(rows * cols, seed++);
        nm::QuantizeOptions opts;
        opts.nonFinite = nm::NonFinitePolicy::Propagate;
        auto q = nm::quantize(x.data(), rows, cols, r, nullptr, nullptr, opts);
        ASSERT_TRUE(q.isOk()) << q.message();
        expectSameQuantization(kernelQuantize(x, rows, cols, r), *q,
                               toString(g) + " " + std::string(toString(fmt)) +
                                   " " + std::to_string(rows) + "x" +
                                   std::to_string(cols));
      }
}

TEST(Fp8Math, NonFiniteBlocksMatchThePropagatePolicy) {
  for (const Granularity &g :
       {Granularity::block(1, 128), Granularity::perTensor(),
        Granularity::block(128, 128, ScaleFormat::UE8M0)}) {
    std::vector<float> x = testTensor(256 * 256, 99);
    x[1000] = NAN;
    x[70000 % x.size()] = -INFINITY;
    QuantRecipe r;
    r.granularity = g;
    nm::QuantizeOptions opts;
    opts.nonFinite = nm::NonFinitePolicy::Propagate;
    auto q = nm::quantize(x.data(), 256, 256, r, nullptr, nullptr, opts);
    ASSERT_TRUE(q.isOk()) << q.message();
    expectSameQuantization(kernelQuantize(x, 256, 256, r), *q, toString(g));
  }
}

TEST(Fp8Math, DelayedScalingMatchesAmaxHistory) {
  struct Case {
    int64_t length, interval, margin;
    AmaxAlgo algo;
    ScaleFormat scale;
  };
  const Case cases[] = {{16, 1, 0, AmaxAlgo::Max, ScaleFormat::F32},
                        {4, 1, 1, AmaxAlgo::MostRecent, ScaleFormat::F32},
                        {3, 2, 0, AmaxAlgo::Max, ScaleFormat::F32Pow2},
                        {1, 3, 2, AmaxAlgo::MostRecent, ScaleFormat::F32},
                        {5, 1, 127, AmaxAlgo::Max, ScaleFormat::F32}};
  for (const Case &c : cases) {
    QuantRecipe r;
    r.format = DType::E5M2;
    r.granularity = Granularity::perTensor(c.scale);
    r.mode = ScalingMode::Delayed;
    r.delayed.historyLength = c.length;
    r.delayed.updateInterval = c.interval;
    r.delayed.margin = c.margin;
    r.delayed.algo = c.algo;
    nm::AmaxHistory history(r.delayed);
    std::vector<unsigned char> state(size_t(fp8k::amax_history_bytes(c.length)),
                                     0);
    auto *st = reinterpret_cast<fp8k::AmaxHistoryState *>(state.data());
    auto *values = reinterpret_cast<float *>(st + 1);
    for (int step = 0; step < 12; ++step) {
      std::vector<float> x = testTensor(40 * 50, 1000 + step);
      // Growing and shrinking magnitudes, and a non-finite step.
      for (float &v : x)
        v *= float(1 + (step * 7) % 5);
      if (step == 6)
        x[77] = NAN;
      nm::QuantizeOptions opts;
      opts.nonFinite = nm::NonFinitePolicy::Propagate;
      auto q = nm::quantize(x.data(), 40, 50, r, nullptr, &history, opts);
      ASSERT_TRUE(q.isOk()) << q.message();
      // The kernels: amax (pass 1), the scale through the history (pass 2),
      // the codes (pass 3).
      uint32_t amax = 0;
      for (float v : x)
        amax = std::max(amax, fp8k::abs_bits(v));
      uint8_t code;
      const float s = fp8k::delayed_scale_step(
          st, values, int(c.length), int(c.interval), int(c.margin),
          c.algo == AmaxAlgo::MostRecent ? 1 : 0, amax, fmtCode(r.format),
          scaleCode(c.scale), &code);
      KernelResult k;
      k.scales = {s};
      k.scaleCodes = {code};
      for (float v : x)
        k.codes.push_back(fp8k::quantize_value(v, s, fmtCode(r.format)));
      expectSameQuantization(k, *q, "step " + std::to_string(step));
      // Same history: steps, and the values oldest first.
      ASSERT_EQ(int64_t(st->steps), history.steps());
      ASSERT_EQ(size_t(st->count), history.values().size());
      for (uint32_t i = 0; i < st->count; ++i) {
        const uint32_t at = (st->head + uint32_t(c.length) - st->count + i) %
                            uint32_t(c.length);
        ASSERT_EQ(floatToBits(values[at]),
                  floatToBits(history.values()[size_t(i)]))
            << "step " << step << " value " << i;
      }
    }
  }
}

TEST(Fp8Math, TranscendentalsAreAccurate) {
  double worstExp = 0, worstTanh = 0, worstErf = 0;
  for (double x = -103.0; x < 88.7; x += 0.000731) {
    const float xf = float(x);
    const double want = std::exp(double(xf));
    const double got = fp8k::exp(xf);
    if (want > 1e-37) // normal results: relative error in float ulps
      worstExp = std::max(worstExp, std::fabs(got - want) / (want * 0x1p-23));
  }
  for (double x = -12; x < 12; x += 0.0001) {
    const float xf = float(x);
    worstTanh =
        std::max(worstTanh, std::fabs(fp8k::tanh(xf) - std::tanh(double(xf))));
    worstErf =
        std::max(worstErf, std::fabs(fp8k::erf(xf) - std::erf(double(xf))));
  }
  EXPECT_LE(worstExp, 2.0) << "exp: worst error in ulps";
  EXPECT_LE(worstTanh, 3e-7);
  EXPECT_LE(worstErf, 3e-7);
  EXPECT_EQ(fp8k::exp(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isinf(fp8k::exp(100.0f)));
  EXPECT_TRUE(std::isnan(fp8k::exp(NAN)));
  EXPECT_EQ(fp8k::tanh(20.0f), 1.0f);
  EXPECT_EQ(fp8k::tanh(-20.0f), -1.0f);
  EXPECT_EQ(fp8k::erf(-10.0f), -1.0f);
}

TEST(Fp8Math, MaximumAndMinimumFollowIeee) {
  EXPECT_TRUE(std::isnan(fp8k::maximum(NAN, 1.0f)));
  EXPECT_EQ(fp8k::maxnum(NAN, 1.0f), 1.0f);
  EXPECT_EQ(floatToBits(fp8k::maximum(-0.0f, 0.0f)), 0u);
  EXPECT_EQ(floatToBits(fp8k::minimum(0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(fp8k::minimum(2.0f, -3.0f), -3.0f);
}

TEST(Fp8Math, ProgramRoundsEveryInstructionToItsType) {
  // silu(g) * u in f32, truncated to bf16, from bf16 inputs.
  EwProgram p;
  p.inputs = {DType::BF16, DType::BF16};
  using A = EwArg;
  p.instrs = {{EwOp::Neg, {A::input(0)}, DType::F32},
              {EwOp::Exp, {A::result(0)}, DType::F32},
              {EwOp::Add, {A::constant(1.0f), A::result(1)}, DType::F32},
              {EwOp::Div, {A::input(0), A::result(2)}, DType::F32},
              {EwOp::Mul, {A::result(3), A::input(1)}, DType::F32},
              {EwOp::Convert, {A::result(4)}, DType::BF16}};
  p.result = A::result(5);
  ASSERT_TRUE(checkProgram(p).isOk()) << checkProgram(p).message();
  for (float g : {-3.0f, -0.5f, 0.0f, 0.75f, 2.5f, 10.0f})
    for (float u : {-1.0f, 0.3f, 4.0f}) {
      const float in[2] = {g, u};
      const float silu = fp8k::div(g, fp8k::add(1.0f, fp8k::exp(-g)));
      const float want = nm::bf16ToFloat(nm::floatToBF16(fp8k::mul(silu, u)));
      EXPECT_EQ(floatToBits(evalProgram(p, in)), floatToBits(want));
      EXPECT_NEAR(evalProgram(p, in), g / (1 + std::exp(-g)) * u,
                  0.01 * std::fabs(g * u) + 1e-6);
    }
}

namespace {
template <int64_t R, int64_t C> struct Blocks {
  static constexpr int64_t kBlockRows = R, kBlockCols = C;
};

/// The block path's amax pass (elementwise.cuh, quantize_amax_body) run on
/// the host with its own walk: every (chunk, column) thread walks its rows
/// block by block; the per-block maxima must equal those of the direct
/// element -> block map.
template <class Q> void checkWalk(int64_t batch, int64_t rows, int64_t cols) {
  fp8k::EwParams p{};
  p.batch = batch;
  p.rows = rows;
  p.cols = cols;
  const Granularity g = Granularity::block(Q::kBlockRows, Q::kBlockCols);
  p.scaleRows = g.scaleRows(rows);
  p.scaleCols = g.scaleCols(cols);
  const int64_t br = Q::kBlockRows ? Q::kBlockRows : rows;
  const int64_t bc = Q::kBlockCols ? Q::kBlockCols : cols;
  std::vector<uint32_t> want(size_t(batch * p.scaleRows * p.scaleCols), 0);
  std::vector<uint32_t> got(want.size(), 0);
  auto value = [&](int64_t i) { return uint32_t(i * 2654435761u % 1000003u); };
  for (int64_t r = 0; r < batch * rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t b = r / rows, lr = r % rows;
      uint32_t &m =
          want[size_t((b * p.scaleRows + lr / br) * p.scaleCols + c / bc)];
      m = std::max(m, value(r * cols + c));
    }
  const int64_t total = batch * rows;
  const int64_t ctas = (cols + fp8k::kColsPerCta - 1) / fp8k::kColsPerCta;
  for (int64_t chunk = 0; chunk * fp8k::kRowChunk < total; ++chunk)
    for (int64_t c = 0; c < ctas * fp8k::kColsPerCta; ++c) {
      const bool active = c < cols;
      const int64_t r0 = chunk * fp8k::kRowChunk;
      const int64_t r1 = std::min(total, r0 + fp8k::kRowChunk);
      fp8k::BlockWalk<Q> w(p, r0, c);
      for (int64_t r = r0; r < r1;) {
        const int64_t blk = w.block();
        ASSERT_GE(blk, 0);
        ASSERT_LT(blk, int64_t(got.size()));
        uint32_t m = 0;
        do {
          if (active)
            m = std::max(m, value(r * cols + c));
          w.next();
          ++r;
        } while (r < r1 && !w.startsBlock());
        got[size_t(blk)] = std::max(got[size_t(blk)], m);
      }
    }
  EXPECT_EQ(got, want) << "blocks " << Q::kBlockRows << "x" << Q::kBlockCols
                       << " over " << batch << " x [" << rows << ", " << cols
                       << "]";
}
} // namespace

TEST(Fp8Math, BlockPathWalkMatchesTheScaleGrid) {
  for (auto [batch, rows, cols] :
       {std::tuple<int64_t, int64_t, int64_t>{1, 300, 200},
        {3, 130, 257},
        {2, 64, 1},
        {5, 1, 300},
        {1, 129, 128}}) {
    checkWalk<Blocks<128, 128>>(batch, rows, cols);
    checkWalk<Blocks<0, 0>>(batch, rows, cols);
    checkWalk<Blocks<0, 1>>(batch, rows, cols);
    checkWalk<Blocks<37, 5>>(batch, rows, cols);
    checkWalk<Blocks<1, 0>>(batch, rows, cols);
    checkWalk<Blocks<0, 128>>(batch, rows, cols);
    checkWalk<Blocks<64, 256>>(batch, rows, cols);
  }
}
