//===- main.cpp - fp8-numerics: what does this FP8 recipe cost me? --------===//
//
// Two subcommands over the CPU oracle (numerics/):
//   quantize  quantize a random or given (.npy) tensor and print the
//             statistics: underflow, overflow, range collapse, errors;
//   gemm      for one GEMM shape, a table of the error vs the promotion
//             interval and the tensor-core accumulator precision.
// `--json` prints one JSON document instead of the text report.
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-numerics/Commands.h"

#include "core/Env.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

namespace {

const char *kUsage =
    "usage: fp8-numerics <command> [options]\n"
    "\n"
    "What does an FP8 recipe cost? Bit-exact FP8 quantization and the\n"
    "promoted reference GEMM of the fp8 toolkit, on the CPU.\n"
    "\n"
    "commands:\n"
    "  quantize   quantize a tensor (random or --input x.npy) at a "
    "granularity\n"
    "             and print underflow, overflow, range collapse and errors\n"
    "  gemm       error of a GEMM shape vs promotion interval and accumulator\n"
    "             precision (against FP64 of the same FP8 values and against\n"
    "             the unquantized product)\n"
    "\n"
    "Run 'fp8-numerics <command> --help' for the options of a command.\n"
    "FP8_THREADS sets the number of threads (default: all cores).\n"
    "Exit codes: 0 success, 1 failure while running (unreadable input,\n"
    "not enough memory), 2 bad arguments (unknown options, missing or\n"
    "malformed values, sizes over the limits).\n";

} // namespace

namespace {
int run(int argc, char **argv) {
  using namespace fp8::tools;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const char *cmd = argv[1];
  if (!std::strcmp(cmd, "--help") || !std::strcmp(cmd, "-h") ||
      !std::strcmp(cmd, "help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!std::strcmp(cmd, "quantize"))
    return runQuantize(argc, argv);
  if (!std::strcmp(cmd, "gemm"))
    return runGemm(argc, argv);
  return fail(std::string("unknown command '") + cmd +
                  "' (expected quantize or gemm; see --help)",
              kExitUsage);
}
} // namespace

int main(int argc, char **argv) {
  using namespace fp8::tools;
  if (fp8::Status env = fp8::env::checkEnvironment(); !env)
    return fail(env.message(), kExitUsage);
  // The commands check sizes and memory before allocating; this is the last
  // resort for an allocation that fails anyway (memory taken meanwhile).
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    return fail("out of host memory (an allocation failed)", kExitFailure);
  } catch (const std::length_error &) {
    return fail("out of host memory (an allocation was too large)",
                kExitFailure);
  }
}
