//===- Gemm.cpp - The runtime's scaled FP8 GEMM entry point ---------------===//

#include "runtime/Gemm.h"
#include "codegen/Gemm.h"
#include "core/Env.h"
#include "runtime/CudaDriver.h"
#include "runtime/Sm90Launch.h"

#include <nvrtc.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace fp8 {

namespace {

/// A tile chosen for a problem, and where from.
struct Chosen {
  TileConfig tile;
  const char *source = "heuristic";
};

std::mutex gConfigMutex;
std::unordered_map<std::string, Chosen> gConfigs;
/// The tuning database (guarded by gConfigMutex): read from FP8_TUNING_DB
/// at the first selection, or set by setTuningDatabase.
bool gDbRead = false;
std::optional<TuningDb> gDb;

Status readTuningDb(const std::string &path) {
  gDb.reset();
  gDbRead = true;
  if (path.empty())
    return Status::ok();
  Expected<TuningDb> db = TuningDb::load(path);
  if (!db)
    return db.status();
  if (const std::string m = db->staleMessage("'" + path + "'"); !m.empty())
    std::fprintf(stderr, "fp8: %s\n", m.c_str());
  gDb = std::move(*db);
  return Status::ok();
}

/// The tuning database's tile for `spec` at M = m: an entry of this GPU
/// (any GPU when `device` is null) with the same recipe, N, K and M bucket
/// whose tile the generator still accepts. fp8-tune times GEMMs without a
/// quantizing epilogue, whose tiles hold no such work: none for those.
std::optional<TileConfig> tunedTile(const KernelSpec &spec, int64_t m,
                                    const TuningDevice *device) {
  if (!gDb || spec.epilogue)
    return std::nullopt;
  std::optional<TuningDb::Match> match = gDb->lookup(spec, m, device);
  if (!match || match->n != spec.n || match->k != spec.k ||
      tuningMBucket(match->m) != tuningMBucket(m))
    return std::nullopt;
  KernelSpec s = spec;
  s.tile = match->tile;
  if (!checkGemmSpec(s).isOk())
    return std::nullopt;
  return match->tile;
}

/// The runtime device's identity in the tuning database, made once.
const TuningDevice &deviceIdentity(const CudaDevice &dev) {
  static const TuningDevice id = tuningDevice(dev);
  return id;
}

/// Tune on first use (setFirstUseTuner): the tuner, guarded by
/// gConfigMutex. A tuning runs under gTuneMutex, one at a time, and
/// without gConfigMutex: the tuner's own launches and its oracle check
/// select tiles. Lock order: gTuneMutex, then gConfigMutex.
FirstUseTuner gTuner;
std::atomic<bool> gTunerSet{false};
std::mutex gTuneMutex;
/// Problems (M bucketed) whose tuning failed; guarded by gTuneMutex.
std::unordered_set<std::string> gTuneFailed;

/// Where a launch goes: the device (null: no GPU at hand, a spec asked
/// for without launching) and the stream.
struct LaunchSite {
  const CudaDevice *device = nullptr;
  CUstream stream = nullptr;
};

enum class TuneGate { Off, Now, Deferred };

/// Whether a launch at `site` tunes its problem now (gConfigMutex held).
TuneGate tuneGate(const LaunchSite &site) {
  if (!gTuner || !site.device)
    return TuneGate::Off;
  // A capture would record the tuner's launches, and its synchronizations
  // would end the capture: wait for an uncaptured launch. A stream the
  // driver cannot answer for is not tuned on either.
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (site.device->driver->cuStreamIsCapturing(site.stream, &status) !=
          CUDA_SUCCESS ||
      status != CU_STREAM_CAPTURE_STATUS_NONE)
    return TuneGate::Deferred;
  return TuneGate::Now;
}

/// The tile remembered for the problem, else the database's (remembered
/// when chosen with the GPU at hand and `remember`: another GPU's entries
/// do not count for later launches). gConfigMutex held.
std::optional<Chosen> knownTile(const KernelSpec &spec, int64_t m,
                                const TuningDevice *device,
                                const std::string &key, bool remember = true) {
  if (auto it = gConfigs.find(key); it != gConfigs.end())
    return it->second;
  if (std::optional<TileConfig> t = tunedTile(spec, m, device)) {
    Chosen c{*t, "tuning database"};
    if (device && remember)
      gConfigs.emplace(key, c);
    return c;
  }
  return std::nullopt;
}

/// The tile for `spec` (M set to m) when the caller gives none: the one
/// chosen before for this problem, else the tuning database's, else one
/// tuned now (first use), else the heuristic's for `smCount` SMs.
/// `deferred` is set when the tuning waits for an uncaptured launch.
Expected<Chosen> chooseTile(const KernelSpec &spec, int64_t m, int smCount,
                            const LaunchSite &site, bool *deferred) {
  const TuningDevice *device =
      site.device ? &deviceIdentity(*site.device) : nullptr;
  const std::string key = spec.problemKey();
  // The tile check needs a plausible tile; the heuristic then only
  // proposes configurations that pass it.
  auto heuristic = [&] {
    return Chosen{selectConfig(spec, smCount).tile, "heuristic"};
  };
  FirstUseTuner tuner;
  {
    std::lock_guard<std::mutex> lock(gConfigMutex);
    if (!gDbRead)
      FP8_RETURN_IF_ERROR(readTuningDb(env::tuningDb()));
    if (std::optional<Chosen> c = knownTile(spec, m, device, key))
      return *c;
    const TuneGate gate = tuneGate(site);
    if (gate == TuneGate::Deferred && deferred)
      *deferred = true;
    if (gate != TuneGate::Now) {
      // Without the GPU at hand a first-use tuner has not had its chance.
      const Chosen c = heuristic();
      if (gate == TuneGate::Off && !gTuner)
        gConfigs.emplace(key, c);
      return c;
    }
    tuner = gTuner;
  }
  std::lock_guard<std::mutex> tuning(gTuneMutex);
  {
    // Another thread may have tuned this problem while this one waited.
    std::lock_guard<std::mutex> lock(gConfigMutex);
    if (std::optional<Chosen> c = knownTile(spec, m, device, key))
      return *c;
  }
  KernelSpec bucket = spec;
  bucket.m = tuningMBucket(m);
  const std::string bucketKey = bucket.problemKey();
  Chosen c = heuristic();
  std::optional<TuningEntry> entry;
  if (!gTuneFailed.count(bucketKey)) {
    Expected<std::optional<TuningEntry>> e = tuner(spec, m);
    if (!e) {
      gTuneFailed.insert(bucketKey);
      std::fprintf(stderr,
                   "fp8: tuning %s at M = %lld on first use failed; it keeps "
                   "the heuristic's tile: %s\n",
                   spec.kernelName().c_str(), (long long)m,
                   e.status().message().c_str());
    } else if (*e) {
      entry = std::move(**e);
    }
  }
  std::lock_guard<std::mutex> lock(gConfigMutex);
  if (entry) {
    c = {entry->spec.tile, "tuned on first use"};
    if (!gDb)
      gDb.emplace();
    gDb->add(std::move(*entry));
  }
  gConfigs[key] = c;
  return c;
}

/// `spec` at M = m with the tile to launch: `tile` if given, else the
/// spec's own unless `select`, else chooseTile's.
Expected<KernelSpec> launchSpec(KernelSpec spec, int64_t m, int smCount,
                                const std::optional<TileConfig> &tile,
                                bool select, const LaunchSite &site,
                                const char **source) {
  spec.m = m;
  const char *from = "spec";
  if (tile) {
    spec.tile = *tile;
    from = "given";
  } else if (select) {
    Expected<Chosen> c = chooseTile(spec, m, smCount, site, nullptr);
    if (!c)
      return c.status();
    spec.tile = c->tile;
    from = c->source;
  }
  FP8_RETURN_IF_ERROR(checkGemmSpec(spec));
  if (source)
    *source = from;
  return spec;
}

} // namespace

