//===- Heuristics.h - Tile configuration without tuning ---------*- C++ -*-===//
//
// The configuration a GEMM gets when the tuning database has nothing for its
// shape: a small cost model over the legal tiles (wave quantisation across
// the SMs, tile efficiency, split-K for problems with few output tiles).
// Kept apart from the kernel generators, like DeepGEMM's heuristics/.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_HEURISTICS_H
#define FP8_CODEGEN_HEURISTICS_H

#include "core/KernelSpec.h"

#include <string>

namespace fp8 {

/// A chosen configuration and the model's reasoning, for --explain output.
struct ConfigChoice {
  TileConfig tile;
  double predictedCost = 0; ///< model units (relative)
  std::string reason;
};

/// Picks a tile configuration for `spec` (its m must be known) on a GPU with
/// `smCount` SMs. The result always passes the generator's checks.
ConfigChoice selectSm90Config(const KernelSpec &spec, int smCount);

} // namespace fp8

#endif // FP8_CODEGEN_HEURISTICS_H
