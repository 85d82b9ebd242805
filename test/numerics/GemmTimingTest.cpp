//===- GemmTimingTest.cpp - The reference must be fast enough to use ------===//
//
// The bar: a 4096x7168x2048 check in seconds, not minutes. DeepSeek's
// recipe (1x128 activations, 128x128 weights, promotion every 128) with
// the default thread pool; the bound is generous (ctest may run other tests
// beside it on the same two cores) but an unblocked or unvectorized kernel
// would still miss it by far.
//
//===----------------------------------------------------------------------===//

#include "numerics/GemmKernels.h"
#include "numerics/Parallel.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

using namespace fp8;
using namespace fp8::numerics;

TEST(ReferenceGemmTiming, DeepSeekShape4096x7168x2048) {
  const int64_t M = 4096, N = 7168, K = 2048;
  std::vector<float> a = randomTensor(M * K, {Distribution::Normal, 1, 1});
  std::vector<float> b = randomTensor(N * K, {Distribution::Normal, 1, 2});
  QuantRecipe ra, rb;
  ra.granularity = Granularity::block(1, 128);
  rb.granularity = Granularity::block(128, 128);
  auto t0 = std::chrono::steady_clock::now();
  auto qa = quantize(a.data(), M, K, ra);
  auto qb = quantize(b.data(), N, K, rb);
  ASSERT_TRUE(qa && qb);
  auto t1 = std::chrono::steady_clock::now();
  ReferenceGemmOptions o;
  o.promotionInterval = 128;
  auto d = referenceGemm(*qa, Layout::KMajor, *qb, Layout::KMajor, nullptr, o);
  auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(d) << d.message();
  double quant = std::chrono::duration<double>(t1 - t0).count();
  double gemm = std::chrono::duration<double>(t2 - t1).count();
  std::printf("quantize A and B: %.2f s; reference GEMM: %.2f s (%.0f "
              "GFLOP/s, %d threads, %s kernels)\n",
              quant, gemm, 2.0 * M * N * K / gemm / 1e9, numThreads(),
              detail::cpuHasAvx2Fma() ? "AVX2+FMA" : "portable");
  RecordProperty("gemm_seconds", std::to_string(gemm));
  EXPECT_LT(gemm, 60.0);
  // A sanity value: D is not all zeros.
  double s = 0;
  for (size_t i = 0; i < d->size(); i += 997)
    s += std::fabs((*d)[i]);
  EXPECT_GT(s, 0.0);
}
