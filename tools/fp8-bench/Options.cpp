//===- Options.cpp - fp8-bench's command line -----------------------------===//

#include "tools/fp8-bench/Options.h"

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/MemoryBound.h"

#include "core/ParseNumber.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace fp8::bench {

namespace {

[[noreturn]] void usage(int code) {
  std::fprintf(
      code ? stderr : stdout,
      "usage: fp8-bench [--shapes FILE] [--m 128,4096] [--only MxNxK]\n"
      "                 [--iters N] [--json FILE] [--no-peers]\n"
      "                 [--no-flush] [--no-jit] [--sweep] [--sweep-full]\n"
      "                 [--sweep-widths 64,128,...] [--sweep-splits 1,2,...]\n"
      "                 [--tile JSON]\n"
      "                 [--recipe deepseek|per-tensor] [--promotion P]\n"
      "                 [--amax]\n"
      "                 [--trace] [--grouped]\n"
      "                 [--memory-bound [--memory-shape RxC]\n"
      "                  [--memory-only TEXT]]\n"
      "Benchmarks the generated sm_90a kernels against cuBLASLt on the\n"
      "shapes of FILE (default bench/shapes.json).\n"
      "  --recipe R     deepseek (default): A 1x128, B 128x128, the\n"
      "                 recipe of the block-scaled peer; per-tensor: one\n"
      "                 scale per operand (the per-tensor peer's recipe;\n"
      "                 the block-scaled peer is then not run)\n"
      "  --promotion P  promotion interval in K elements (default 128;\n"
      "                 0 = tensor-core accumulation only, per-tensor only)\n"
      "  --amax         our GEMMs also write D's amax from their epilogue\n"
      "                 (GemmRecipe::amaxOut; the peers do not)\n"
      "  --sweep        also time every legal tile width x overlap (none,\n"
      "                 k) x split-K per shape (the heuristic's data)\n"
      "  --sweep-full   the same grid with 2-CTA clusters (2x1 and 1x2) and\n"
      "                 overlap n\n"
      "  --sweep-widths W  the tile widths the sweep times (default 64-256)\n"
      "  --sweep-splits S  the split-K slice counts it times at M <= 1024\n"
      "                 (default 1,2,4,8)\n"
      "  --grouped      the grouped (MoE) GEMMs of FILE's grouped_contiguous,\n"
      "                 grouped_masked and grouped_masked_decode lists\n"
      "                 (group rows drawn +-30%% around M_per_group, fixed\n"
      "                 seed) against a loop of cuBLASLt block-scaled\n"
      "                 GEMMs, one per group; TFLOP/s of the valid rows\n"
      "  --memory-bound every quantize form, the FP8 transpose and an\n"
      "                 elementwise add on one bf16 tensor (--memory-shape,\n"
      "                 default 8192x8192: 128 MiB), each checked against\n"
      "                 the CPU oracle, then timed (L2 flushed): GB/s and %%\n"
      "                 of DRAM bandwidth; exit 1 when one differs\n"
      "  --memory-shape RxC  its tensor: rows and columns in [1, 65536]\n"
      "                 (ragged ones too: every kernel takes them)\n"
      "  --memory-only TEXT  only the memory-bound steps whose name holds\n"
      "                 TEXT, in any case (e.g. per-tensor, 1x128, MX)\n"
      "  --trace        compile our kernels with FP8_KERNEL_TRACE=1 and print\n"
      "                 each one's pipeline timeline (clock medians per\n"
      "                 k-block); the stamps cost time, so its TF/s are not\n"
      "                 comparable with an untraced run\n");
  std::exit(code);
}

/// A comma-separated list of integers in [lo, hi], multiples of `step`;
/// anything else exits with a message naming the flag (`what`: the values
/// expected).
std::vector<int> intList(const char *flag, const std::string &text, int lo,
                         int hi, int step, const char *what) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string t;
  while (std::getline(ss, t, ',')) {
    const std::optional<int64_t> v = parseInteger(t, lo, hi);
    if (!v || *v % step) {
      std::fprintf(stderr,
                   "fp8-bench: %s: expected %s in [%d, %d], found '%s'\n", flag,
                   what, lo, hi, t.c_str());
      std::exit(2);
    }
    out.push_back(int(*v));
  }
  return out;
}

} // namespace

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fp8-bench: expected a value after %s\n",
                     a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--shapes")
      o.shapes = next();
    else if (a == "--json")
      o.jsonOut = next();
    else if (a == "--iters") {
      auto iters = parseInteger(next(), 1, 1000000, "--iters");
      if (!iters) {
        std::fprintf(stderr, "fp8-bench: %s\n", iters.message().c_str());
        std::exit(2);
      }
      o.iters = int(*iters);
    } else if (a == "--m") {
      std::stringstream ss(next());
      std::string t;
      while (std::getline(ss, t, ',')) {
        auto m = parseInteger(t, 1, kMaxBenchM, "each --m");
        if (!m) {
          std::fprintf(stderr, "fp8-bench: %s\n", m.message().c_str());
          std::exit(2);
        }
        o.ms.push_back(*m);
      }
    } else if (a == "--only")
      o.only = next();
    else if (a == "--no-peers")
      o.peers = false;
    else if (a == "--no-flush")
      o.flush = false;
    else if (a == "--no-jit")
      o.jit = false;
    else if (a == "--trace")
      o.trace = true;
    else if (a == "--grouped")
      o.grouped = true;
    else if (a == "--memory-bound")
      o.memoryBound = true;
    else if (a == "--memory-shape") {
      const std::string v = next();
      const size_t x = v.find('x');
      const std::optional<int64_t> r =
          x == std::string::npos ? std::nullopt
                                 : parseInteger(v.substr(0, x), 1, 65536);
      const std::optional<int64_t> c =
          x == std::string::npos ? std::nullopt
                                 : parseInteger(v.substr(x + 1), 1, 65536);
      if (!r || !c) {
        std::fprintf(stderr,
                     "fp8-bench: --memory-shape: expected RxC, rows and "
                     "columns in [1, 65536], found '%s'\n",
                     v.c_str());
        std::exit(2);
      }
      o.memoryRows = *r;
      o.memoryCols = *c;
    } else if (a == "--memory-only") {
      o.memoryBound = true;
      o.memoryOnly = next();
      const std::vector<std::string> steps = memoryBoundSteps();
      if (std::none_of(steps.begin(), steps.end(), [&](const std::string &s) {
            return memoryStepSelected(s, o.memoryOnly);
          })) {
        std::string names;
        for (const std::string &s : steps)
          names += (names.empty() ? "" : ", ") + s;
        std::fprintf(stderr,
                     "fp8-bench: --memory-only: expected part of a "
                     "memory-bound step's name (%s), found '%s'\n",
                     names.c_str(), o.memoryOnly.c_str());
        std::exit(2);
      }
    } else if (a == "--sweep")
      o.sweep = true;
    else if (a == "--sweep-full")
      o.sweep = o.sweepGrid.full = true;
    else if (a == "--sweep-widths")
      o.sweepGrid.widths =
          intList("--sweep-widths", next(), 8, 256, 8, "multiples of 8");
    else if (a == "--sweep-splits")
      o.sweepGrid.splits =
          intList("--sweep-splits", next(), 1, 64, 1, "slice counts");
    else if (a == "--recipe") {
      const std::string r = next();
      if (r != "deepseek" && r != "per-tensor") {
        std::fprintf(stderr,
                     "fp8-bench: --recipe: expected deepseek or per-tensor, "
                     "found '%s'\n",
                     r.c_str());
        std::exit(2);
      }
      o.perTensor = r == "per-tensor";
    } else if (a == "--promotion") {
      const std::string v = next();
      const std::optional<int64_t> p = parseInteger(v, 0, 1 << 20);
      if (!p) {
        std::fprintf(stderr,
                     "fp8-bench: --promotion: expected a number of K "
                     "elements in [0, 1048576], found '%s'\n",
                     v.c_str());
        std::exit(2);
      }
      o.promotion = int(*p);
    } else if (a == "--amax") {
      o.amax = true;
    } else if (a == "--tile") {
      auto t = tileConfigFromJSON(next());
      if (!t) {
        std::fprintf(stderr, "fp8-bench: --tile: %s\n", t.message().c_str());
        std::exit(2);
      }
      o.tile = *t;
    } else if (a == "--help" || a == "-h")
      usage(0);
    else {
      std::fprintf(stderr, "fp8-bench: unknown argument '%s'\n", a.c_str());
      usage(2);
    }
  }
  return o;
}

} // namespace fp8::bench
