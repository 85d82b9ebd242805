//===- TileOverride.cpp - Tile keys over a chosen tile --------------------===//

#include "codegen/TileOverride.h"

#include "codegen/Sm100Gemm.h"
#include "codegen/Sm90Gemm.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace fp8 {

Expected<TileConfig> overrideTile(const KernelSpec &spec,
                                  const std::string &keys,
                                  const std::string &what) {
  using json = nlohmann::json;
  const bool bw = spec.arch == Arch::SM100a;
  auto parsed = parseJsonInput(keys, what);
  if (!parsed)
    return parsed.status();
  const json &over = *parsed;
  if (!over.is_object())
    return errorf("expected a JSON object for ", what, ", found '", keys, "'");
  json merged = json::parse(toJSON(spec.tile));
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (!merged.contains(it.key()))
      return errorf("unknown tile key '", it.key(), "' in ", what,
                    " (expected keys of ", toJSON(spec.tile), ")");
    merged[it.key()] = it.value();
  }
  auto tile = tileConfigFromJSON(merged.dump());
  if (!tile)
    return tile.status();
  KernelSpec s = spec;
  s.tile = *tile;
  // The heuristic's promotion overlap may not suit the overridden tile
  // (it needs a narrow one): without an explicit "overlap", drop it then.
  if (!bw && !over.contains("overlap") &&
      s.tile.overlap != PromotionOverlap::None) {
    KernelSpec check = s;
    check.tile.stages = 2;
    if (!checkSm90Spec(check).isOk())
      s.tile.overlap = PromotionOverlap::None;
  }
  if (!over.contains("stages")) {
    // As deep a pipeline as the new tile fits (the heuristic's rule).
    s.tile.stages = 2;
    s.tile.stages = std::min(bw ? sm100MaxStages(s) : sm90MaxStages(s), 8);
    s.tile.stages = std::max(s.tile.stages, 2);
  }
  return s.tile;
}

} // namespace fp8
