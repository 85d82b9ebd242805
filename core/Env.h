//===- Env.h - Every environment variable the toolkit reads -----*- C++ -*-===//
//
// The table in Env.cpp is the one list of the variables the code generator,
// the oracle and the runtime read, with their types and ranges; the README's
// "Environment variables" section lists the same names (EnvTest checks it).
// Values are parsed strictly: an integer is decimal digits only, within its
// range; a flag is 0 or 1; an unset or empty variable takes its default.
//
// checkEnvironment() names the first variable set to something else. The
// tools call it before any work and exit 2 on an error; the library entry
// points that act on a knob (kernel generation, the JIT, opening the device)
// return its error too, so no invalid value is ever used. The accessors
// below return the parsed value, or the default for an invalid one (which
// checkEnvironment() has reported).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_ENV_H
#define FP8_CODEGEN_ENV_H

#include "core/Status.h"

#include <string>
#include <vector>

namespace fp8::env {

/// One environment variable.
struct Knob {
  enum class Kind { Flag, Integer, Path };
  const char *name;
  Kind kind;
  long long min = 0, max = 0, multipleOf = 1; ///< Integer: the range
  long long fallback = 0;                     ///< Integer, Flag: default
  const char *meaning;
};
/// Every variable read, in the README's order.
const std::vector<Knob> &knobs();

/// The first variable whose value is not of its kind and range, named with
/// what it expects and what it holds.
Status checkEnvironment();

/// The disk cache directory: FP8_CACHE_DIR ("off" or "0" disables it), else
/// $XDG_CACHE_HOME/fp8-toolkit or $HOME/.cache/fp8-toolkit; "" when disabled
/// or when neither is set (there is no shared default).
std::string cacheDir();
/// FP8_JIT_DEBUG: print what the JIT does (compile/load, timings, ptxas
/// statistics) to stderr and compile with -lineinfo.
bool jitDebug();
/// FP8_DUMP_SOURCE: a directory to write every generated source to, or "".
std::string dumpSourceDir();
/// FP8_DEVICE: the CUDA device ordinal (default 0).
int deviceOrdinal();
/// FP8_TUNING_DB: the tuning database fp8::gemm reads ("": none).
std::string tuningDb();
/// FP8_SCALE_TMA: which K scales may travel by TMA on sm_90a: bit 0 A, bit 1
/// B (default 3; 0 forces the consumer-loaded path).
int scaleTmaMask();
/// FP8_KERNEL_TRACE: sm_90a GEMM kernels record a clock timeline of their
/// pipeline (read by the code generator at each kernel, by the runtime at its
/// first call).
bool kernelTrace();
/// FP8_KERNEL_DEBUG: kernels trap with a message instead of hanging.
bool kernelDebug();
/// FP8_SM90_PRODUCER_REGS / FP8_SM90_CONSUMER_REGS: override the setmaxnreg
/// budget of the sm_90a producer / consumer warpgroups (0: unset).
int sm90ProducerRegs();
int sm90ConsumerRegs();
/// FP8_THREADS: threads of the CPU oracle (0: unset, one per hardware
/// thread).
int oracleThreads();

} // namespace fp8::env

#endif // FP8_CODEGEN_ENV_H
