//===- Env.h - Environment knobs of the runtime ------------------*- C++
//-*-===//
//
// Every knob is documented in the README:
//   FP8_CACHE_DIR    kernel cache directory (default
//                    $XDG_CACHE_HOME/fp8-toolkit or ~/.cache/fp8-toolkit;
//                    without either, memory only); "off" disables the disk
//                    cache
//   FP8_JIT_DEBUG    1: print what the JIT does (compile/load, timings, ptxas
//                    statistics) to stderr and compile with -lineinfo
//   FP8_DUMP_SOURCE  a directory: write every generated source there
//   FP8_DEVICE       CUDA device ordinal (default 0)
//   FP8_SCALE_TMA    which K scales may travel by TMA on sm_90a: bit 0 A,
//                    bit 1 B (default 3; 0 forces the consumer-loaded path)
//   FP8_KERNEL_TRACE 1: sm_90a GEMM kernels record a clock timeline of their
//                    pipeline, returned in GemmReport::trace (each traced
//                    call synchronises its stream); read by the code
//                    generator at each compile, by the runtime at its
//                    first call
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_ENV_H
#define FP8_RUNTIME_ENV_H

#include <string>

namespace fp8::env {

/// The disk cache directory ("" when disabled, or when neither
/// XDG_CACHE_HOME nor HOME is set: there is no shared default).
std::string cacheDir();
/// True when FP8_JIT_DEBUG is set to a non-zero value.
bool jitDebug();
/// FP8_DUMP_SOURCE, or "".
std::string dumpSourceDir();
/// FP8_DEVICE, or 0.
int deviceOrdinal();
/// FP8_SCALE_TMA, or 3.
int scaleTmaMask();
/// True when FP8_KERNEL_TRACE is set to a non-zero value.
bool kernelTrace();

} // namespace fp8::env

#endif // FP8_RUNTIME_ENV_H
