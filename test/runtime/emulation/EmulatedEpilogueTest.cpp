//===- EmulatedEpilogueTest.cpp - The quantizing epilogue, on the CPU -----===//
//
// The sm_90a GEMM's quantizing epilogue (codegen/kernels/gemm_quantize.cuh:
// a warpgroup's finished tile rounded, paired, run through the program and
// quantized along the rows, its codes stored by the quads after two
// exchanges) cannot run here as part of its GEMM (wgmma, TMA). Its code
// can: EmitKernels.cpp writes, for each GEMM spec of epilogueSpecs, the
// Epi and EpiProg the GEMM's translation unit holds (emitEpilogueSource)
// with the header and an entry point, the build compiles them against the
// CUDA emulator, and this test hands every warpgroup of a ragged GEMM
// result the accumulator fragments the wgmma layout gives its threads
// (PTX ISA 9.7.15.5.1) and compares the codes, the scales and the scales'
// mirror with the CPU oracle's: evalEpilogue, then numerics::quantize, as
// PlanOracle runs a GEMM step with an epilogue. What this cannot show: the
// kernel around it (the accumulators' values, the registers ptxas gives
// it), which the NVRTC compile matrix (Sm90EpilogueCompile) and the GPU
// tests (PlanVerifyGpu) cover.
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "core/KernelSpec.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "test/runtime/emulation/CudaEmulatorRuntime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace fp8;

