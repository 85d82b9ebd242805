//===- TileOverride.h - Tile keys over a chosen tile ------------*- C++ -*-===//
//
// A user's partial tile, given as keys of TileConfig's JSON (fp8-codegen
// --tile '{"block_n": 128}'), laid over the tile the heuristic or the tuning
// database chose, with the rest re-derived as the heuristic would.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_TILEOVERRIDE_H
#define FP8_CODEGEN_TILEOVERRIDE_H

#include "core/KernelSpec.h"
#include "core/Status.h"

#include <string>

namespace fp8 {

/// `spec`'s tile with the keys of the JSON object `keys` over it; `what`
/// names where the keys came from in errors ("--tile"). Without an explicit
/// "overlap", an sm_90a promotion overlap that the new tile cannot take is
/// dropped; without "stages", the pipeline is as deep as the new tile fits
/// (2 to 8 stages).
Expected<TileConfig> overrideTile(const KernelSpec &spec,
                                  const std::string &keys,
                                  const std::string &what);

} // namespace fp8

#endif // FP8_CODEGEN_TILEOVERRIDE_H
