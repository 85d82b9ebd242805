//===- Fp8ConvertGpuTest.cpp - The hardware FP8 conversion, every float ---===//
//
// Runs on the GPU machine (ctest label "gpu", via scripts/gpu-check.sh).
// codegen/kernels/fp8_math.h converts to FP8 on the device with the
// hardware's cvt.rn.satfinite (float_to_fp8) and on the host with the
// integer algorithm (float_to_fp8_bits), which test/codegen/Fp8MathTest.cpp
// holds bit for bit to numerics::floatToFP8, the oracle. Here a kernel
// compares the two on the device for all 2^32 float bit patterns, in both
// formats: zeros, subnormals, every rounding tie, the saturation boundary,
// infinities and every NaN. A single difference fails, naming the first
// input that differs. The same for the rounding to bf16 (round_to: the
// hardware's cvt.rn.bf16x2.f32 on the device, float_to_bf16 on the host).
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/LoadedKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace fp8;

namespace {

const char *kSource = R"(#include "fp8/fp8_math.h"

// The number of inputs on which the hardware and integer conversions differ
// (E4M3 and E5M2 each), and the smallest such bit pattern.
extern "C" __global__ void __launch_bounds__(256)
fp8_convert_every_float(unsigned long long *mismatches, unsigned int *first) {
  using namespace fp8k;
  const unsigned long long stride =
      (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long bad4 = 0, bad5 = 0;
  unsigned int lowest = 0xFFFFFFFFu;
  for (unsigned long long i =
           (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < (1ull << 32); i += stride) {
    const float x = u2f((u32)i);
    const bool d4 = float_to_fp8(x, kE4M3) != float_to_fp8_bits(x, kE4M3);
    const bool d5 = float_to_fp8(x, kE5M2) != float_to_fp8_bits(x, kE5M2);
    bad4 += d4;
    bad5 += d5;
    if ((d4 || d5) && (unsigned int)i < lowest)
      lowest = (unsigned int)i;
  }
  if (bad4)
    atomicAdd(&mismatches[0], bad4);
  if (bad5)
    atomicAdd(&mismatches[1], bad5);
  if (bad4 || bad5)
    atomicMin(first, lowest);
}

// Over every float x (a grid-striding loop): adds to *mismatches the
// number of x on which differs(x) holds, and keeps the smallest such bit
// pattern in *first.
template <class F>
__device__ void count_every_float(F differs, unsigned long long *mismatches,
                                  unsigned int *first) {
  const unsigned long long stride =
      (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long bad = 0;
  unsigned int lowest = 0xFFFFFFFFu;
  for (unsigned long long i =
           (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < (1ull << 32); i += stride) {
    const bool d = differs(fp8k::u2f((fp8k::u32)i));
    bad += d;
    if (d && (unsigned int)i < lowest)
      lowest = (unsigned int)i;
  }
  if (bad) {
    atomicAdd(mismatches, bad);
    atomicMin(first, lowest);
  }
}

// The number of inputs on which round_to(x, kBF16) (the hardware's
// cvt.rn.bf16x2.f32 on the device) and the integer algorithm (float_to_bf16,
// the host's) give different bits, and the smallest.
extern "C" __global__ void __launch_bounds__(256)
bf16_round_every_float(unsigned long long *mismatches, unsigned int *first) {
  using namespace fp8k;
  count_every_float(
      [](float x) {
        return f2u(round_to(x, kBF16)) != f2u(bf16_to_float(float_to_bf16(x)));
      },
      mismatches, first);
}

// For the block amax amaxes[blockIdx.y]: the inputs x with |x| <= amax on
// which quantize_codes (the reciprocal and two FMAs) and quantize_value
// (the division) give different codes, in either format, and the smallest.
extern "C" __global__ void __launch_bounds__(256)
fp8_quantize_scaled_every_float(const float *amaxes,
                                unsigned long long *mismatches,
                                unsigned int *first) {
  using namespace fp8k;
  const float amax = amaxes[blockIdx.y];
  unsigned char unused;
  const float s4 = scale_from_amax(amax, kE4M3, kScaleF32, 0, &unused);
  const float s5 = scale_from_amax(amax, kE5M2, kScaleF32, 0, &unused);
  const ScaleDivisor d4 = scale_divisor(s4), d5 = scale_divisor(s5);
  count_every_float(
      [&](float x) {
        if (!(fp8k::abs(x) <= amax))
          return false;
        // Every byte position of a word: x, -x, -x, x.
        const float xs[4] = {x, neg(x), neg(x), x};
        u32 w4, w5;
        quantize_codes<4>(xs, d4, kE4M3, &w4);
        quantize_codes<4>(xs, d5, kE5M2, &w5);
        bool d = false;
        for (int k = 0; k < 4; ++k)
          d = d || u8(w4 >> (8 * k)) != quantize_value(xs[k], s4, kE4M3) ||
              u8(w5 >> (8 * k)) != quantize_value(xs[k], s5, kE5M2);
        return d;
      },
      mismatches, first);
}

// For the scale scales[blockIdx.y]: the inputs x (every float, NaNs and
// infinities included) on which quantize_codes_unbounded (delayed
// scaling's codes) and quantize_value give different codes, in either
// format, and the smallest.
extern "C" __global__ void __launch_bounds__(256)
fp8_quantize_unbounded_every_float(const float *scales,
                                   unsigned long long *mismatches,
                                   unsigned int *first) {
  using namespace fp8k;
  const float s = scales[blockIdx.y];
  const ScaleDivisor d = scale_divisor(s);
  count_every_float(
      [&](float x) {
        // Beside x: a value inside the fast path's bound, and -x.
        const float xs[4] = {x, s, neg(x), neg(s)};
        u32 w4, w5;
        quantize_codes_unbounded<4>(xs, d, kE4M3, &w4);
        quantize_codes_unbounded<4>(xs, d, kE5M2, &w5);
        bool differ = false;
        for (int k = 0; k < 4; ++k)
          differ = differ ||
                   u8(w4 >> (8 * k)) != quantize_value(xs[k], s, kE4M3) ||
                   u8(w5 >> (8 * k)) != quantize_value(xs[k], s, kE5M2);
        return differ;
      },
      mismatches, first);
}
)";

Expected<const LoadedKernel *> loadConvertKernel(const char *name) {
  return loadKernel(name, [name]() -> Expected<GeneratedKernel> {
    GeneratedKernel g;
    g.name = name;
    g.source = kSource;
    g.arch = Arch::SM90a;
    return g;
  });
}

/// Launches `k` on 8 CTAs of 256 threads per SM along x (the kernels
/// stride over all 2^32 floats) and `gridY` along y.
Status launchOverEveryFloat(const CudaDevice &dev, const LoadedKernel &k,
                            unsigned gridY, void **args) {
  CUlaunchConfig cfg{};
  cfg.gridDimX = unsigned(dev.smCount) * 8;
  cfg.gridDimY = gridY;
  cfg.gridDimZ = 1;
  cfg.blockDimX = 256;
  cfg.blockDimY = cfg.blockDimZ = 1;
  return cuCheck(dev.driver->cuLaunchKernelEx(&cfg, k.function, args, nullptr),
                 "cuLaunchKernelEx");
}

/// The mismatch counters (`counters` of them) and the smallest differing
/// input of the comparison kernel `name` (arguments: counters, first) run
/// over every float; with `params`, once per parameter (blockIdx.y; the
/// kernel's first argument is the parameters).
struct EveryFloatCounts {
  std::vector<uint64_t> bad;
  uint32_t first = 0xFFFFFFFFu;
};
void countOverEveryFloat(const char *name, size_t counters,
                         EveryFloatCounts &out,
                         const std::vector<float> &params = {}) {
  auto dev = CudaDevice::get();
  ASSERT_TRUE(dev.isOk()) << dev.message();
  auto k = loadConvertKernel(name);
  ASSERT_TRUE(k.isOk()) << k.message();
  auto dParams = DeviceBuffer::fromHost(
      params.empty() ? std::vector<float>{0.0f} : params);
  auto counts = DeviceBuffer::fromHost(std::vector<uint64_t>(counters, 0));
  auto first = DeviceBuffer::fromHost(std::vector<uint32_t>{0xFFFFFFFFu});
  ASSERT_TRUE(dParams.isOk() && counts.isOk() && first.isOk());
  void *pp = dParams->get(), *pc = counts->get(), *pf = first->get();
  void *withParams[] = {&pp, &pc, &pf};
  void *args[] = {&pc, &pf};
  ASSERT_TRUE(launchOverEveryFloat(
                  **dev, **k, params.empty() ? 1u : unsigned(params.size()),
                  params.empty() ? args : withParams)
                  .isOk());
  out.bad.assign(counters, 0);
  std::vector<uint32_t> lowest(1);
  ASSERT_TRUE(counts->download(out.bad).isOk());
  ASSERT_TRUE(first->download(lowest).isOk());
  out.first = lowest[0];
}

} // namespace

TEST(Fp8ConvertGpu, HardwareEqualsTheIntegerAlgorithmOnEveryFloat) {
  EveryFloatCounts c;
  ASSERT_NO_FATAL_FAILURE(countOverEveryFloat("fp8_convert_every_float", 2, c));
  EXPECT_EQ(c.bad[0], 0u) << "E4M3: first differing input 0x" << std::hex
                          << c.first;
  EXPECT_EQ(c.bad[1], 0u) << "E5M2: first differing input 0x" << std::hex
                          << c.first;
}

TEST(Fp8ConvertGpu, Bf16RoundingEqualsTheIntegerAlgorithmOnEveryFloat) {
  EveryFloatCounts c;
  ASSERT_NO_FATAL_FAILURE(countOverEveryFloat("bf16_round_every_float", 1, c));
  EXPECT_EQ(c.bad[0], 0u) << "first differing input 0x" << std::hex << c.first;
}

// quantize_codes divides by a block's scale with its reciprocal and two
// FMAs (Markstein's correction) instead of a division per element: for
// the block amaxes below, every input in [-amax, amax] gets the division's
// code. The amaxes: ordinary, ones whose scale is not a power of two in
// every binade, the ends of ScaleDivisor's range (2^-100 * fmt_max and
// beyond: the division) and the largest finite float.
TEST(Fp8ConvertGpu, ScaledQuantizeEqualsTheDivisionOnEveryFloat) {
  std::vector<float> amaxes = {
      1.0f,       448.0f, 3.0f,       0.1f,     7.0f,
      1e-20f,     1e20f,  0x1.8p-90f, 0x1p-92f, 0x1.234p-93f,
      0x1p-95f,   1e-30f, 1e30f,      3.4e38f,  0x1.fffffep+127f,
      0x1.2p-120f};
  for (int e = -60; e <= 60; e += 8)
    amaxes.push_back(std::ldexp(1.0f + float(e + 61) / 127.0f, e));
  EveryFloatCounts c;
  ASSERT_NO_FATAL_FAILURE(
      countOverEveryFloat("fp8_quantize_scaled_every_float", 1, c, amaxes));
  EXPECT_EQ(c.bad[0], 0u) << "first differing input 0x" << std::hex << c.first;
}

// Delayed scaling's codes (quantize_codes_unbounded: the fast path when a
// chunk's values are within 2^16 times the scale, else the division) equal
// quantize_value's on every float, for ordinary scales, scales that are not
// powers of two, and the ends of ScaleDivisor's range and past them.
TEST(Fp8ConvertGpu, UnboundedQuantizeEqualsTheDivisionOnEveryFloat) {
  const std::vector<float> scales = {
      1.0f,       1.0f / 448.0f, 3.0f / 448.0f, 0.1f,        0x1.234p-40f,
      0x1.9p+37f, 0x1p-100f,     0x1p+100f,     0x1.8p-101f, 1e35f};
  EveryFloatCounts c;
  ASSERT_NO_FATAL_FAILURE(
      countOverEveryFloat("fp8_quantize_unbounded_every_float", 1, c, scales));
  EXPECT_EQ(c.bad[0], 0u) << "first differing input 0x" << std::hex << c.first;
}
