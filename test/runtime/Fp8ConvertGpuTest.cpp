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
// input that differs.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/LoadedKernels.h"

#include <gtest/gtest.h>

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
)";

} // namespace

TEST(Fp8ConvertGpu, HardwareEqualsTheIntegerAlgorithmOnEveryFloat) {
  auto dev = CudaDevice::get();
  ASSERT_TRUE(dev.isOk()) << dev.message();
  auto k =
      loadKernel("fp8_convert_every_float", []() -> Expected<GeneratedKernel> {
        GeneratedKernel g;
        g.name = "fp8_convert_every_float";
        g.source = kSource;
        g.arch = Arch::SM90a;
        return g;
      });
  ASSERT_TRUE(k.isOk()) << k.message();
  auto counts = DeviceBuffer::fromHost(std::vector<uint64_t>{0, 0});
  auto first = DeviceBuffer::fromHost(std::vector<uint32_t>{0xFFFFFFFFu});
  ASSERT_TRUE(counts.isOk() && first.isOk());
  const CudaDriver &d = *(*dev)->driver;
  void *pc = counts->get(), *pf = first->get();
  void *args[] = {&pc, &pf};
  CUlaunchConfig cfg{};
  cfg.gridDimX = unsigned((*dev)->smCount) * 8;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 256;
  cfg.blockDimY = cfg.blockDimZ = 1;
  ASSERT_TRUE(cuCheck(d.cuLaunchKernelEx(&cfg, (*k)->function, args, nullptr),
                      "cuLaunchKernelEx")
                  .isOk());
  std::vector<uint64_t> bad(2);
  std::vector<uint32_t> lowest(1);
  ASSERT_TRUE(counts->download(bad).isOk());
  ASSERT_TRUE(first->download(lowest).isOk());
  EXPECT_EQ(bad[0], 0u) << "E4M3: first differing input 0x" << std::hex
                        << lowest[0];
  EXPECT_EQ(bad[1], 0u) << "E5M2: first differing input 0x" << std::hex
                        << lowest[0];
}
