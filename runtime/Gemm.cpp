//===- Gemm.cpp - The runtime's scaled FP8 GEMM entry point ---------------===//

#include "runtime/Gemm.h"
#include "codegen/Gemm.h"
#include "core/Env.h"
#include "runtime/CudaDriver.h"
#include "runtime/Sm90Launch.h"

#include <nvrtc.h>

#include <cstdio>
#include <mutex>
#include <optional>
#include <unordered_map>

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

/// `spec` at M = m with the tile to launch: `tile` if given, else the
/// spec's own unless `select`, else the tuning database's, else the
/// heuristic's for `smCount` SMs (remembered per problem).
Expected<KernelSpec> launchSpec(KernelSpec spec, int64_t m, int smCount,
                                const std::optional<TileConfig> &tile,
                                bool select, const TuningDevice *device,
                                const char **source) {
  spec.m = m;
  const char *from = "spec";
  if (tile) {
    spec.tile = *tile;
    from = "given";
  } else if (select) {
    const std::string key = spec.problemKey();
    std::lock_guard<std::mutex> lock(gConfigMutex);
    if (!gDbRead)
      FP8_RETURN_IF_ERROR(readTuningDb(env::tuningDb()));
    if (auto it = gConfigs.find(key); it != gConfigs.end()) {
      spec.tile = it->second.tile;
      from = it->second.source;
    } else {
      Chosen c;
      if (std::optional<TileConfig> t = tunedTile(spec, m, device)) {
        c = {*t, "tuning database"};
      } else {
        // The tile check needs a plausible tile; the heuristic then only
        // proposes configurations that pass it.
        c.tile = selectConfig(spec, smCount).tile;
      }
      // A choice made without the GPU at hand (any GPU's entries) is not
      // remembered for the launches that have it.
      if (device || std::string(c.source) == "heuristic")
        gConfigs.emplace(key, c);
      spec.tile = c.tile;
      from = c.source;
    }
  }
  FP8_RETURN_IF_ERROR(checkGemmSpec(spec));
  if (source)
    *source = from;
  return spec;
}

/// The runtime device's identity in the tuning database, made once.
const TuningDevice &deviceIdentity(const CudaDevice &dev) {
  static const TuningDevice id = tuningDevice(dev);
  return id;
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
                                                 int64_t m) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  std::lock_guard<std::mutex> lock(gConfigMutex);
  if (!gDbRead)
    FP8_RETURN_IF_ERROR(readTuningDb(env::tuningDb()));
  KernelSpec s = spec;
  s.m = m;
  return tunedTile(s, m, &deviceIdentity(**dev));
}

Status setTuningDatabase(const std::string &path) {
  std::lock_guard<std::mutex> lock(gConfigMutex);
  gConfigs.clear();
  return readTuningDb(path);
}

Expected<KernelSpec> gemmKernelSpec(const GemmRecipe &r, int64_t m, int64_t n,
                                    int64_t k, int smCount,
                                    const std::optional<TileConfig> &tile) {
  return launchSpec(recipeSpec(r, m, n, k), m, smCount, tile, /*select=*/true,
                    nullptr, nullptr);
}

Expected<KernelSpec> gemmLaunchSpec(const KernelSpec &spec, int64_t m,
                                    int smCount, const GemmOptions &options) {
  return launchSpec(spec, m, smCount, options.tile, options.selectTile, nullptr,
                    nullptr);
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
  if (m == 0)
    return Status::ok();
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  const char *source = "";
  Expected<KernelSpec> s =
      launchSpec(spec, m, (*dev)->smCount, options.tile, options.selectTile,
                 &deviceIdentity(**dev), &source);
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
