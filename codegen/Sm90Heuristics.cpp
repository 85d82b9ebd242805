//===- Sm90Heuristics.cpp - sm_90a tiles without tuning -------------------===//
//
// A cost model fitted to sweeps of the sm_90a kernel on the H100 (fp8-bench
// --sweep over the shapes of bench/shapes.json, DeepSeek recipe, 1.98 GHz).
// Why the kernel is shaped as it is: docs/hopper-kernel.md; how each figure
// below was found: docs/journal/2026-11-22-hopper-kernel.md.
//
//   k-block clocks (BLOCK_M 128), medians over the M = 4096 shapes of
//   clocks = (time - 8000) / (waves * (k-blocks + 1.5)), K scales by TMA
//   (docs/results/h100-2026-11-22d/):
//       BLOCK_N   64   96  112  128  144  160  176  192  224  256
//       clocks   643  850  937  881 1168 1288 1399 1478 1635 1792
//     128 columns is the sweet spot (6.9 clocks per column; 256, two
//     chunks, 7.0; every other width 7.7-10: their B scale blocks sit at
//     run-time columns or the tile is narrow). 224 is interpolated (the
//     DeepSeek recipe refuses it). Below 64 columns 190 + 8.15 * BLOCK_N
//     holds (narrow-N shapes only; docs/results/h100-2026-11-22/); between
//     table entries the clocks are interpolated.
//   chain        = waves * (k-blocks * 0.925 * k-block clocks + 2000)
//                  + 2.14 * 0.925 * k-block clocks
//                  (2000: the per-tile cost fitted over K, docs/results/
//                  h100-2026-11-22g/; 0.925 and the 2.14 k-blocks paid once
//                  a CTA: the 2026-12-06 refit, see kKBlockScale)
//   memory       = DRAM bytes (B, A, D, split-K partials) / 1750 per clock
//                  per wave, or the wave's CTAs' own rate where lower (at
//                  most 20 bytes per clock and CTA, and no more than its
//                  loads in flight per ~7000 clocks; see kCtaBytesPerClock)
//                  + the last tile's epilogue (see kDramBytesPerClock)
//   split-K      = + 4000 clocks (fences, arrival counter) + the last
//                  slice's serial read of every slice's partials at ~60
//                  bytes per clock + the partials' traffic (see
//                  kSplitFixedClocks)
//   total        = 8000 (launch, first loads) + max(chain, memory)
//
// Overlapped promotion over alternating k-blocks (TileConfig::overlap "k")
// is chosen for unsplit tiles up to 64 columns (faster on every M = 4096
// shape and by 0-1% at M = 128), and for 64-row tiles of 128 columns at
// long units (>= 64 k-blocks; within 2% either way on the H200's decode
// timings, docs/results/h200-2026-12-05-decode/). Wider 128-row tiles
// promote in place: on the H200's bench and training timings
// (docs/results/h200-2026-12-05-fit/) the plain loop beat "k" at 128x128
// on all 13 shapes of K >= 8192, by 3-19% (2048x16384x16384: 0.924 vs
// 1.140 ms), and at 128x96 and 128x112 by 12% and 9% at geomean. (The
// kernel of 2026-11-22 measured the reverse at K >= 11008 on the H100,
// docs/results/h100-2026-11-22e/.) Split-K tiles (small M) do without it:
// within 1% either way on the three M = 128 split shapes, and ~30% less
// NVRTC time on the kernels that are the slowest to compile
// (docs/results/h100-2026-11-22j/). Overlap over N halves is slower
// everywhere (A is read twice from shared memory) and is left to explicit
// configs. BLOCK_M 64 (one consumer warpgroup, widths that are multiples of
// 64) is taken when M <= 64; BLOCK_M 192 (three consumer warpgroups, 128
// columns, no overlap, no split-K) when M > 128: it wins every M = 4096 shape
// (+3% to +15% over the best 128-row tiles, docs/results/h100-2026-11-22f/).
// 2-CTA clusters (TMA multicast) measure between 2% slower and 4% faster than
// 1x1 tiles at 128 rows, too close to call; 192x128 tiles pair in 1x2 clusters
// from 128 k-blocks on, or when their last partial wave splits (see
// kPairMinKBlocks, kTailSplit). Split tails and the rasterisation are chosen
// after the tile. Ties go to the larger tile.
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm90Heuristics.h"
#include "codegen/Sm90Gemm.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fp8 {

