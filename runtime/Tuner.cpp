//===- Tuner.cpp - Tile configurations measured on the GPU ----------------===//

#include "runtime/Tuner.h"

#include "codegen/Gemm.h"
#include "core/Env.h"
#include "numerics/Formats.h"
#include "numerics/Random.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "runtime/GroupedGemm.h"
#include "runtime/HostOracle.h"
#include "runtime/KernelCache.h"
#include "runtime/KernelTiming.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

namespace fp8 {

namespace {

/// The recipe of a spec, as fp8::gemm's GemmRecipe overload and the host
/// oracle take it.
GemmRecipe recipeOf(const KernelSpec &s) {
  GemmRecipe r;
  r.a = s.a;
  r.b = s.b;
  r.promotionInterval = s.promotionInterval;
  r.out = s.out;
  r.accumulate = s.accumulate;
  return r;
}

/// A GEMM's operands on the host and the device: FP8 codes of N(0, 1)
/// values, scales in [0.005, 0.02] (UE8M0: 2^-7 .. 2^-6), C (an
/// accumulating GEMM's) in [-1, 1), and a grouped GEMM's group tensor
/// (tuneGroups).
struct Operands {
  std::vector<uint8_t> a, b, scaleA, scaleB, c; ///< host copies
  std::vector<int32_t> groups;
  DeviceBuffer dA, dB, dScaleA, dScaleB, dC, dD, dGroups;
  GroupedGemmTensors t;
};

bool isGrouped(const KernelSpec &s) { return s.kind != GemmKind::Dense; }

/// The rows a masked GEMM's groups hold when timed: those the tile is
/// chosen for (groupedTileRows), at most max_m = m.
int64_t maskedRows(const KernelSpec &s, int64_t m) {
  return std::min(groupedTileRows(s, m), m);
}

} // namespace

std::vector<int32_t> tuneGroups(const KernelSpec &s, int64_t m) {
  const int64_t g = s.groups;
  std::vector<int32_t> v;
  if (s.kind == GemmKind::GroupedMasked) {
    v.assign(size_t(g), int32_t(maskedRows(s, m)));
    return v;
  }
  const bool alongK = s.kind == GemmKind::GroupedK;
  const int64_t units = alongK ? s.k / 128 : m, unit = alongK ? 128 : 1;
  for (int64_t i = 0; i <= g; ++i)
    v.push_back(int32_t(unit * ((i * units + g - 1) / g)));
  return v;
}

namespace {

/// The useful FLOPs of a timed run: the rows and the K the groups hold.
double flopsOf(const KernelSpec &s, int64_t m, const Operands &o) {
  double rows = double(m), k = double(s.k);
  if (s.kind == GemmKind::GroupedMasked)
    rows = double(s.groups) * double(maskedRows(s, m));
  if (s.kind == GemmKind::GroupedK)
    k = double(o.groups.back());
  return 2.0 * rows * double(s.n) * k;
}

/// C of an accumulating GEMM: U[-1, 1) in the output type (bf16 from a
/// table of values, as numerics::randomCodes, f32 drawn each).
std::vector<uint8_t> randomC(int64_t count, DType out, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<uint8_t> bytes(size_t(count) * sizeOf(out));
  if (out == DType::F32) {
    for (int64_t i = 0; i < count; ++i) {
      const float v = uni(rng);
      std::memcpy(bytes.data() + i * 4, &v, 4);
    }
    return bytes;
  }
  std::vector<uint16_t> table(4096);
  for (uint16_t &h : table)
    h = out == DType::BF16 ? numerics::floatToBF16(uni(rng))
                           : numerics::floatToF16(uni(rng));
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + i * 2, &table[rng() & 4095], 2);
  return bytes;
}

std::vector<uint8_t> randomScales(int64_t count, ScaleFormat f,
                                  std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> uni(0.005f, 0.02f);
  std::vector<uint8_t> out;
  if (f == ScaleFormat::UE8M0) {
    for (int64_t i = 0; i < count; ++i)
      out.push_back(uint8_t(127 - 7 + (rng() & 1)));
    return out;
  }
  out.resize(size_t(count) * 4);
  for (int64_t i = 0; i < count; ++i) {
    float v = uni(rng);
    if (f == ScaleFormat::F32Pow2)
      v = std::exp2(std::round(std::log2(v)));
    std::memcpy(out.data() + i * 4, &v, 4);
  }
  return out;
}

/// Scale layouts as a plan hands them to its GEMMs (runtime/plan/
/// PlanScaleMirror.h), so that the kernel takes them by TMA where it can:
/// A's 1x128 f32 scales K-block-major, [K/128][pad4(M)]; B's f32 block
/// scales [N/Ro][pad4(K/128)]. Others packed, [rows][cols].
struct ScaleLayout {
  int64_t outer = 0, pitch = 0; ///< the tensor as [outer][pitch]
  int64_t ldOuter = 0, ldK = 0; ///< GemmTensors' strides (0: packed)
};

int64_t pad4(int64_t v) { return (v + 3) / 4 * 4; }

ScaleLayout scaleLayout(const Granularity &g, int64_t rows, int64_t k,
                        bool isA) {
  const int64_t r = g.scaleRows(rows), c = g.scaleCols(k);
  if (g.scale != ScaleFormat::UE8M0 && isA && g.rows == 1 && g.cols == 128)
    return {c, pad4(r), 1, pad4(r)};
  if (g.scale != ScaleFormat::UE8M0 && !isA && !g.isPerTensor() && g.rows > 1 &&
      g.cols % 128 == 0)
    return {r, pad4(c), pad4(c), 1};
  return {r, c, 0, 0};
}

/// Random operands of `s` with m rows of A (a grouped GEMM: all groups'
/// rows; masked, each slab's; along K, D's rows), stacked as
/// fp8::groupedGemm takes them: masked A, and B along M, one matrix a
/// group, their scales one group's after the other.
Expected<Operands> makeOperands(const KernelSpec &s, int64_t m) {
  std::mt19937_64 rng(7);
  Operands o;
  const Granularity &ga = s.a.granularity, &gb = s.b.granularity;
  const ScaleLayout la = scaleLayout(ga, m, s.k, true);
  ScaleLayout lb = scaleLayout(gb, s.n, s.k, false);
  // Along K, B's 1x128 scales as the plans hand them over (the scales of
  // its FP8 transpose's input): [K/128][N], read a k-block at a time.
  if (s.kind == GemmKind::GroupedK && gb.scale != ScaleFormat::UE8M0 &&
      gb.rows == 1 && gb.cols == 128)
    lb = {gb.scaleCols(s.k), pad4(s.n), 1, pad4(s.n)};
  const bool grouped = isGrouped(s);
  const bool stackA = s.kind == GemmKind::GroupedMasked;
  const bool stackB = grouped && s.kind != GemmKind::GroupedK;
  const int64_t slabsA = stackA ? s.groups : 1;
  const int64_t slabsB = stackB ? s.groups : 1;
  const int64_t dRows =
      grouped && s.kind != GemmKind::GroupedContiguous ? s.groups * m : m;
  o.a = numerics::randomCodes(slabsA * m * s.k, s.a.format, rng());
  o.b = numerics::randomCodes(slabsB * s.n * s.k, s.b.format, rng());
  o.scaleA = randomScales(slabsA * la.outer * la.pitch, ga.scale, rng);
  o.scaleB = randomScales(slabsB * lb.outer * lb.pitch, gb.scale, rng);
  auto up = [](DeviceBuffer &dst, const std::vector<uint8_t> &v,
               const char *what) -> Status {
    auto b = DeviceBuffer::fromHost(v);
    if (!b)
      return b.status().withContext(std::string("uploading ") + what);
    dst = std::move(*b);
    return Status::ok();
  };
  FP8_RETURN_IF_ERROR(up(o.dA, o.a, "A"));
  FP8_RETURN_IF_ERROR(up(o.dB, o.b, "B"));
  FP8_RETURN_IF_ERROR(up(o.dScaleA, o.scaleA, "A's scales"));
  FP8_RETURN_IF_ERROR(up(o.dScaleB, o.scaleB, "B's scales"));
  if (s.accumulate) {
    o.c = randomC(dRows * s.n, s.out, rng);
    FP8_RETURN_IF_ERROR(up(o.dC, o.c, "C"));
    o.t.c = o.dC.get();
  }
  if (grouped) {
    o.groups = tuneGroups(s, m);
    std::vector<uint8_t> bytes(o.groups.size() * 4);
    std::memcpy(bytes.data(), o.groups.data(), bytes.size());
    FP8_RETURN_IF_ERROR(up(o.dGroups, bytes, "the group tensor"));
    o.t.groups = static_cast<const int32_t *>(o.dGroups.get());
  }
  auto d = DeviceBuffer::alloc(size_t(dRows * s.n * sizeOf(s.out)));
  if (!d)
    return d.status().withContext("allocating D");
  o.dD = std::move(*d);
  o.t.a = o.dA.get();
  o.t.b = o.dB.get();
  o.t.scaleA = o.dScaleA.get();
  o.t.scaleALdOuter = la.ldOuter;
  o.t.scaleALdK = la.ldK;
  o.t.scaleB = o.dScaleB.get();
  o.t.scaleBLdOuter = lb.ldOuter;
  o.t.scaleBLdK = lb.ldK;
  o.t.d = o.dD.get();
  return o;
}

/// The winner's output on its first rows and columns against the oracle's
/// (gemmOnHost) on the same operands: DeepGEMM's similarity difference. A
/// grouped GEMM's corner is its first group's (the first rows of A, of its
/// slab, or of D along the first group's K; B's first matrix), a dense
/// GEMM of its own.
Status checkAgainstOracle(const KernelSpec &spec, int64_t m, const Operands &o,
                          TuneResult &r) {
  const Granularity &ga = spec.a.granularity, &gb = spec.b.granularity;
  int64_t rowsHeld = m, k = spec.k;
  if (spec.kind == GemmKind::GroupedContiguous)
    rowsHeld = o.groups[1];
  else if (spec.kind == GemmKind::GroupedMasked)
    rowsHeld = o.groups[0];
  else if (spec.kind == GemmKind::GroupedK)
    k = o.groups[1];
  // Whole scale blocks: the operands' first rows keep their scales' first
  // rows, so the corner is a GEMM of its own.
  const int64_t rows =
      std::min<int64_t>(rowsHeld, std::max<int64_t>(64, ga.rows));
  const int64_t cols =
      std::min<int64_t>(spec.n, std::max<int64_t>(256, gb.rows));
  std::vector<uint8_t> dev(o.dD.size());
  FP8_RETURN_IF_ERROR(o.dD.download(dev.data(), dev.size()));
  std::vector<uint8_t> host(size_t(rows * cols * sizeOf(spec.out)));
  GemmTensors t;
  t.a = o.a.data();
  t.lda = spec.k;
  t.scaleA = o.scaleA.data();
  t.b = o.b.data();
  t.ldb = spec.k;
  t.scaleB = o.scaleB.data();
  if (spec.accumulate) {
    t.c = o.c.data(); // the corner of C, its rows spec.n apart
    t.ldc = spec.n;
  }
  t.d = host.data();
  // The scale tensors keep the device's strides: the corner's scales are
  // the first rows of each (packed ones: their row pitch).
  t.scaleALdOuter =
      o.t.scaleALdOuter ? o.t.scaleALdOuter : ga.scaleCols(spec.k);
  t.scaleALdK = o.t.scaleALdOuter ? o.t.scaleALdK : 1;
  t.scaleBLdOuter =
      o.t.scaleBLdOuter ? o.t.scaleBLdOuter : gb.scaleCols(spec.k);
  t.scaleBLdK = o.t.scaleBLdOuter ? o.t.scaleBLdK : 1;
  FP8_RETURN_IF_ERROR(
      gemmOnHost(recipeOf(spec), rows, cols, k, t)
          .withContext("the oracle's GEMM on the winner's corner"));
  auto value = [&](const std::vector<uint8_t> &v, int64_t i) -> double {
    if (spec.out == DType::F32) {
      float f;
      std::memcpy(&f, v.data() + i * 4, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, v.data() + i * 2, 2);
    return spec.out == DType::BF16 ? numerics::bf16ToFloat(h)
                                   : numerics::f16ToFloat(h);
  };
  double xy = 0, xx = 0, yy = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double x = value(dev, i * spec.n + j),
                   y = value(host, i * cols + j);
      xy += x * y;
      xx += x * x;
      yy += y * y;
    }
  r.oracleRows = rows;
  r.oracleCols = cols;
  r.oracleDiff = xx + yy > 0 ? 1 - 2 * xy / (xx + yy) : 0;
  if (!(r.oracleDiff <= kTuneOracleBound))
    return errorf("the fastest tile (", toJSON(r.spec.tile),
                  ") differs from the oracle by ", r.oracleDiff,
                  " on the first ", rows, "x", cols, " outputs (bound ",
                  kTuneOracleBound, ")");
  return Status::ok();
}

} // namespace

