//===- GemmAmaxGpuTest.cpp - D's amax from the GEMM's epilogue -----------===//
//
// Runs on the GPU machine (ctest label "gpu"): a GEMM whose recipe asks for
// D's amax (GemmRecipe::amaxOut) writes it from its epilogue, each warp
// joining its part by an atomic max. runGpuCase checks D against the oracle
// as for any GEMM, and the amax bit for bit against the largest magnitude
// of the D the kernel stored. The per-tensor quantize that reads that amax
// (QuantizeTensors::amax) then gives what the oracle's two-pass quantize of
// the stored D gives.
//
//===----------------------------------------------------------------------===//

#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "runtime/Quantize.h"
#include "test/runtime/GpuCheck.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace fp8;

namespace {

const Granularity kTok = Granularity::block(1, 128);
const Granularity kBlk = Granularity::block(128, 128);

} // namespace

// D's amax from the epilogue, bit for bit against the largest magnitude of
// the D the kernel stored, on every way D leaves a tile: TMA stores (one,
// two and four staging rounds, three warpgroups), C by TMA, f32, predicated
// stores, split K, a split tail, a 2x1 cluster with a phantom partner; ragged
// M (1, 7, 129) and N. Rows past M in the last tile hold what an earlier
// stage left: joined in, they would show as a larger amax.
TEST(GemmAmaxGpu, TheEpilogueWritesDsAmax) {
  GemmRecipe r = caseRecipe(kTok, kBlk, 128);
  r.amaxOut = true;
  auto tiled = [](int bm, int bn, int splitK, int tailSplit = 1) {
    TileConfig t;
    t.blockM = bm;
    t.mathWarpgroups = bm / 64;
    t.blockN = bn;
    t.splitK = splitK;
    t.tailSplit = tailSplit;
    t.stages = 4;
    return t;
  };
  for (int64_t m : {1, 7, 129})
    expectCase({r, m, 264, 512});
  expectCase({r, 600, 1001, 256}); // predicated stores
  for (const TileConfig &t :
       {tiled(64, 64, 1), tiled(192, 128, 1), tiled(128, 256, 1),
        tiled(128, 128, 2), tiled(128, 128, 1, 2)})
    expectCase({r, 329, 264, 1024, t});
  TileConfig cluster = tiled(128, 128, 1);
  cluster.clusterM = 2;
  expectCase({r, 600, 1152, 768, cluster}); // an odd tile count
  GemmRecipe acc = r;
  acc.accumulate = true;
  expectCase({acc, 329, 264, 1024, tiled(192, 128, 1)});
  GemmRecipe f32 = caseRecipe(kTok, kBlk, 128, DType::F32);
  f32.amaxOut = true;
  expectCase({f32, 130, 264, 512});
  expectCase({f32, 100, 130, 256});
  GemmRecipe perTensor =
      caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0);
  perTensor.amaxOut = true;
  expectCase({perTensor, 129, 4096, 1024});
}

// With no rows D is empty and its amax 0: the call writes that without a
// kernel.
TEST(GemmAmaxGpu, AnEmptyDsAmaxIsZero) {
  GemmRecipe r = caseRecipe(kTok, kBlk, 128);
  r.amaxOut = true;
  auto b = DeviceBuffer::alloc(264 * 512);
  auto sb = DeviceBuffer::alloc(3 * 4 * 4);
  auto amax = DeviceBuffer::alloc(4);
  ASSERT_TRUE(b.isOk() && sb.isOk() && amax.isOk());
  ASSERT_TRUE(amax->fill(0x7F).isOk());
  GemmTensors t;
  t.b = b->get();
  t.scaleB = sb->get();
  t.amaxD = static_cast<float *>(amax->get());
  Status s = gemm(r, 0, 264, 512, t, nullptr);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::vector<uint32_t> bits(1, 1);
  ASSERT_TRUE(amax->download(bits).isOk());
  EXPECT_EQ(bits[0], 0u);
}