namespace {
/// Measured clocks per 128-deep k-block of a 128-row tile, by width (see
/// above): the table of the cost model and the widths a sweep times.
struct MeasuredWidth {
  int blockN;
  double clocks;
};
constexpr MeasuredWidth kMeasured[] = {
    {64, 643},   {96, 850},   {112, 937},  {128, 881},  {144, 1168},
    {160, 1288}, {176, 1399}, {192, 1478}, {224, 1635}, {256, 1792}};

/// Clocks per k-block of a 128-row tile: the table, interpolated between
/// its widths and extrapolated beyond them.
double blockClocks128(int blockN) {
  constexpr size_t kCount = std::size(kMeasured);
  if (blockN < kMeasured[0].blockN)
    return 190.0 + 8.15 * blockN;
  for (size_t i = 0; i + 1 < kCount; ++i) {
    const MeasuredWidth &lo = kMeasured[i], &hi = kMeasured[i + 1];
    if (blockN <= hi.blockN)
      return lo.clocks + (hi.clocks - lo.clocks) * (blockN - lo.blockN) /
                             double(hi.blockN - lo.blockN);
  }
  return kMeasured[kCount - 1].clocks * blockN / 256.0;
}

/// Three consumer warpgroups (BLOCK_M 192, 128 columns): a k-block costs
/// 1.22-1.41x a 128x128 one for 1.5x the work (the tensor core idles less:
/// two other warpgroups' wgmmas cover one's promotion). Measured over the
/// M = 4096 shapes (fp8-bench on the H100, docs/results/h100-2026-11-22f/);
/// 1160 is the median ratio, 1.32, of 881 clocks.
constexpr double kBlockClocks192x128 = 1160.0;

/// Split tails (TileConfig::tailSplit), measured on the H100 with 192x128
/// tiles (docs/results/h100-2026-11-22g/): +3% on 4096x4096x7168 (44 tiles
/// left over, 3 slices of 19 k-blocks) and +6% on 4096x4096x11008, but -3%
/// on 4096x11008x4096 (slices of 11) and -4% on 4096x7168x2048 (slices of
/// 6); the kernel with the reduction in it runs 1-3% slower on whole tiles,
/// so it is only chosen when the tail does split into slices of at least
/// kTailMinKBlocks. 1x2 clusters of 192x128 tiles: +3% (+6% with the split
/// tail) at K = 16384, -1% to -5% at K <= 11008. Pairs with a split tail
/// beat the unpaired split tail on all six shapes measured (+0.9% at
/// 4096x4096x6144, +2.0% at 4096x4096x7168, +2.6% at 4096x4096x8192, +1.7%
/// at 4096x4096x11008, +3.1% at 8192x4096x7168, +6.5% at 4096x7168x7168),
/// while unsplit shapes are mixed (-3.5% to +2.9%;
/// docs/results/h100-2026-11-22k/tail-split-and-pairs.log): tiles pair from
/// 128 k-blocks on or when their last wave splits.
constexpr int kTailSplit = 4;
constexpr int64_t kTailMinKBlocks = 16;
constexpr int64_t kPairMinKBlocks = 128;

/// Small M is memory-bound: no schedule beats moving B (N x K), A, D and the
/// split-K partials (which leave L2 while B streams through it) through
/// DRAM at ~1750 bytes per model clock (the rate refitted with the split-K
/// cost, below), plus the last tile's epilogue, which overlaps no load
/// (~0.05 clocks per output byte); each tile also costs ~2000 clocks beyond
/// its k-blocks (docs/results/h100-2026-11-22g/). Fitted to the M = 128
/// sweep in docs/results/h100-2026-11-22e/sweep-m128.json: the pick is the
/// best measured tile on six of its seven shapes (128x64 unsplit, not
/// 128x128 split in two, at 7168x16384; 128x96, not 128x192, at
/// 24576x1536) for 1600-2000 bytes per clock, 0.02-0.1 clocks per byte and
/// 1000-3000 clocks per tile; the M = 4096 picks do not move. Those two
/// picks measured +5% and +3.5% on the H100
/// (docs/results/h100-2026-11-22h/).
constexpr double kDramBytesPerClock = 1750.0;
/// A CTA streams no faster than its own loads allow: at most ~20 bytes per
/// clock (40 GB/s at 1.98 GHz; 128x256 tiles, 72 CTAs, at 16x18432x16384
/// on the H200: 4.2 MB each in 103 us, docs/results/h200-2026-12-05-fit/;
/// wide 64-row tiles were seen at up to 30, which the cap undercounts and
/// the in-flight bound below still ranks), and no more than the bytes
/// its pipeline keeps in flight (stages x (B's width + A's loaded rows) x
/// 128 per k-block) per load latency, ~7000 clocks. A wave whose CTAs
/// together stream below the device's rate takes their rate instead:
/// - A decode GEMM's last partial wave costs what it streams alone: 64x64
///   tiles at 16x18432x16384 (288 CTAs, the last 24 alone) measured 126 us
///   against 107 us for 64x80, and 128x53248x16384 takes 128x144 tiles
///   (249-255 us) instead of 128x112 with overlap (283 us).
/// - Narrow decode tiles stream slowly in every wave: on nine training
///   weights at M = 16, 64x64 tiles (8 stages, 80 KB in flight) streamed
///   10-11 bytes per clock and CTA, 64x128 tiles (8 stages, 144 KB) 24,
///   and the 64x64 tiles lost to wider ones by 11-45% (latencies of
///   4600-7700 clocks; fitted, 6500-8000 score alike; docs/results/
///   h200-2026-12-05-decode/fit-decode.json; docs/journal/
///   2026-12-05-decode-widths.md).
/// Fitted on the bench and training shapes; on the held-out shapes, same
/// H200 and run, the per-CTA cap alone moved three decode picks:
/// 16x10240x8192 +21%, 16x29568x8192 +13%, 16x4096x14336 +2%
/// (docs/results/h200-2026-12-05-decode/). The in-flight bound moves four
/// held-out picks at M <= 16 to 64x128 tiles; those are not measured yet.
constexpr double kCtaBytesPerClock = 20.0;
constexpr double kLoadLatencyClocks = 7000.0;
constexpr double kEpilogueClocksPerByte = 0.05;
constexpr double kTileClocks = 2000.0;
/// The chain's refit on the H100's timings of every unsplit 1x1 candidate
/// at M > 128 on the bench and training shapes (215 GEMM-tile pairs;
/// gpu-check step training, docs/results/h100-2026-12-06-refit/): the
/// kernel now runs a k-block in 0.925 of the table's clocks, and the
/// pipeline's fill and the last tile's epilogue cost 2.14 k-blocks once a
/// CTA, not 1.5 a tile (a tile's epilogue overlaps the loads of the CTA's
/// next tile). Relative error of the predicted times: 16% rms (11% too slow
/// on average) with 1.5 a tile, 7.8% so. Fitted with kTileClocks held; left
/// free, it fits at 0 and moves three M = 128 picks, one by +4% regret.
/// Moved: 8192x1000x2048 (training) from 128x256 to 192x128 tiles, +4.6-
/// 5.4%; on the held-out set only 1000x4096x4096, to 128x128, +4.6-5.9%
/// (0.94-0.95x -> 0.99x cuBLASLt); the bench's picks stay.
constexpr double kKBlockScale = 0.925;
constexpr double kFillKBlocks = 2.14;

/// Split-K's own cost: the fences and the arrival counter, then the last
/// slice reads every slice's FP32 partials back (~60 bytes per clock).
/// Fitted, with DRAM at 1750 bytes per clock, to the M = 128 sweep of
/// widths 32-128 x split-K 1-14
/// (docs/results/h100-2026-11-22j/sweep-m128.json): these values split narrow
/// tiles as far as the sweep found fast (128x576x7168 at 32 columns in 7
/// slices; 128x2112x7168 at 48 columns in three, 132 CTAs). The picks are the
/// sweep's best (within 2%) on all seven shapes for 3000-5000 clocks and 45-90
/// bytes per clock, and the shapes at M = 1 to 512 whose picks they set were
/// measured too (docs/journal/2026-11-22-hopper-kernel.md, 22j). The DRAM
/// rate's window is narrow (1740-1800): below it 64x32768x512 takes 96 columns
/// (-9%), above it 128x7168x16384 takes 128 columns split in two (-7%). The
/// model's memory floor is a fit, not the HBM rate. Its wave quantisation
/// is dramClocks's.
constexpr double kSplitFixedClocks = 4000.0;
constexpr double kSplitReadBytesPerClock = 60.0;

/// The bytes per clock one CTA streams with `inFlight` bytes of loads
/// outstanding (see kCtaBytesPerClock).
double ctaBytesPerClock(double inFlight) {
  return std::min(kCtaBytesPerClock, inFlight / kLoadLatencyClocks);
}

/// DRAM clocks of `ctas` work units moving `bytes` between them, in waves
/// of `smCount`, each CTA streaming at most `ctaRate` bytes per clock: a
/// wave takes the device's rate or, where its CTAs together fall short of
/// it, theirs.
double dramClocks(double bytes, int64_t ctas, int smCount, double ctaRate) {
  const double perCta = bytes / double(std::max<int64_t>(ctas, 1));
  auto wave = [&](int64_t n) {
    return perCta * std::max(double(n) / kDramBytesPerClock, 1.0 / ctaRate);
  };
  const int64_t full = ctas / smCount, rest = ctas % smCount;
  return double(full) * wave(smCount) + (rest > 0 ? wave(rest) : 0.0);
}

/// Gives `spec`'s tile `bm` x `bn` (a consumer warpgroup per 64 rows) and
/// as many stages as fit, at most 8, after the tile's other fields are set.
void shapeTile(KernelSpec &spec, int bm, int bn) {
  spec.tile.blockM = bm;
  spec.tile.mathWarpgroups = bm / 64;
  spec.tile.blockN = bn;
  spec.tile.stages = std::min(sm90MaxStages(spec), 8);
}

double blockClocks(int blockM, int blockN) {
  if (blockM == 192)
    return kBlockClocks192x128 * blockN / 128.0;
  return blockClocks128(blockN) * (blockM / 128.0);
}
} // namespace

