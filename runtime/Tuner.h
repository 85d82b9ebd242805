//===- Tuner.h - Tile configurations measured on the GPU --------*- C++ -*-===//
//
// What fp8-tune does for one GEMM (dense or grouped), as a library call:
// the candidate tiles the generator builds for the spec and M
// (codegen/Sm90Heuristics.h's grid: widths, promotion overlap, clusters,
// split-K, with the heuristic's own tile among them), compiled in parallel
// on the CPU's cores (NVRTC), each timed on the GPU on random operands of
// the spec's recipe, their scales in the layouts a plan gives its GEMMs (by
// TMA where the kernel can; L2 flushed before every run, warm-up runs
// first, the median of the runs; a candidate whose runs spread more than
// kTuneSpreadLimit is timed again and keeps its steadier measurement), and
// the winner checked against the CPU oracle on a corner of the output. The
// result is what the tuning database (codegen/TuningDb.h) records.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_TUNER_H
#define FP8_RUNTIME_TUNER_H

#include "codegen/Sm90Heuristics.h"
#include "codegen/TuningDb.h"
#include "core/KernelSpec.h"
#include "core/Status.h"
#include "runtime/CudaDriver.h"

#include <functional>
#include <string>
#include <vector>

namespace fp8 {

/// Runs of a candidate whose 90th percentile exceeds its 10th by more than
/// this factor are timed again (a clock change, another process).
inline constexpr double kTuneSpreadLimit = 1.25;

/// Where a tuning run is, for a progress bar.
struct TuneProgress {
  const char *phase = ""; ///< "compile" or "time"
  size_t done = 0, total = 0;
};

struct TuneOptions {
  /// The candidates: the full grid (clusters, overlap over N halves too);
  /// the heuristic's own tile is always among them.
  Sm90TileGrid grid = fullGrid();
  int iters = 20;         ///< timed runs a candidate (median)
  int warmup = 3;         ///< untimed runs first
  bool flushL2 = true;    ///< a 256 MiB memset before each timed run
  int compileThreads = 0; ///< NVRTC threads; 0: the hardware's
  bool neighbours = true; ///< also the heuristic tile's neighbours
  std::function<void(const TuneProgress &)> progress;

  static Sm90TileGrid fullGrid() {
    Sm90TileGrid g;
    g.full = true;
    return g;
  }
};

/// One candidate's outcome.
struct TunedTile {
  TileConfig tile;
  double ms = 0;     ///< median kernel time (0 when it did not run)
  double spread = 0; ///< p90 / p10 of its runs
  std::string error; ///< why it did not compile or run
};

struct TuneResult {
  KernelSpec spec; ///< m set, the winner's tile
  double ms = 0, tflops = 0;
  TileConfig heuristicTile;
  double heuristicMs = 0;
  std::vector<TunedTile> candidates;
  /// The winner against the CPU oracle on its first rows and columns:
  /// DeepGEMM's similarity difference (0 is identical) and the corner's
  /// size.
  double oracleDiff = 0;
  int64_t oracleRows = 0, oracleCols = 0;
};

/// The winner's difference to the oracle above which tuneGemm fails: the
/// kernels sum as the oracle does, split-K only reorders the slices' sums.
inline constexpr double kTuneOracleBound = 1e-5;

/// The tiles tuneGemm times for `spec` at `m` rows on `smCount` SMs: the
/// grid's (sm90CandidateTiles), the heuristic's own (first), and its
/// neighbours the grid does not enumerate (192-row tiles, the tail split):
/// its tile with the other rasterisation, tail splits of 1, 2 and 4, and
/// 1x1, 1x2 and 2x1 clusters, each that the generator accepts (unless
/// `options.neighbours` is off). A dense GEMM of one band of tile rows is
/// not timed in the other rasterisation: the same schedule.
std::vector<TileConfig> tuneCandidates(const KernelSpec &spec, int64_t m,
                                       int smCount, const TuneOptions &options);

/// Compiles the kernels of `tiles` for `spec` at `m` rows on
/// `options.compileThreads` threads, without a GPU (the kernel cache serves
/// the launches after); a tile that does not compile gets its error.
Status compileCandidates(const KernelSpec &spec, int64_t m,
                         std::vector<TunedTile> &tiles,
                         const TuneOptions &options);

/// Whether tuneGemm measures `spec`: an sm_90a GEMM, dense or grouped (the
/// MoE forms of runtime/GroupedGemm.h), with K-major operands and no
/// epilogue, accumulating into C or not (the error says what it is).
Status checkTunable(const KernelSpec &spec);

/// The group tensor a grouped `spec` is timed with at `m` rows (as tuneGemm
/// takes m): contiguous, offsets splitting the m rows evenly over the
/// groups; along K, offsets splitting K's whole 128-wide blocks; the first
/// group never empty; masked, every group holding the spec's expected rows
/// (spec.m, at most m; all m when unset).
std::vector<int32_t> tuneGroups(const KernelSpec &spec, int64_t m);

/// Tunes `spec` (checkTunable) at `m` rows on the runtime's device: a
/// grouped GEMM's m as fp8::groupedGemm takes it (every group's rows; a
/// masked slab's; along K, D's rows), its tile chosen and its entry keyed
/// at the rows the runtime chooses for (a masked GEMM's expected rows),
/// its groups tuneGroups', its oracle corner the first group's. Fails when
/// no candidate runs or the winner disagrees with the oracle.
Expected<TuneResult> tuneGemm(const KernelSpec &spec, int64_t m,
                              const TuneOptions &options);

/// The tuning database entry of a result measured on `device`: the
/// winner's spec and speed, this generator's version, and a note naming
/// `who` and the day (UTC).
TuningEntry tuningEntry(const TuneResult &result, const TuningDevice &device,
                        const std::string &who);

/// Turns on tuning on first use (runtime/Gemm.h, setFirstUseTuner) with
/// tuneGemm and `options`. With a `dbPath`, that file becomes the tuning
/// database (setTuningDatabase; an empty one while the file does not exist)
/// and every new entry is merged into it (TuningDb::update: safe when
/// several processes tune into one file, the file created if missing);
/// without one, the entries stay in memory next to FP8_TUNING_DB's.
/// Each tuning prints a line on stderr (the GEMM, then its tile and speed).
Status tuneOnFirstUse(const std::string &dbPath,
                      const TuneOptions &options = {});

/// Turns tuning on first use off; the tiles tuned so far stay in use.
void stopTuningOnFirstUse();

} // namespace fp8

#endif // FP8_RUNTIME_TUNER_H