TuningDevice tuningDevice(const CudaDevice &dev) {
  TuningDevice t;
  t.name = dev.name;
  t.smCount = dev.smCount;
  int khz = 0, driver = 0, major = 0, minor = 0;
  if (dev.driver->cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
                                       dev.device) == CUDA_SUCCESS)
    t.clockMHz = khz / 1000;
  if (dev.driver->cuDriverGetVersion(&driver) == CUDA_SUCCESS)
    t.driverVersion = driver;
  if (::nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
    t.cudaVersion = major * 1000 + minor * 10;
  return t;
}

Expected<std::optional<TileConfig>> tuningDbTile(const KernelSpec &spec,
                                                 int64_t m, CUstream stream,
                                                 bool *deferred) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  KernelSpec s = spec;
  s.m = m;
  Expected<Chosen> c =
      chooseTile(s, m, (*dev)->smCount, {&**dev, stream}, deferred);
  if (!c)
    return c.status();
  if (std::string(c->source) == "heuristic")
    return std::optional<TileConfig>();
  return std::optional<TileConfig>(c->tile);
}

Expected<std::optional<TileConfig>>
knownTuningTile(const KernelSpec &spec, int64_t m, const TuningDevice &device) {
  KernelSpec s = spec;
  s.m = m;
  std::lock_guard<std::mutex> lock(gConfigMutex);
  if (!gDbRead)
    FP8_RETURN_IF_ERROR(readTuningDb(env::tuningDb()));
  // Not remembered: no launch chose it yet, and `device` need not be the
  // runtime's.
  std::optional<Chosen> c =
      knownTile(s, m, &device, s.problemKey(), /*remember=*/false);
  if (!c || std::string(c->source) == "heuristic")
    return std::optional<TileConfig>();
  return std::optional<TileConfig>(c->tile);
}