std::vector<int> sm90MeasuredBlockNs() {
  std::vector<int> widths;
  for (const MeasuredWidth &w : kMeasured)
    widths.push_back(w.blockN);
  return widths;
}

std::vector<TileConfig> sm90CandidateTiles(const KernelSpec &spec, int64_t m,
                                           int smCount,
                                           const Sm90TileGrid &grid) {
  // 2-CTA clusters and overlap over N halves measured slower on every
  // shape (docs/hopper-kernel.md): only the full grid has them.
  const int clusters[][2] = {{1, 1}, {2, 1}, {1, 2}};
  const PromotionOverlap overlaps[] = {PromotionOverlap::None,
                                       PromotionOverlap::AlternateK,
                                       PromotionOverlap::AlternateN};
  const int nClusters = grid.full ? 3 : 1;
  const int nOverlaps = grid.full ? 3 : 2;
  // One consumer warpgroup (64 rows) where the rows fit it: a decode
  // GEMM streams B, and a 64-row tile does half a 128-row tile's work per
  // byte of B.
  std::vector<int> heights = {128};
  if (m <= 64)
    heights.insert(heights.begin(), 64);
  std::vector<TileConfig> tiles;
  for (int bm : heights)
    for (int bn : grid.widths)
      for (int oi = 0; oi < nOverlaps; ++oi)
        for (int ci = 0; ci < nClusters; ++ci)
          for (int split : grid.splits) {
            if (m > 1024 && split > 1)
              continue;
            KernelSpec ks = spec;
            ks.tile = TileConfig();
            ks.tile.splitK = split;
            ks.tile.clusterM = clusters[ci][0];
            ks.tile.clusterN = clusters[ci][1];
            ks.tile.overlap = overlaps[oi];
            shapeTile(ks, bm, bn);
            if (!checkSm90Spec(ks))
              continue;
            const int64_t units =
                ((m + bm - 1) / bm) * ((spec.n + bn - 1) / bn) * split;
            if (split > 1 && units > 2 * smCount)
              continue;
            tiles.push_back(ks.tile);
          }
  return tiles;
}

