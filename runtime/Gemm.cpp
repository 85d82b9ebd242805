//===- Gemm.cpp - The runtime's scaled FP8 GEMM entry point ---------------===//

#include "runtime/Gemm.h"
#include "codegen/Gemm.h"
#include "runtime/CudaDriver.h"
#include "runtime/Sm90Launch.h"

#include <mutex>
#include <optional>
#include <unordered_map>

namespace fp8 {

namespace {

std::mutex gConfigMutex;
std::unordered_map<std::string, TileConfig> gConfigs;

/// `spec` at M = m with the tile to launch: `tile` if given, else the
/// spec's own unless `select`, else the heuristic's for `smCount` SMs
/// (remembered per problem).
Expected<KernelSpec> launchSpec(KernelSpec spec, int64_t m, int smCount,
                                const std::optional<TileConfig> &tile,
                                bool select) {
  spec.m = m;
  if (tile) {
    spec.tile = *tile;
  } else if (select) {
    const std::string key = spec.problemKey();
    std::lock_guard<std::mutex> lock(gConfigMutex);
    if (auto it = gConfigs.find(key); it != gConfigs.end()) {
      spec.tile = it->second;
    } else {
      // The tile check needs a plausible tile; the heuristic then only
      // proposes configurations that pass it.
      spec.tile = selectConfig(spec, smCount).tile;
      gConfigs.emplace(key, spec.tile);
    }
  }
  FP8_RETURN_IF_ERROR(checkGemmSpec(spec));
  return spec;
}

} // namespace

Expected<KernelSpec> gemmKernelSpec(const GemmRecipe &r, int64_t m, int64_t n,
                                    int64_t k, int smCount,
                                    const std::optional<TileConfig> &tile) {
  return launchSpec(recipeSpec(r, m, n, k), m, smCount, tile, /*select=*/true);
}

Expected<KernelSpec> gemmLaunchSpec(const KernelSpec &spec, int64_t m,
                                    int smCount, const GemmOptions &options) {
  return launchSpec(spec, m, smCount, options.tile, options.selectTile);
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
  Expected<KernelSpec> s = gemmLaunchSpec(spec, m, (*dev)->smCount, options);
  if (!s)
    return s.status();
  return launchSm90(**dev, *s, m, t, o, stream, options, report);
}

Status gemm(const GemmRecipe &r, int64_t m, int64_t n, int64_t k,
            const GemmTensors &t, CUstream stream, const GemmOptions &options,
            GemmReport *report) {
  GemmOptions o = options;
  o.selectTile = true;
  return gemm(recipeSpec(r, m, n, k), m, t, stream, o, report);
}

} // namespace fp8