void setFirstUseTuner(FirstUseTuner tuner) {
  std::lock_guard<std::mutex> tuning(gTuneMutex);
  std::lock_guard<std::mutex> lock(gConfigMutex);
  gTuner = std::move(tuner);
  gTunerSet = bool(gTuner);
  gTuneFailed.clear();
  // Problems that took the heuristic's tile are tuned at their next launch.
  gConfigs.clear();
}

bool tuningOnFirstUse() { return gTunerSet.load(std::memory_order_relaxed); }

Status setTuningDatabase(const std::string &path) {
  std::lock_guard<std::mutex> lock(gConfigMutex);
  gConfigs.clear();
  return readTuningDb(path);
}

Expected<KernelSpec> gemmKernelSpec(const GemmRecipe &r, int64_t m, int64_t n,
                                    int64_t k, int smCount,
                                    const std::optional<TileConfig> &tile) {
  return launchSpec(recipeSpec(r, m, n, k), m, smCount, tile, /*select=*/true,
                    {}, nullptr);
}

Expected<KernelSpec> gemmLaunchSpec(const KernelSpec &spec, int64_t m,
                                    int smCount, const GemmOptions &options) {
  return launchSpec(spec, m, smCount, options.tile, options.selectTile, {},
                    nullptr);
}

Expected<KernelSpec> gemmLaunchSpec(const KernelSpec &spec, int64_t m,
                                    const CudaDevice &dev, CUstream stream,
                                    const GemmOptions &options,
                                    const char **source) {
  return launchSpec(spec, m, dev.smCount, options.tile, options.selectTile,
                    {&dev, stream}, source);
}

Status checkGemmArgs(const GemmRecipe &r, int64_t m, int64_t n, int64_t k,
                     const GemmTensors &t) {
  const KernelSpec s = recipeSpec(r, m, n, k);
  return checkSm90Tensors(s, m, t, operandsOf(s, m, t));
}

Status gemm(const KernelSpec &spec, int64_t m, const GemmTensors &t,
            CUstream stream, const GemmOptions &options, GemmReport *report) {
  if (spec.arch != Arch::SM90a)
    return errorf("expected a kernel spec for sm_90a (the runtime launches "
                  "Hopper kernels), found one for ",
                  toString(spec.arch));
  // The spec's own checks (checkGemmSpec: its fields, then the arch's rules)
  // run in gemmLaunchSpec, on the spec with this M and the tile launched.
  // The operands depend on the recipe and the shape, not on the tile.
  const Operands o = operandsOf(spec, m, t);
  FP8_RETURN_IF_ERROR(checkSm90Tensors(spec, m, t, o));
  if (m == 0 && !spec.amaxOut)
    return Status::ok();
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  if (m == 0) { // D is empty: its amax is 0, written without a kernel
    const CudaDriver &d = *(*dev)->driver;
    if (options.checkExtents)
      FP8_RETURN_IF_ERROR(checkDeviceExtent(d, t.amaxD, 4, "D's amax"));
    return cuCheck(d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(t.amaxD), 0,
                                      1, stream),
                   "cuMemsetD32Async(D's amax)");
  }
  const char *source = "";
  Expected<KernelSpec> s =
      gemmLaunchSpec(spec, m, **dev, stream, options, &source);
  if (!s)
    return s.status();
  FP8_RETURN_IF_ERROR(launchSm90(**dev, *s, m, t, o, stream, options, report));
  if (report)
    report->tileSource = source;
  return Status::ok();
}

Status gemm(const GemmRecipe &r, int64_t m, int64_t n, int64_t k,
            const GemmTensors &t, CUstream stream, const GemmOptions &options,
            GemmReport *report) {
  GemmOptions o = options;
  o.selectTile = true;
  return gemm(recipeSpec(r, m, n, k), m, t, stream, o, report);
}

} // namespace fp8