namespace {
/// The choices after the tile's shape: rasterisation, 1x2 clusters and a
/// split tail, for `groups` problems of `rows` rows each.
void finishTile(const KernelSpec &spec, int smCount, int64_t groups,
                int64_t rows, ConfigChoice &best) {
  const int64_t n = spec.n;
  const int64_t k =
      spec.kind == GemmKind::GroupedK ? (spec.k + groups - 1) / groups : spec.k;
  const int64_t kBlocks = (k + 127) / 128;
  const int64_t kGroups = sm90KSlices(spec);
  best.tile.swizzleGroup = 8;
  best.tile.persistent = true;
  const int bm = best.tile.blockM, bn = best.tile.blockN;
  const int64_t nTiles = (n + bn - 1) / bn;
  // Rasterisation: bands of 8 tile columns walked down M beat bands of 8
  // tile rows walked along N for 192-row tiles, unless the last band is
  // ragged (measured on the H100 with 192x128 tiles,
  // docs/results/h100-2026-11-22g/: +0.6% to +3.4% on eight M = 4096
  // shapes; -3.3% on 4096x2112x7168, 17 tile columns).
  const bool down = bm == 192 && (nTiles % best.tile.swizzleGroup == 0 ||
                                  nTiles <= best.tile.swizzleGroup);
  best.tile.raster = down ? Raster::AlongM : Raster::AlongN;

  // Long 192x128 tiles pair in 1x2 clusters (A multicast), and so do tiles
  // whose last partial wave splits (below) unpaired, and a grouped GEMM's
  // (+3.1% geomean on the grouped_contiguous shapes, H100,
  // docs/results/h100-2026-11-25-moe/sweep.log).
  // (The tail splits when its tiles, cluster groups of cs, can be cut into
  // slices of at least kTailMinKBlocks.)
  struct Tail {
    int64_t groups;
    Sm90TailSchedule schedule;
    bool splits;
  };
  auto tailOf = [&](int cs) {
    Tail t;
    t.groups = groups * ((rows + bm - 1) / bm) * ((nTiles + cs - 1) / cs);
    t.schedule = sm90TailSchedule(t.groups, smCount / cs, kTailSplit, kGroups);
    const int split = t.schedule.split;
    t.splits = split > 1 && (kBlocks + split - 1) / split >= kTailMinKBlocks;
    return t;
  };
  if (bm == 192 &&
      (kBlocks >= kPairMinKBlocks || tailOf(1).splits || groups > 1) &&
      nTiles >= 8) {
    KernelSpec probe = spec;
    probe.tile = best.tile;
    probe.tile.clusterN = 2;
    if (checkSm90Spec(probe).isOk()) {
      best.tile = probe.tile;
      best.reason += "; 1x2 clusters";
    }
  }

  // A split tail when the last partial wave's tiles (cluster pairs) can be
  // cut into slices of at least 16 k-blocks.
  if (best.tile.splitK == 1) {
    const int cs = best.tile.clusterN;
    const Tail tail = tailOf(cs);
    KernelSpec probe = spec;
    probe.tile = best.tile;
    probe.tile.tailSplit = kTailSplit;
    if (tail.splits && checkSm90Spec(probe).isOk()) {
      best.tile = probe.tile;
      std::ostringstream os;
      os << "; the last wave's " << (tail.groups - tail.schedule.first)
         << " tile" << (cs > 1 ? " pairs" : "s") << " split "
         << tail.schedule.split << " ways along K";
      best.reason += os.str();
    }
  }
}

} // namespace

