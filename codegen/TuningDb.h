//===- TuningDb.h - Measured tile configurations, by recipe and shape -----===//
//
// The tuning database: tile configurations measured for concrete GEMMs,
// written by fp8-tune (runtime/Tuner.h) and read by fp8::gemm, fp8-run,
// fp8-bench (FP8_TUNING_DB) and --fp8-select-config{tuning-db=PATH}. One
// JSON file (docs/pipeline.md, "Tuning database"):
//
//   {"format": 2,
//    "entries": [
//      {"spec": <KernelSpec JSON: arch, recipe, m, n, k and the tile>,
//       "m_bucket": 4096,                      (written; tuningMBucket(m))
//       "device": {"name": "NVIDIA H200", "sm_count": 132, "clock_mhz":
//                  1980, "driver": 13000, "cuda": 13000},   (optional)
//       "generator": "3f0c...",                (optional)
//       "tflops": 712.4,                       (optional, informative)
//       "note": "fp8-tune 2026-11-28"}]}       (optional)
//
// A lookup matches the arch, the kind, both operands (format, layout,
// granularity), the promotion interval, the output type and accumulation
// exactly, and the GPU (name and SM count) when the entry records one.
// Entries measured with another generator version (the device headers,
// kTuningGeneratorRevision) are dropped at load. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_TUNINGDB_H
#define FP8_CODEGEN_TUNINGDB_H

#include "core/KernelSpec.h"
#include "core/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// The database format this build writes; it reads format 1 too (entries
/// without a device or generator: hand-written, they match any GPU).
inline constexpr int kTuningDbFormat = 2;

/// The largest database file load() reads.
inline constexpr int64_t kMaxTuningDbBytes = int64_t(64) << 20;

/// Bumped when the generator's emission changes what a tile config means
/// (its speed), so that measurements of older kernels stop applying.
inline constexpr int kTuningGeneratorRevision = 1;

/// A 16-hex-digit hash of what decides a tile's meaning: every device
/// header the generator embeds and kTuningGeneratorRevision.
const std::string &tuningGeneratorVersion();

/// The M bucket entries are stored and looked up under (dynamic M): the
/// smallest power of two at or above m (1 for m <= 1).
int64_t tuningMBucket(int64_t m);

/// The GPU a configuration was measured on.
struct TuningDevice {
  std::string name;
  int smCount = 0;
  int clockMHz = 0;      ///< recorded, not matched
  int driverVersion = 0; ///< cuDriverGetVersion; recorded, not matched
  int cudaVersion = 0;   ///< NVRTC's, 1000 * major + 10 * minor; recorded

  /// The same GPU model: name and SM count.
  bool sameGpu(const TuningDevice &o) const {
    return name == o.name && smCount == o.smCount;
  }
  /// "NVIDIA H200, 132 SMs, 1980 MHz, driver 13000, CUDA 13000".
  std::string describe() const;
};

/// One measured configuration.
struct TuningEntry {
  KernelSpec spec; ///< the GEMM (m, n, k static) and its tile
  double tflops = 0;
  std::string note;
  std::optional<TuningDevice> device; ///< none: hand-written, any GPU
  std::string generator;              ///< tuningGeneratorVersion(); "": any
};

/// The entries of one database file.
class TuningDb {
public:
  /// Reads and checks `path` (a regular file of at most kMaxTuningDbBytes,
  /// see readInputFile); errors name the file and the entry. Entries of
  /// another generator version are dropped (staleEntries counts them).
  static Expected<TuningDb> load(const std::string &path);
  /// Parses the text of a database; `where` names it in errors.
  static Expected<TuningDb> parse(const std::string &text,
                                  const std::string &where);

  /// What a lookup found.
  struct Match {
    TileConfig tile;
    int64_t m = 0, n = 0, k = 0; ///< the shape the entry was measured for
    bool exact = false;          ///< same M, N and K
    bool tuned = false;          ///< measured on a recorded GPU (fp8-tune)
    double tflops = 0;
    std::string note;
  };

  /// The configuration for `spec`'s recipe and shape; `m` stands for
  /// spec.m (pass the hint when spec.m is dynamic). With `device`, entries
  /// of another GPU are skipped (hand-written ones still match). Among the
  /// rest: the same N and K first, then the same M bucket, then the
  /// nearest M; else the nearest (M, N, K) overall. nullopt when no entry
  /// has the recipe.
  std::optional<Match> lookup(const KernelSpec &spec, int64_t m,
                              const TuningDevice *device = nullptr) const;

  const std::vector<TuningEntry> &entries() const { return entries_; }
  /// Adds `e`, replacing the entry of the same GPU, generator, recipe, N,
  /// K and M bucket if there is one.
  void add(TuningEntry e);
  /// The database as JSON (format kTuningDbFormat).
  std::string toJSON(int indent = 2) const;

  /// Entries dropped at load for another generator version.
  size_t staleEntries() const { return stale_; }
  /// What to tell the user about them ("" when none); `where` names the
  /// file.
  std::string staleMessage(const std::string &where) const;

  /// Merges `entries` into the database file `path`, safely when several
  /// processes update one file: an exclusive lock (flock) on
  /// `path` + ".lock", the file read again under it (missing: an empty
  /// database; unreadable or corrupt: an error, the file left as it is),
  /// each entry added, the result written to a temporary file beside it,
  /// synced and renamed over `path`. Entries of another generator version
  /// found in the file are not written back.
  static Status update(const std::string &path,
                       const std::vector<TuningEntry> &entries);

private:
  std::vector<TuningEntry> entries_;
  size_t stale_ = 0;
};

} // namespace fp8

#endif // FP8_CODEGEN_TUNINGDB_H
