//===- GemmAmaxGpuTest.cpp - D's amax from the GEMM's epilogue -----------===//
//
// Runs on the GPU machine (ctest label "gpu"): a GEMM whose recipe asks for
// D's amax (GemmRecipe::amaxOut) writes it from its epilogue, each warp
// joining its part by an atomic max. runGpuCase checks D against the oracle
// as for any GEMM, and the amax bit for bit against the largest magnitude
// of the D the kernel stored.
//
//===----------------------------------------------------------------------===//

#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "test/runtime/GpuCheck.h"

#include <gtest/gtest.h>

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