std::vector<TileConfig> tuneCandidates(const KernelSpec &spec, int64_t m,
                                       int smCount,
                                       const TuneOptions &options) {
  KernelSpec s = spec;
  s.m = m;
  const TileConfig heuristic = selectConfig(s, smCount).tile;
  std::vector<TileConfig> tiles{heuristic};
  auto add = [&](const TileConfig &t) {
    if (std::find(tiles.begin(), tiles.end(), t) != tiles.end())
      return;
    KernelSpec c = s;
    c.tile = t;
    if (checkGemmSpec(c).isOk())
      tiles.push_back(t);
  };
  const int clusters[][2] = {{1, 1}, {1, 2}, {2, 1}};
  // With one band of tile rows both rasterisations visit the tiles in the
  // same order (tile_coords, codegen/kernels/sm90_common.cuh): the same
  // kernel twice, whose difference in time is noise (docs/results/
  // h200-2026-12-05-fit/README.md). Timed once, as the heuristic chose.
  const bool oneBand = spec.kind == GemmKind::Dense &&
                       (m + heuristic.blockM - 1) / heuristic.blockM == 1;
  for (Raster raster : {Raster::AlongN, Raster::AlongM})
    for (int tail : {1, 2, 4})
      for (const auto &c : clusters) {
        if (!options.neighbours || (oneBand && raster != heuristic.raster))
          break;
        TileConfig t = heuristic;
        t.raster = raster;
        t.tailSplit = t.splitK > 1 ? 1 : tail;
        t.clusterM = c[0];
        t.clusterN = c[1];
        add(t);
      }
  for (const TileConfig &t : sm90CandidateTiles(s, m, smCount, options.grid))
    add(t);
  return tiles;
}

