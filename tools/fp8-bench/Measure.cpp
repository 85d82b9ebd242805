//===- Measure.cpp - fp8-bench's measurements of one shape ----------------===//

#include "tools/fp8-bench/Measure.h"

#include "tools/fp8-bench/Trace.h"

#include "codegen/Sm90Heuristics.h"
#include "core/RecipePresets.h"
#include "numerics/Random.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace fp8::bench {

using json = nlohmann::json;

Context::Context(const Options &o) : opt(o) {
  dev = check(CudaDevice::get(), "opening the GPU");
  d = dev->driver;
  std::printf("device: %s (%d SMs, cc %d.%d)\n", dev->name.c_str(),
              dev->smCount, dev->ccMajor, dev->ccMinor);
  if (Status s = cuCheck(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                         "cuStreamCreate");
      !s)
    die(s, "stream");
  flushBuf = check(DeviceBuffer::alloc(flushBytes), "flush");
  ws = check(DeviceBuffer::alloc(wsBytes), "workspace");
  if (opt.peers)
    if (Status s = cublasCheck(cublasLtCreate(&lt), "cublasLtCreate"); !s)
      die(s, "cuBLASLt");
  // The granularities of the recipe's preset on sm_90a; gemm() refuses a
  // recipe it cannot run (e.g. K-varying scales without promotion) with a
  // message, before any launch.
  const RecipePreset preset =
      *findRecipePreset(opt.perTensor ? "per-tensor" : "deepseek", Arch::SM90a);
  recipe.a.granularity = preset.a;
  recipe.b.granularity = preset.b;
  recipe.promotionInterval = promotionFromInt(opt.promotion);
  recipe.out = DType::BF16;
  recipe.amaxOut = opt.amax;
}

Context::~Context() {
  if (lt)
    cublasLtDestroy(lt);
}

namespace {

/// Random operands for `sh`: normal FP8 values, scales in [0.005, 0.02].
Operands makeOperands(Context &ctx, const Shape &sh) {
  Operands o;
  const int64_t kb = (sh.k + 127) / 128, nb = (sh.n + 127) / 128;
  o.a = numerics::randomCodes(sh.m * sh.k, DType::E4M3FN, ctx.rng());
  o.b = numerics::randomCodes(sh.n * sh.k, DType::E4M3FN, ctx.rng());
  std::vector<float> saOuter(size_t(kb * sh.m)), saK(size_t(sh.m * kb));
  std::vector<float> sbOuter(size_t(kb * nb)), sbK(size_t(nb * kb));
  for (int64_t i = 0; i < sh.m; ++i)
    for (int64_t j = 0; j < kb; ++j)
      saK[i * kb + j] = saOuter[j * sh.m + i] = ctx.uni(ctx.rng) * 0.01f;
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t j = 0; j < kb; ++j)
      sbK[i * kb + j] = sbOuter[j * nb + i] = ctx.uni(ctx.rng) * 0.01f;
  o.dA = check(DeviceBuffer::fromHost(o.a), "A");
  o.dB = check(DeviceBuffer::fromHost(o.b), "B");
  o.dSaO = check(DeviceBuffer::fromHost(saOuter), "scales");
  o.dSaK = check(DeviceBuffer::fromHost(saK), "scales");
  o.dSbO = check(DeviceBuffer::fromHost(sbOuter), "scales");
  o.dSbK = check(DeviceBuffer::fromHost(sbK), "scales");
  o.dD = check(DeviceBuffer::alloc(size_t(sh.m * sh.n * 2)), "D");
  o.dP = check(DeviceBuffer::alloc(size_t(sh.m * sh.n * 2)), "D");
  o.one = check(DeviceBuffer::fromHost(std::vector<float>{1.0f}), "scale");
  o.t.a = o.dA.get();
  o.t.b = o.dB.get();
  o.t.scaleA = o.dSaO.get();
  o.t.scaleALdOuter = 1; // [K/128][M]: row r, k-block j at j * M + r
  o.t.scaleALdK = sh.m;
  o.t.scaleB = o.dSbK.get();
  if (ctx.opt.perTensor)
    o.t.scaleA = o.t.scaleB = o.one.get(); // the per-tensor peer's scales
  o.t.d = o.dD.get();
  if (ctx.opt.amax) {
    o.amax = check(DeviceBuffer::alloc(4), "D's amax");
    o.t.amaxD = static_cast<float *>(o.amax.get());
  }
  return o;
}

