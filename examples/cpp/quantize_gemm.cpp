//===- quantize_gemm.cpp - The toolkit's runtime from a C++ program -------===//
//
//   quantize-gemm [M N K]   (default 512 1024 2048)
//
// The DeepSeek-V3 recipe on device buffers: x [M, K] quantized per token in
// 1x128 tiles and w [N, K] in 128x128 blocks (fp8::quantize), then
// D = x w^T in bf16 with the partial sums promoted every 128 K (fp8::gemm),
// all on one stream; D is compared with the FP64 product of the bf16 inputs
// (DeepGEMM's similarity, 1e-3 the bound). Kernels are generated and
// JIT-compiled on first use. Without a GPU it says so and exits 1.
//
//===----------------------------------------------------------------------===//

#include "numerics/Formats.h"
#include "numerics/Metrics.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "runtime/Quantize.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int fail(const fp8::Status &s, const char *what) {
  std::fprintf(stderr, "quantize-gemm: %s: %s\n", what, s.message().c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  int64_t m = 512, n = 1024, k = 2048;
  if (argc == 4) {
    m = std::atoll(argv[1]);
    n = std::atoll(argv[2]);
    k = std::atoll(argv[3]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: quantize-gemm [M N K]\n");
    return 2;
  }
  if (m < 1 || n < 1 || k < 1 || k % 16 != 0) {
    std::fprintf(stderr, "quantize-gemm: expected positive M, N and K, K a "
                         "multiple of 16\n");
    return 2;
  }

  // Inputs on the host: x ~ N(0, 1), w ~ N(0, 1/K), as bf16.
  fp8::numerics::RandomSpec spec;
  const std::vector<uint16_t> x = fp8::numerics::randomTensorBF16(m * k, spec);
  spec.seed = 2;
  spec.scale = float(1.0 / std::sqrt(double(k)));
  const std::vector<uint16_t> w = fp8::numerics::randomTensorBF16(n * k, spec);

  // The recipe: A per token in 1x128 tiles, B in 128x128 blocks, E4M3.
  fp8::GemmRecipe recipe;
  recipe.a.granularity = fp8::Granularity::block(1, 128);
  recipe.b.granularity = fp8::Granularity::block(128, 128);
  fp8::QuantRecipe qa, qb;
  qa.granularity = recipe.a.granularity;
  qb.granularity = recipe.b.granularity;

  // Device buffers (the first allocation finds the GPU, or says why not).
  auto dx = fp8::DeviceBuffer::fromHost(x);
  if (!dx)
    return fail(dx.status(), "cannot use the GPU");
  auto dw = fp8::DeviceBuffer::fromHost(w);
  auto xq = fp8::DeviceBuffer::alloc(size_t(m * k));
  auto wq = fp8::DeviceBuffer::alloc(size_t(n * k));
  auto xs = fp8::DeviceBuffer::alloc(
      size_t(qa.granularity.scaleRows(m) * qa.granularity.scaleCols(k)) * 4);
  auto ws = fp8::DeviceBuffer::alloc(
      size_t(qb.granularity.scaleRows(n) * qb.granularity.scaleCols(k)) * 4);
  auto d = fp8::DeviceBuffer::alloc(size_t(m * n) * 2);
  for (auto *b : {&dw, &xq, &wq, &xs, &ws, &d})
    if (!*b)
      return fail(b->status(), "allocating device memory");

  // Quantize both operands, multiply, all on the default stream.
  fp8::QuantizeTensors tx{dx->get(), fp8::DType::BF16, xq->get(), xs->get()};
  fp8::QuantizeTensors tw{dw->get(), fp8::DType::BF16, wq->get(), ws->get()};
  if (fp8::Status s = fp8::quantize(qa, m, k, tx, nullptr); !s)
    return fail(s, "quantizing x");
  if (fp8::Status s = fp8::quantize(qb, n, k, tw, nullptr); !s)
    return fail(s, "quantizing w");
  fp8::GemmTensors t;
  t.a = xq->get();
  t.scaleA = xs->get();
  t.b = wq->get();
  t.scaleB = ws->get();
  t.d = d->get();
  fp8::GemmReport report;
  if (fp8::Status s = fp8::gemm(recipe, m, n, k, t, nullptr, {}, &report); !s)
    return fail(s, "the GEMM");
  if (fp8::Status s = fp8::waitStream(nullptr, 60, "the GEMM"); !s)
    return fail(s, "running the kernels");

  // D against the FP64 product of the bf16 inputs.
  std::vector<uint16_t> got(size_t(m * n));
  if (fp8::Status s = d->download(got); !s)
    return fail(s, "reading D");
  std::vector<float> xf(x.size()), wf(w.size()), df(got.size());
  // (the reference takes the inputs as floats: bf16 widens exactly)
  for (size_t i = 0; i < x.size(); ++i)
    xf[i] = fp8::numerics::bf16ToFloat(x[i]);
  for (size_t i = 0; i < w.size(); ++i)
    wf[i] = fp8::numerics::bf16ToFloat(w[i]);
  for (size_t i = 0; i < got.size(); ++i)
    df[i] = fp8::numerics::bf16ToFloat(got[i]);
  auto exact = fp8::numerics::referenceGemmUnquantized(
      xf.data(), fp8::Layout::KMajor, wf.data(), fp8::Layout::KMajor, m, n, k,
      nullptr);
  if (!exact)
    return fail(exact.status(), "the FP64 reference");
  const fp8::numerics::ErrorMetrics e =
      fp8::numerics::compare(df.data(), exact->data(), m * n);
  std::printf("quantize-gemm: %lld x %lld x %lld, kernel %s (grid %d, JIT "
              "%.2f s): similarity to the FP64 product %.3g (bound 1e-3)\n",
              (long long)m, (long long)n, (long long)k, report.kernel.c_str(),
              report.grid, report.jitSeconds, e.similarity);
  return e.nonFinite == 0 && e.similarity < 1e-3 ? 0 : 1;
}