namespace {

struct EmulatedEpilogue {
  const char *spec;
  void (*quantize)(unsigned char *codes, long long ld, void *scales,
                   long long ld_scales, void *mirror, int mirror_rows,
                   int mirror_cols, int cols, const float *res, int row0,
                   int row_end, int col0, int lane, int warp);
};

#include "epilogues.inc"

/// A GEMM's result with the scales applied, [m, n]: outliers, zeros,
/// negative zeros, tiny values, a NaN where `nan` asks for one.
std::vector<float> gemmResult(int64_t m, int64_t n, uint64_t seed, bool nan) {
  numerics::RandomSpec spec;
  spec.dist = numerics::Distribution::Outliers;
  spec.seed = seed;
  std::vector<float> d = numerics::randomTensor(m * n, spec);
  for (int64_t i = 0; i < m * n; ++i) {
    if (i % 13 == 0)
      d[size_t(i)] = 0.0f;
    if (i % 17 == 3)
      d[size_t(i)] = -0.0f;
    if (i % 11 == 5)
      d[size_t(i)] *= 1e-5f;
  }
  if (nan && m > 2)
    d[size_t(2 * n + n / 3)] = NAN;
  return d;
}

struct Quantized {
  std::vector<uint8_t> codes, scales, mirror;
};

/// The oracle's codes and scales, and its scales in the mirror's layout
/// (scale (r, c) at r + c * pitch).
Quantized oracle(const KernelSpec &s, const std::vector<float> &d, int64_t m,
                 int64_t pitch) {
  const GemmEpilogue &e = *s.epilogue;
  const int64_t cols = e.outCols(s.n);
  const std::vector<float> h = evalEpilogue(e, s.out, d.data(), m, s.n);
  QuantRecipe q;
  q.format = e.format;
  q.granularity = e.granularity;
  numerics::QuantizeOptions o;
  o.nonFinite = numerics::NonFinitePolicy::Propagate; // as the kernels do
  auto r = numerics::quantize(h.data(), m, cols, q, nullptr, nullptr, o);
  EXPECT_TRUE(r.isOk()) << r.message();
  Quantized out;
  out.codes = r->codes;
  const bool ue8m0 = e.granularity.scale == ScaleFormat::UE8M0;
  const size_t es = ue8m0 ? 1 : 4;
  const int64_t sc = e.granularity.scaleCols(cols);
  out.scales.resize(size_t(m * sc) * es);
  out.mirror.assign(size_t(sc * pitch) * es, 0xA5);
  for (int64_t i = 0; i < m * sc; ++i) {
    const uint8_t *v =
        ue8m0 ? &r->scaleCodes[size_t(i)]
              : reinterpret_cast<const uint8_t *>(&r->scales[size_t(i)]);
    std::memcpy(&out.scales[size_t(i) * es], v, es);
    const int64_t row = i / sc, c = i % sc;
    std::memcpy(&out.mirror[size_t(row + c * pitch) * es], v, es);
  }
  return out;
}

/// The epilogue run as the GEMM runs it: a CTA of one warpgroup per
/// 64-row slab and tile of BLOCK_N columns; each thread holds the values of
/// its accumulator fragments (rows and columns past the result: zero, as
/// TMA fills them).
Quantized emulated(const EmulatedEpilogue &k, const KernelSpec &s,
                   const std::vector<float> &d, int64_t m, int64_t pitch) {
  const GemmEpilogue &e = *s.epilogue;
  const int64_t n = s.n, cols = e.outCols(n);
  const int bn = s.tile.blockN;
  const bool ue8m0 = e.granularity.scale == ScaleFormat::UE8M0;
  const size_t es = ue8m0 ? 1 : 4;
  const int64_t sc = e.granularity.scaleCols(cols);
  Quantized out;
  // 0xA5: a pattern no code or scale of these inputs has everywhere, so a
  // byte left unwritten shows.
  out.codes.assign(size_t(m * cols), 0xA5);
  out.scales.assign(size_t(m * sc) * es, 0xA5);
  out.mirror.assign(size_t(sc * pitch) * es, 0xA5);
  const unsigned tiles = unsigned((n + bn - 1) / bn);
  const unsigned slabs = unsigned((m + 63) / 64);
  cudaemu::launch({tiles, slabs, 1}, {128, 1, 1}, [&] {
    const int tid = int(cudaemu::tIdx.x), lane = tid % 32, warp = tid / 32;
    const int64_t n0 = int64_t(cudaemu::bIdx.x) * bn;
    const int64_t row0 = int64_t(cudaemu::bIdx.y) * 64;
    std::vector<float> res(size_t(bn / 2));
    for (int i = 0; i < bn / 2; ++i) {
      const int64_t row = row0 + warp * 16 + lane / 4 + 8 * ((i >> 1) & 1);
      const int64_t col = n0 + 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
      res[size_t(i)] = row < m && col < n ? d[size_t(row * n + col)] : 0.0f;
    }
    k.quantize(out.codes.data(), cols, out.scales.data(), sc, out.mirror.data(),
               1, int(pitch), int(cols), res.data(), int(row0), int(m),
               int(e.pairBlock > 0 ? n0 / 2 : n0), lane, warp);
  });
  return out;
}

/// The first index where `got` and `want` differ in `es`-byte elements.
int64_t firstDifference(const std::vector<uint8_t> &got,
                        const std::vector<uint8_t> &want, size_t es) {
  if (got.size() != want.size())
    return 0;
  for (size_t i = 0; i < got.size(); i += es)
    if (std::memcmp(&got[i], &want[i], es) != 0)
      return int64_t(i / es);
  return -1;
}

class EmulatedEpilogueTest
    : public ::testing::TestWithParam<std::tuple<size_t, int64_t>> {};

TEST_P(EmulatedEpilogueTest, MatchesTheOracleBitForBit) {
  auto [index, m] = GetParam();
  const EmulatedEpilogue &k = kEpilogues[index];
  Expected<KernelSpec> parsed = kernelSpecFromJSON(k.spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const KernelSpec s = *parsed;
  ASSERT_TRUE(s.epilogue.has_value());
  const int64_t pitch = (m + 3) / 4 * 4;
  const std::vector<float> d =
      gemmResult(m, s.n, 31 * index + uint64_t(m), /*nan=*/m == 129);
  const Quantized want = oracle(s, d, m, pitch);
  const Quantized got = emulated(k, s, d, m, pitch);
  const size_t es = s.epilogue->granularity.scale == ScaleFormat::UE8M0 ? 1 : 4;
  const std::string what = s.kernelName() + " at M = " + std::to_string(m);
  EXPECT_EQ(firstDifference(got.codes, want.codes, 1), -1) << what << ", codes";
  EXPECT_EQ(firstDifference(got.scales, want.scales, es), -1)
      << what << ", scales";
  EXPECT_EQ(firstDifference(got.mirror, want.mirror, es), -1)
      << what << ", the scales' mirror (its padding unwritten)";
}

// M: one row, part of one slab, two slabs and a row (with a NaN), a whole
// slab.
INSTANTIATE_TEST_SUITE_P(
    AllEpilogues, EmulatedEpilogueTest,
    ::testing::Combine(::testing::Range(size_t(0), std::size(kEpilogues)),
                       ::testing::Values(int64_t(1), int64_t(7), int64_t(129),
                                         int64_t(64))),
    [](const auto &info) {
      return "epilogue" + std::to_string(std::get<0>(info.param)) + "_m" +
             std::to_string(std::get<1>(info.param));
    });

} // namespace