/// Our kernel on `sh`: checked once, then timed; with --trace, its
/// timeline.
void timeOurs(Context &ctx, const Shape &sh, const Operands &ops, Row &row) {
  const GemmRecipe &recipe = ctx.recipe;
  GemmReport rep;
  GemmOptions gopt;
  gopt.tile = ctx.opt.tile;
  if (Status s = gemm(recipe, sh.m, sh.n, sh.k, ops.t, ctx.stream, gopt, &rep);
      !s)
    die(s, "our kernel");
  if (Status s = waitStream(ctx.stream, 60.0, "kernel " + rep.kernel); !s)
    die(s, "our kernel");
  gopt.checkExtents = false; // checked once above
  row.kernel =
      rep.kernel + " grid " + std::to_string(rep.grid) +
      (rep.maxActiveClusters
           ? " (max clusters " + std::to_string(rep.maxActiveClusters) + ")"
           : "") +
      ", tile from the " + rep.tileSource;
  row.ours = ctx.time(ctx.opt.iters, [&] {
    Status s = gemm(recipe, sh.m, sh.n, sh.k, ops.t, ctx.stream, gopt);
    if (!s)
      die(s, "our kernel");
  });
  if (ctx.opt.trace) {
    GemmReport tr;
    if (Status s = gemm(recipe, sh.m, sh.n, sh.k, ops.t, ctx.stream, gopt, &tr);
        !s)
      die(s, "our kernel (trace)");
    std::printf("%lld x %lld x %lld  %s\n", (long long)sh.m, (long long)sh.n,
                (long long)sh.k, tr.kernel.c_str());
    printTrace(tr.trace);
  }
}

/// Every tile of the sweep's grid that the generator accepts
/// (sm90CandidateTiles), timed like ours: the data the heuristic is fitted
/// to. Returns the timings; prints the best next to the heuristic's.
json sweepTiles(Context &ctx, const Shape &sh, const Operands &ops,
                const Row &row) {
  const GemmRecipe &recipe = ctx.recipe;
  json sweep = json::array();
  double best = row.ours;
  std::string bestTile = "heuristic";
  KernelSpec base;
  base.n = sh.n;
  base.k = sh.k;
  base.a = recipe.a;
  base.b = recipe.b;
  base.promotionInterval = recipe.promotionInterval;
  for (const TileConfig &tile :
       sm90CandidateTiles(base, sh.m, ctx.dev->smCount, ctx.opt.sweepGrid)) {
    GemmOptions so;
    so.tile = tile;
    so.checkExtents = false;
    if (!gemm(recipe, sh.m, sh.n, sh.k, ops.t, ctx.stream, so))
      continue;
    double ms = ctx.time(std::max(5, ctx.opt.iters / 3), [&] {
      return gemm(recipe, sh.m, sh.n, sh.k, ops.t, ctx.stream, so);
    });
    sweep.push_back({{"tile", json::parse(toJSON(tile))},
                     {"ms", ms},
                     {"tflops", tflops(sh, ms)}});
    if (ms < best) {
      best = ms;
      bestTile = toJSON(tile);
    }
  }
  std::printf("  sweep: best %.1f TF/s (%s) vs heuristic %.1f TF/s\n",
              tflops(sh, best), bestTile.c_str(), tflops(sh, row.ours));
  return sweep;
}

} // namespace

Row measureShape(Context &ctx, const Shape &sh, json &sweep) {
  Row row;
  row.s = sh;
  Operands ops = makeOperands(ctx, sh);
  timeOurs(ctx, sh, ops, row);
  sweep = json::array();
  if (ctx.opt.sweep)
    sweep = sweepTiles(ctx, sh, ops, row);
  std::vector<uint16_t> ours(size_t(sh.m * sh.n));
  if (Status s = ops.dD.download(ours); !s)
    die(s, "download");
  if (ctx.opt.peers)
    timePeers(ctx, sh, ops, ours, row);
  return row;
}

} // namespace fp8::bench
