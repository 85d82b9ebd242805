//===- Heuristics.cpp - Tile configuration without tuning -----------------===//
//
// A cost model fitted to sweeps of the sm_90a kernel on our H100 (fp8-bench
// --sweep over the shapes of bench/shapes.json; docs/hopper-kernel.md):
//
//   k-block clocks (BLOCK_M 128)  = 190 + 8.15 * BLOCK_N
//     measured from BLOCK_N 64 (712) to 256 (2275): the kernel runs at about
//     half the tensor-core peak whatever the tile width (both consumer
//     warpgroups promote in lockstep), plus a fixed per-k-block cost that
//     favours wider tiles;
//   unit clocks  = (k-blocks + 2) * k-block clocks   (+2: epilogue, fill)
//   split-K      = + 8000 clocks (fences, arrival counter, the last slice's
//                  serial reduction) + the partials' traffic
//   total        = 8000 (launch, first loads) + waves * unit clocks
//
// BLOCK_M 64 (one consumer warpgroup) is only considered when M <= 64.
// 2-CTA clusters (TMA multicast) measured no faster than 1x1 tiles, so the
// heuristic leaves them to the tuner. Ties go to the larger tile.
//
//===----------------------------------------------------------------------===//

#include "codegen/Heuristics.h"
#include "codegen/Sm90Gemm.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fp8 {

namespace {
double blockClocks(int blockM, int blockN, bool chunked) {
  const double c = 190.0 + 8.15 * blockN * (blockM / 128.0);
  return chunked ? c * 1.03 : c; // two promotion waits per k-block
}
} // namespace

ConfigChoice selectSm90Config(const KernelSpec &spec, int smCount) {
  const int64_t m = std::max<int64_t>(spec.m, 1);
  const int64_t n = spec.n, k = spec.k;
  const int64_t kBlocks = (k + 127) / 128;
  const int64_t groupBlocks =
      spec.promotionInterval > 128 ? spec.promotionInterval / 128 : 1;
  const int64_t kGroups = (kBlocks + groupBlocks - 1) / groupBlocks;

  ConfigChoice best;
  best.predictedCost = 1e300;
  for (int bm : {64, 128}) {
    if (bm == 64 && m > 64)
      continue;
    for (int bn : {32, 48, 64, 80, 96, 112, 128, 144, 160, 192, 224, 256}) {
      // Narrower than 64 only pays off for narrow N (measured: 64-wide
      // tiles win every small-M shape with N >= 2048).
      if (bn < 64 && n >= 2048)
        continue;
      KernelSpec probe = spec;
      probe.tile = TileConfig();
      probe.tile.blockM = bm;
      probe.tile.mathWarpgroups = bm / 64;
      probe.tile.blockN = bn;
      probe.tile.stages = 2;
      probe.tile.stages = std::min(sm90MaxStages(probe), 8);
      if (!checkSm90Spec(probe).isOk())
        continue;
      const int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      const bool chunked = spec.promotionInterval > 0 && bn > 192;
      const double kb = blockClocks(bm, bn, chunked);
      for (int64_t split = 1; split <= std::min<int64_t>(kGroups, 16);
           ++split) {
        probe.tile.splitK = int(split);
        if (split > 1 && !checkSm90Spec(probe).isOk())
          break;
        const int64_t ctas = tiles * split;
        if (split > 1 && ctas > 2 * smCount)
          break;
        const int64_t waves = (ctas + smCount - 1) / smCount;
        const double kPerUnit = std::ceil(double(kBlocks) / double(split));
        double cost = 8000.0 + waves * (kPerUnit + 2.0) * kb;
        if (split > 1)
          cost += 8000.0 + double(bm) * bn * 4.0 * 2.0 * split / 30.0;
        if (cost < best.predictedCost * 0.995) {
          best.tile = probe.tile;
          best.predictedCost = cost;
          std::ostringstream os;
          os << tiles << " tiles of " << bm << "x" << bn << " x " << split
             << " K slice" << (split > 1 ? "s" : "") << " over " << smCount
             << " SMs (" << waves << " wave" << (waves > 1 ? "s" : "") << "), ~"
             << int64_t(cost) << " clocks predicted";
          best.reason = os.str();
        }
      }
    }
  }
  best.tile.raster = Raster::AlongN;
  best.tile.swizzleGroup = 8;
  best.tile.persistent = true;
  return best;
}

} // namespace fp8
