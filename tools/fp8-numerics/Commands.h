//===- Commands.h - The subcommands of fp8-numerics -------------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8NUMERICS_COMMANDS_H
#define FP8_TOOLS_FP8NUMERICS_COMMANDS_H

#include <cstdint>
#include <string>

namespace fp8::tools {

/// Process exit codes of fp8-numerics.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1, ///< the work itself failed (I/O, a library error)
  kExitUsage = 2,   ///< bad arguments
};

/// The largest operand a command builds: 2^31 elements, 8 GiB of f32
/// values (the codes, scales and statistics add about half as much again).
/// Larger tensors are refused before anything is allocated.
inline constexpr int64_t kMaxOperandElements = int64_t(1) << 31;

/// `fp8-numerics quantize ...`: argv[1] is "quantize".
int runQuantize(int argc, char **argv);
/// `fp8-numerics gemm ...`: argv[1] is "gemm".
int runGemm(int argc, char **argv);

/// Prints "fp8-numerics: error: <message>" to stderr and returns `code`.
int fail(const std::string &message, int code);

} // namespace fp8::tools

#endif // FP8_TOOLS_FP8NUMERICS_COMMANDS_H
