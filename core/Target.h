//===- Target.h - What the toolkit assumes of each target GPU ---*- C++ -*-===//
//
// One row per architecture: the GPU whose figures are the defaults, its SM
// count (the heuristics' default when the GPU is not at hand: the passes,
// fp8-codegen, fp8-run --compile-only), and the dynamic shared memory one
// CTA may use. The runtime reads the real device's values where it has one.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CORE_TARGET_H
#define FP8_CORE_TARGET_H

#include "core/Recipe.h"

#include <cstring>

namespace fp8 {

struct TargetInfo {
  Arch arch;
  const char *gpu;           ///< the GPU the defaults describe
  int smCount;               ///< its SMs
  int maxSharedBytes;        ///< dynamic shared memory per CTA (opt-in), bytes
  double dramBytesPerSecond; ///< its DRAM bandwidth (the memory roofline)
};

/// Indexed by Arch.
inline constexpr TargetInfo kTargets[] = {
    // H100 SXM: 132 SMs, 227 KiB of shared memory per CTA, HBM3 at
    // 3.35 TB/s.
    {Arch::SM90a, "H100 SXM", 132, 232448, 3.35e12},
    // B200: 148 SMs, 227 KiB per CTA, HBM3e at 8 TB/s.
    {Arch::SM100a, "B200", 148, 232448, 8.0e12},
};

constexpr const TargetInfo &targetInfo(Arch arch) {
  return kTargets[static_cast<int>(arch)];
}

/// The memory roofline a measurement is held to: the GPU's DRAM bandwidth
/// by its vendor's datasheet.
struct DramRoofline {
  const char *gpu;           ///< as reports name it
  double dramBytesPerSecond; ///< its DRAM bandwidth
};

/// GPUs we have measured on besides kTargets' (H100 SXM, the driver's
/// "NVIDIA H100 80GB HBM3", is sm_90a's default), by the driver's name.
inline constexpr struct {
  const char *driverName;
  DramRoofline roofline;
} kKnownGpus[] = {
    {"NVIDIA H200", {"H200 SXM", 4.8e12}},
};

/// The roofline of the device the driver calls `driverName` (matched
/// whole); any other device is held to its architecture's default GPU.
inline DramRoofline dramRoofline(const char *driverName, Arch arch) {
  for (const auto &g : kKnownGpus)
    if (std::strcmp(driverName, g.driverName) == 0)
      return g.roofline;
  return {targetInfo(arch).gpu, targetInfo(arch).dramBytesPerSecond};
}

static_assert(targetInfo(Arch::SM90a).arch == Arch::SM90a &&
                  targetInfo(Arch::SM100a).arch == Arch::SM100a,
              "kTargets is indexed by Arch");

} // namespace fp8

#endif // FP8_CORE_TARGET_H