Status compileCandidates(const KernelSpec &spec, int64_t m,
                         std::vector<TunedTile> &tiles, const TuneOptions &o) {
  FP8_RETURN_IF_ERROR(env::checkEnvironment());
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min(
      tiles.size(), size_t(o.compileThreads > 0 ? o.compileThreads : int(hw)));
  std::atomic<size_t> next{0}, done{0};
  auto work = [&] {
    for (size_t i; (i = next++) < tiles.size();) {
      KernelSpec s = spec;
      s.m = m;
      s.tile = tiles[i].tile;
      Expected<GeneratedKernel> g = emitGemm(s);
      Status st = g.status();
      if (g) {
        auto c = KernelCache::global().get(*g);
        st = c.status();
      }
      if (!st.isOk())
        tiles[i].error = st.message();
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back(work);
  // The calling thread reports progress while the pool works.
  while (o.progress && done < tiles.size()) {
    o.progress({"compile", done.load(), tiles.size()});
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (std::thread &t : pool)
    t.join();
  if (o.progress)
    o.progress({"compile", tiles.size(), tiles.size()});
  return Status::ok();
}

Status checkTunable(const KernelSpec &spec) {
  if (spec.arch != Arch::SM90a || spec.epilogue ||
      spec.a.layout != Layout::KMajor || spec.b.layout != Layout::KMajor)
    return errorf("fp8-tune times sm_90a GEMMs (dense or grouped) with "
                  "K-major operands and no epilogue; found ",
                  spec.kernelName());
  if (spec.kind == GemmKind::GroupedK && spec.k < 128)
    return errorf("expected K >= 128 for a K-grouped GEMM (its groups hold "
                  "whole 128-wide K blocks), found ",
                  spec.k);
  return Status::ok();
}

Expected<TuneResult> tuneGemm(const KernelSpec &spec, int64_t m,
                              const TuneOptions &options) {
  FP8_RETURN_IF_ERROR(checkTunable(spec));
  if (m < 1 || spec.n < 1 || spec.k < 1)
    return errorf("expected a positive shape, found ", m, "x", spec.n, "x",
                  spec.k);
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  const CudaDevice &cd = **dev;
  const CudaDriver &d = *cd.driver;
  TuneResult r;
  r.spec = spec;
  // The M the tile is chosen for (a masked GEMM's expected rows): the
  // heuristic's, the candidates' and the database entry's.
  const int64_t hint = isGrouped(spec) ? groupedTileRows(spec, m) : m;
  r.spec.m = hint;
  r.heuristicTile = selectConfig(r.spec, cd.smCount).tile;
  std::vector<TunedTile> tiles;
  for (const TileConfig &t : tuneCandidates(spec, hint, cd.smCount, options))
    tiles.push_back({t});
  FP8_RETURN_IF_ERROR(compileCandidates(spec, hint, tiles, options));

  auto ops = makeOperands(r.spec, m);
  if (!ops)
    return ops.status();
  auto flush = DeviceBuffer::alloc(size_t(256) << 20);
  if (!flush)
    return flush.status().withContext("the L2 flush buffer");
  CUstream stream = nullptr;
  FP8_RETURN_IF_ERROR(cuCheck(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                              "cuStreamCreate"));
  const GemmRecipe recipe = recipeOf(r.spec);
  size_t best = tiles.size();
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (options.progress)
      options.progress({"time", i, tiles.size()});
    TunedTile &c = tiles[i];
    if (!c.error.empty())
      continue;
    GemmOptions go;
    go.tile = c.tile;
    auto launch = [&]() -> Status {
      if (isGrouped(r.spec))
        return groupedGemm(r.spec, m, ops->t, stream, go);
      return gemm(recipe, m, r.spec.n, r.spec.k, ops->t, stream, go);
    };
    Status first = launch();
    if (first.isOk())
      first = waitStream(stream, 60, "the first run");
    if (!first.isOk()) {
      c.error = first.message();
      continue;
    }
    go.checkExtents = false; // checked by the first run
    for (int w = 1; w < options.warmup; ++w)
      FP8_RETURN_IF_ERROR(launch());
    std::vector<float> runs;
    KernelTiming timing;
    timing.runs = std::max(1, options.iters);
    if (options.flushL2) {
      timing.flush = flush->ptr();
      timing.flushBytes = flush->size();
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto t = timeKernel(d, stream, timing, launch);
      if (!t)
        return t.status();
      const double spread =
          percentileOf(*t, 0.9) / std::max(1e-9, percentileOf(*t, 0.1));
      if (runs.empty() || spread < c.spread) {
        runs = *t;
        c.spread = spread;
      }
      if (spread <= kTuneSpreadLimit)
        break;
    }
    c.ms = percentileOf(runs, 0.5);
    if (c.tile == r.heuristicTile)
      r.heuristicMs = c.ms;
    if (best == tiles.size() || c.ms < tiles[best].ms)
      best = i;
  }
  if (options.progress)
    options.progress({"time", tiles.size(), tiles.size()});
  d.cuStreamDestroy(stream);
  r.candidates = tiles;
  if (best == tiles.size())
    return errorf("no candidate tile ran for ", m, "x", spec.n, "x", spec.k,
                  " (", tiles.size(), " tried; the first error: ",
                  tiles.empty() ? "none" : tiles.front().error, ")");
  r.spec.tile = tiles[best].tile;
  r.ms = tiles[best].ms;
  r.tflops = flopsOf(r.spec, m, *ops) / (r.ms * 1e9);
  // The winner's output, again, for the oracle.
  GemmOptions go;
  go.tile = r.spec.tile;
  FP8_RETURN_IF_ERROR(
      isGrouped(r.spec) ? groupedGemm(r.spec, m, ops->t, nullptr, go)
                        : gemm(recipe, m, spec.n, spec.k, ops->t, nullptr, go));
  FP8_RETURN_IF_ERROR(waitStream(nullptr, 60, "the winner's run"));
  FP8_RETURN_IF_ERROR(checkAgainstOracle(r.spec, m, *ops, r));
  return r;
}

TuningEntry tuningEntry(const TuneResult &r, const TuningDevice &device,
                        const std::string &who) {
  char day[16];
  const std::time_t t = std::time(nullptr);
  std::strftime(day, sizeof(day), "%Y-%m-%d", std::gmtime(&t));
  TuningEntry e;
  e.spec = r.spec;
  e.tflops = r.tflops;
  e.note = who + " " + day;
  e.device = device;
  e.generator = tuningGeneratorVersion();
  return e;
}

Status tuneOnFirstUse(const std::string &dbPath, const TuneOptions &options) {
  std::error_code ec;
  const bool exists = !dbPath.empty() && std::filesystem::exists(dbPath, ec);
  if (exists)
    FP8_RETURN_IF_ERROR(setTuningDatabase(dbPath));
  else if (!dbPath.empty())
    FP8_RETURN_IF_ERROR(setTuningDatabase(""));
  // The tuner reports on stderr; a progress callback would write over it.
  TuneOptions o = options;
  o.progress = nullptr;
  setFirstUseTuner([dbPath,
                    o](const KernelSpec &spec,
                       int64_t m) -> Expected<std::optional<TuningEntry>> {
    if (!checkTunable(spec).isOk())
      return std::optional<TuningEntry>();
    auto dev = CudaDevice::get();
    if (!dev)
      return dev.status();
    const std::string shape = std::to_string(m) + "x" + std::to_string(spec.n) +
                              "x" + std::to_string(spec.k);
    std::fprintf(stderr, "fp8: tuning %s (%s) on first use\n", shape.c_str(),
                 spec.kernelName().c_str());
    const auto t0 = std::chrono::steady_clock::now();
    Expected<TuneResult> r = tuneGemm(spec, m, o);
    if (!r)
      return r.status();
    TuningEntry e = tuningEntry(*r, tuningDevice(**dev), "tuned on first use");
    if (!dbPath.empty())
      FP8_RETURN_IF_ERROR(
          TuningDb::update(dbPath, {e})
              .withContext("merging the entry into '" + dbPath + "'"));
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    std::fprintf(stderr,
                 "fp8: tuned %s: %.1f TF/s with %s (%.3fx the heuristic's "
                 "tile; %zu candidates, %.1f s)%s%s\n",
                 shape.c_str(), r->tflops, toJSON(r->spec.tile).c_str(),
                 r->heuristicMs > 0 ? r->heuristicMs / r->ms : 0.0,
                 r->candidates.size(), s,
                 dbPath.empty() ? "" : ", merged into ", dbPath.c_str());
    return std::optional<TuningEntry>(std::move(e));
  });
  return Status::ok();
}

void stopTuningOnFirstUse() { setFirstUseTuner(nullptr); }

} // namespace fp8
