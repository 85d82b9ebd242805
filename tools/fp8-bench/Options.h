//===- Options.h - fp8-bench's command line ---------------------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_OPTIONS_H
#define FP8_TOOLS_FP8_BENCH_OPTIONS_H

#include "codegen/Sm90Heuristics.h"
#include "core/KernelSpec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8::bench {

/// What the command line asks for.
struct Options {
  std::string shapes = "bench/shapes.json";
  std::string jsonOut;
  std::vector<int64_t> ms;
  int iters = 30;
  bool peers = true;
  bool flush = true;
  bool jit = true;
  bool sweep = false; ///< also time a grid of tile configs per shape
  /// The grid --sweep times (--sweep-full: with 2-CTA clusters, overlap n).
  Sm90TileGrid sweepGrid;
  std::string only;               ///< "MxNxK"
  std::optional<TileConfig> tile; ///< --tile JSON: force a configuration
  bool perTensor = false;         ///< --recipe per-tensor
  int promotion = 128;            ///< --promotion P (0: tensor cores only)
  bool amax = false;              ///< --amax: our GEMMs also write D's amax
  bool trace = false;             ///< --trace: print each kernel's timeline
  bool grouped = false; ///< --grouped: the grouped (MoE) section instead
  /// --memory-bound: the memory-bound steps instead, on one [rows, cols]
  /// tensor (--memory-shape RxC); --memory-only TEXT: those whose name
  /// holds TEXT.
  bool memoryBound = false;
  int64_t memoryRows = 8192, memoryCols = 8192;
  std::string memoryOnly;
};

/// Reads argv; prints the usage and exits 0 on --help, prints a message and
/// exits 2 on a bad argument.
Options parseArgs(int argc, char **argv);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_OPTIONS_H
