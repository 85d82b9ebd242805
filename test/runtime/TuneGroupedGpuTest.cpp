//===- TuneGroupedGpuTest.cpp - fp8::tuneGemm on the MoE grouped GEMMs ----===//
//
// Runs on the GPU machine (ctest label "gpu"): tuneGemm times the candidate
// tiles of a grouped GEMM of each form (contiguous, masked, along K with C)
// on a narrow grid, every candidate that the grouped kernel builds runs,
// the winner agrees with the CPU oracle on its first group's corner, and
// the result is keyed as fp8::groupedGemm looks it up (a masked GEMM at
// the rows a group is expected to hold).
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaDriver.h"
#include "runtime/Tuner.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

KernelSpec grouped(GemmKind kind) {
  KernelSpec s;
  s.arch = Arch::SM90a;
  s.kind = kind;
  s.groups = 4;
  s.n = 512;
  s.k = 1024;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = kind == GemmKind::GroupedK ? Granularity::block(1, 128)
                                               : Granularity::block(128, 128);
  if (kind == GemmKind::GroupedK) {
    s.out = DType::F32;
    s.accumulate = true;
  }
  return s;
}

void expectTuned(const KernelSpec &spec, int64_t m, int64_t keyedAt) {
  TuneOptions o;
  o.iters = 5; // a test of the mechanism, not of the measurement
  o.grid = Sm90TileGrid{};
  o.grid.widths = {64, 128};
  Expected<TuneResult> r = tuneGemm(spec, m, o);
  ASSERT_TRUE(r.isOk()) << toString(spec.kind) << ": " << r.message();
  EXPECT_GT(r->candidates.size(), 1u);
  for (const TunedTile &c : r->candidates)
    EXPECT_TRUE(c.error.empty()) << toJSON(c.tile) << ": " << c.error;
  EXPECT_LE(r->oracleDiff, kTuneOracleBound);
  EXPECT_GT(r->oracleRows, 0);
  EXPECT_GT(r->heuristicMs, 0.0);
  EXPECT_GT(r->tflops, 0.0);
  EXPECT_EQ(r->spec.m, keyedAt);
  EXPECT_EQ(r->spec.kind, spec.kind);
  std::printf("[tune] %s %lld: %.1f TF/s with %s (heuristic %.4f ms, best "
              "%.4f ms), oracle difference %.1e on %lldx%lld\n",
              std::string(toString(spec.kind)).c_str(), (long long)m, r->tflops,
              toJSON(r->spec.tile).c_str(), r->heuristicMs, r->ms,
              r->oracleDiff, (long long)r->oracleRows,
              (long long)r->oracleCols);
}

} // namespace

TEST(TuneGroupedGpu, EachFormIsTimedCheckedAndKeyedAsTheRuntimeLooksItUp) {
  auto dev = CudaDevice::get();
  ASSERT_TRUE(dev.isOk()) << dev.message();
  // Contiguous: 1000 rows over 4 groups (250 each).
  expectTuned(grouped(GemmKind::GroupedContiguous), 1000, 1000);
  // Masked: slabs of 256 rows, 16 expected in each group.
  KernelSpec masked = grouped(GemmKind::GroupedMasked);
  masked.m = 16;
  expectTuned(masked, 256, 16);
  // Along K: D [4, 384, 512], K's 8 blocks 2 a group, accumulated into C.
  expectTuned(grouped(GemmKind::GroupedK), 384, 384);
}