// The path the amax is for: a GEMM writes D and its amax, the per-tensor
// quantize of D on the same stream reads the amax instead of computing it
// (one read of D, not two). Its codes and scale are the oracle's per-tensor
// quantize of the D the GEMM stored, bit for bit; ragged M and N, scales of
// every format.
TEST(GemmAmaxGpu, TheQuantizeOfDReadsItsAmax) {
  const GemmRecipe r = [] {
    GemmRecipe g =
        caseRecipe(Granularity::perTensor(), Granularity::perTensor(), 0);
    g.amaxOut = true;
    return g;
  }();
  const struct {
    int64_t m, n, k;
    ScaleFormat scale;
  } cases[] = {{129, 264, 512, ScaleFormat::F32},
               {7, 1001, 256, ScaleFormat::UE8M0},
               {4096, 4096, 1024, ScaleFormat::F32Pow2}};
  uint64_t seed = 5;
  for (const auto &c : cases) {
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) +
                             "x" + std::to_string(c.k);
    const std::vector<uint8_t> a =
        numerics::randomCodes(c.m * c.k, DType::E4M3FN, seed++);
    const std::vector<uint8_t> b =
        numerics::randomCodes(c.n * c.k, DType::E4M3FN, seed++);
    const std::vector<float> sa = {0.5f}, sb = {0.03125f};
    auto da = DeviceBuffer::fromHost(a);
    auto db = DeviceBuffer::fromHost(b);
    auto dsa = DeviceBuffer::fromHost(sa);
    auto dsb = DeviceBuffer::fromHost(sb);
    auto dd = DeviceBuffer::alloc(size_t(c.m * c.n) * 2);
    auto damax = DeviceBuffer::alloc(4);
    auto dq = DeviceBuffer::alloc(size_t(c.m * c.n));
    auto dscale = DeviceBuffer::alloc(4);
    ASSERT_TRUE(da.isOk() && db.isOk() && dsa.isOk() && dsb.isOk() &&
                dd.isOk() && damax.isOk() && dq.isOk() && dscale.isOk());
    ASSERT_TRUE(damax->fill(0x7F).isOk());
    ASSERT_TRUE(dq->fill(0x5A).isOk());
    ASSERT_TRUE(dscale->fill(0x5A).isOk());
    GemmTensors t;
    t.a = da->get();
    t.b = db->get();
    t.scaleA = dsa->get();
    t.scaleB = dsb->get();
    t.d = dd->get();
    t.amaxD = static_cast<float *>(damax->get());
    Status g = gemm(r, c.m, c.n, c.k, t, nullptr);
    ASSERT_TRUE(g.isOk()) << what << ": " << g.message();
    QuantRecipe q;
    q.granularity = Granularity::perTensor();
    q.granularity.scale = c.scale;
    QuantizeTensors qt;
    qt.x = dd->get();
    qt.codes = dq->get();
    qt.scales = dscale->get();
    qt.amax = static_cast<const float *>(damax->get());
    Status s = quantize(q, c.m, c.n, qt, nullptr);
    ASSERT_TRUE(s.isOk()) << what << ": " << s.message();
    ASSERT_TRUE(waitStream(nullptr, 60, what).isOk());
    std::vector<uint16_t> d(size_t(c.m * c.n));
    std::vector<uint8_t> got(d.size()), gotScale(4);
    ASSERT_TRUE(dd->download(d).isOk());
    ASSERT_TRUE(dq->download(got).isOk());
    ASSERT_TRUE(dscale->download(gotScale).isOk());
    auto want = numerics::quantizeBF16(d.data(), c.m, c.n, q);
    ASSERT_TRUE(want.isOk()) << what << ": " << want.message();
    std::vector<uint8_t> wantScale(4);
    if (c.scale == ScaleFormat::UE8M0)
      wantScale = {want->scaleCodes[0]};
    else
      std::memcpy(wantScale.data(), want->scales.data(), 4);
    gotScale.resize(wantScale.size());
    EXPECT_EQ(gotScale, wantScale) << what << ": scale";
    EXPECT_TRUE(got == want->codes) << what << ": codes differ";
  }
}