ConfigChoice selectSm90Config(const KernelSpec &spec, int smCount) {
  const int64_t m = std::max<int64_t>(spec.m, 1);
  const int64_t n = spec.n;
  // A grouped GEMM: G problems of `rows` rows each (contiguous: M is every
  // group's rows, taken as equal shares; masked: M is the rows a group is
  // expected to hold; along K: M rows and an equal share of K each).
  const int64_t groups =
      spec.kind == GemmKind::Dense ? 1 : std::max<int64_t>(spec.groups, 1);
  const int64_t rows =
      spec.kind == GemmKind::GroupedContiguous ? (m + groups - 1) / groups : m;
  const int64_t allRows = rows * groups;
  // Groups along K: each group's share of K (A's rows and B are shared).
  const int64_t k =
      spec.kind == GemmKind::GroupedK ? (spec.k + groups - 1) / groups : spec.k;
  const int64_t kBlocks = (k + 127) / 128;
  const int64_t kGroups = sm90KSlices(spec);

  // Bytes written per GEMM column: a quantizing epilogue writes one code
  // per column, or per pair of columns.
  const double outBytes = spec.epilogue
                              ? (spec.epilogue->pairBlock > 0 ? 0.5 : 1.0)
                              : (spec.out == DType::F32 ? 4.0 : 2.0);

  int decodeWidth = 0;
  if (groups > 1 && rows <= 64)
    for (int bn : {256, 224, 192, 160, 128}) {
      KernelSpec probe = spec;
      probe.tile = TileConfig();
      shapeTile(probe, 64, bn);
      if (checkSm90Spec(probe).isOk()) {
        decodeWidth = bn;
        break;
      }
    }

  ConfigChoice best;
  best.predictedCost = 1e300;
  // Rows that fit a 64-row tile take one: a 128-row tile does twice the
  // MMA work per byte of B on rows that are padding. The best 128-row
  // tile measured 10-31% slower than the best 64-row one on each of nine
  // training weights at M = 16 (H200, docs/results/h200-2026-12-05-decode/
  // fit-decode.json). Taller tiles remain for specs no 64-row tile serves.
  bool have64 = false;
  for (int bm : {64, 128, 192}) {
    if (bm == 64 && rows > 64)
      continue;
    if (bm > 64 && have64)
      continue;
    // 192 rows only as 192x128 (narrower ones measured 25-45% slower:
    // their B scale blocks sit at run-time columns or the tile is short of
    // work). checkSm90Spec rules out its split-K and overlap.
    for (int bn :
         {32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256}) {
      if (bm == 192 && bn != 128)
        continue;
      // Narrower than 64 only pays off for narrow N, or split along K
      // (measured: 48 columns split three ways run 128x2112x7168 3% faster
      // than 64, but 48 unsplit runs 128x4096x7168 8% slower with 86 CTAs,
      // and 32 columns lose at N >= 2048; docs/results/h100-2026-11-22h/,
      // h100-2026-11-22j/). The
      // model does not see that fewer CTAs stream less, hence the rule.
      if (bn < 48 && n >= 2048)
        continue;
      // A grouped GEMM whose groups fit one 64-row tile (decode) streams
      // the experts' weights: its widest legal tile re-reads A least and
      // issues the largest loads (measured, 32 groups of ~20 rows, N =
      // 6144, K = 7168: 64x64 tiles 60.0% of DRAM bandwidth, 64x128 78.9%,
      // 64x192 82.7%, 64x256 85.7%; docs/results/h100-2026-11-25-moe/
      // sweep.log).
      if (decodeWidth > 0 && (bm != 64 || bn != decodeWidth))
        continue;
      // Dense 64-row tiles at whole multiples of 64 columns: at M = 16 the
      // widths between measured slower than their neighbours although the
      // model favours them for filling the waves (64x96 against 64x128,
      // 5-6% at 12288x12288 and 12288x28672; 64x80 against 64x192, 23% at
      // 18432x16384; fit-decode.json above).
      if (decodeWidth == 0 && bm == 64 && bn % 64 != 0)
        continue;
      KernelSpec probe = spec;
      probe.tile = TileConfig();
      shapeTile(probe, bm, bn);
      if (!checkSm90Spec(probe).isOk())
        continue;
      have64 = have64 || bm == 64;
      const int64_t tiles =
          groups * ((rows + bm - 1) / bm) * ((n + bn - 1) / bn);
      const double kb = kKBlockScale * blockClocks(bm, bn);
      for (int64_t split = 1; split <= std::min<int64_t>(kGroups, 16);
           ++split) {
        probe.tile.splitK = int(split);
        if (split == 1 && bn < 64 && n >= 2048)
          continue;
        if (split > 1 && !checkSm90Spec(probe).isOk())
          break;
        const int64_t ctas = tiles * split;
        if (split > 1 && ctas > 2 * smCount)
          break;
        const int64_t waves = (ctas + smCount - 1) / smCount;
        const double kPerUnit = std::ceil(double(kBlocks) / double(split));
        const double chain =
            waves * (kPerUnit * kb + kTileClocks) + kFillKBlocks * kb;
        const double partials =
            split > 1 ? double(tiles) * split * bm * bn * 4.0 * 2.0 : 0.0;
        const double inFlight = double(probe.tile.stages) * 128.0 *
                                double(bn + std::min<int64_t>(rows, bm));
        const double dram =
            dramClocks(double(groups) * n * k + double(allRows) * k +
                           double(allRows) * n * outBytes + partials,
                       ctas, smCount, ctaBytesPerClock(inFlight));
        double cost = 8000.0 + std::max(chain, dram + kEpilogueClocksPerByte *
                                                          bm * bn * outBytes);
        if (split > 1)
          cost += kSplitFixedClocks +
                  double(bm) * bn * 4.0 * 2.0 * split / kSplitReadBytesPerClock;
        if (cost < best.predictedCost * 0.995) {
          best.tile = probe.tile;
          best.tile.overlap = PromotionOverlap::None;
          if (split == 1 &&
              (bn <= 64 || (bm == 64 && bn <= 128 && kPerUnit >= 64))) {
            KernelSpec ov = probe;
            ov.tile.overlap = PromotionOverlap::AlternateK;
            if (checkSm90Spec(ov).isOk())
              best.tile.overlap = PromotionOverlap::AlternateK;
          }
          best.predictedCost = cost;
          std::ostringstream os;
          os << tiles << " tiles of " << bm << "x" << bn << " x " << split
             << " K slice" << (split > 1 ? "s" : "") << " over " << smCount
             << " SMs (" << waves << " wave" << (waves > 1 ? "s" : "") << "), ~"
             << int64_t(cost) << " clocks predicted"
             << (best.tile.overlap != PromotionOverlap::None
                     ? ", promotion overlapped over k-blocks"
                     : "");
          best.reason = os.str();
        }
      }
    }
  }
  finishTile(spec, smCount, groups, rows, best);
  return best;
}

} // namespace fp8
