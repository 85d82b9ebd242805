//===- TuningDb.h - Measured tile configurations, by recipe and shape -----===//
//
// The tuning database: tile configurations measured for concrete GEMMs, read
// by --fp8-select-config{tuning-db=PATH} (and written by a tuner). One JSON
// file (docs/pipeline.md, "Tuning database"):
//
//   {"format": 1,
//    "entries": [
//      {"spec": <KernelSpec JSON: arch, recipe, m, n, k and the tile>,
//       "tflops": 712.4,                       (optional, informative)
//       "note": "fp8-bench --sweep, H100"}]}   (optional)
//
// A lookup matches the arch, the kind, both operands (format, layout,
// granularity), the promotion interval, the output type and accumulation
// exactly; among those entries it takes the one with the same N and K and
// the nearest M (in log2 distance), else the nearest (M, N, K) overall.
// Plain C++, no MLIR.
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

/// The database format this build reads and writes.
inline constexpr int kTuningDbFormat = 1;

/// The largest database file load() reads.
inline constexpr int64_t kMaxTuningDbBytes = int64_t(64) << 20;

/// One measured configuration.
struct TuningEntry {
  KernelSpec spec; ///< the GEMM (m, n, k static) and its tile
  double tflops = 0;
  std::string note;
};

/// The entries of one database file.
class TuningDb {
public:
  /// Reads and checks `path` (a regular file of at most kMaxTuningDbBytes,
  /// see readInputFile); errors name the file and the entry.
  static Expected<TuningDb> load(const std::string &path);
  /// Parses the text of a database; `where` names it in errors.
  static Expected<TuningDb> parse(const std::string &text,
                                  const std::string &where);

  /// What a lookup found.
  struct Match {
    TileConfig tile;
    int64_t m = 0, n = 0, k = 0; ///< the shape the entry was measured for
    bool exact = false;          ///< same M, N and K
    double tflops = 0;
  };

  /// The configuration for `spec`'s recipe and shape; `m` stands for
  /// spec.m (pass the hint when spec.m is dynamic). nullopt when no entry
  /// has the recipe.
  std::optional<Match> lookup(const KernelSpec &spec, int64_t m) const;

  const std::vector<TuningEntry> &entries() const { return entries_; }
  void add(TuningEntry e) { entries_.push_back(std::move(e)); }
  /// The database as JSON (the format above).
  std::string toJSON(int indent = 2) const;

private:
  std::vector<TuningEntry> entries_;
};

} // namespace fp8

#endif // FP8_CODEGEN_TUNINGDB_H
