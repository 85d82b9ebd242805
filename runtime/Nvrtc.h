//===- Nvrtc.h - Compiling generated kernels with NVRTC ---------*- C++ -*-===//
//
// NVRTC runs without a GPU: every generated kernel can be compiled to a cubin
// on any machine with the CUDA toolkit (CI does this for a config matrix).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NVRTC_H
#define FP8_RUNTIME_NVRTC_H

#include "codegen/GeneratedKernel.h"
#include "core/Status.h"

#include <string>
#include <vector>

namespace fp8 {

/// A cubin and what ptxas said about it.
struct CompiledKernel {
  std::string name;             ///< entry point
  std::vector<char> cubin;      ///< the binary
  std::string log;              ///< NVRTC + ptxas log (ptxas -v)
  double compileSeconds = 0;    ///< wall time of the compile
  double compileCpuSeconds = 0; ///< CPU time of the compiling thread (what
                                ///< the compile costs, whatever else runs)
  int registers = -1;  ///< per thread, from ptxas -v (-1: not reported)
  int spillBytes = -1; ///< spill stores + loads (-1: not reported)
  int stackBytes = -1; ///< stack frame (-1: not reported)
  /// ptxas serialised the kernel's wgmmas (C7514/C7515-style "Potential
  /// Performance Loss"): correct, but the MMA pipeline is lost.
  bool wgmmaSerialized = false;
};

/// Switches NVRTC's own program cache off (CUDA_CACHE_DISABLE=1, unless the
/// user set it): cached compiles report no ptxas figures. Idempotent; called
/// before every compile and before the CUDA driver is loaded.
void disableNvrtcCache();

/// "<major>.<minor>" of the NVRTC library in use.
std::string nvrtcVersionString();

/// The NVRTC options used for `arch` (part of every cache key).
std::vector<std::string> nvrtcOptions(Arch arch);

/// "sm_90a" -> "--gpu-architecture=sm_90a".
std::string nvrtcArchFlag(Arch arch);

/// Compiles `kernel` with NVRTC. On failure the message carries the kernel
/// name and the full NVRTC log.
Expected<CompiledKernel> compileWithNvrtc(const GeneratedKernel &kernel);

/// The PTX of `kernel`, compiled by NVRTC for the virtual architecture
/// (compute_90a or compute_100a), for inspection: fp8-codegen --emit ptx.
/// Failures carry the kernel name and the NVRTC log.
Expected<std::string> compileToPtx(const GeneratedKernel &kernel);

/// Parses ptxas -v statistics out of an NVRTC log into `k`; of a kernel of
/// several entry points, the most registers and stack frame of any entry
/// and the spills of all.
void parsePtxasInfo(const std::string &log, CompiledKernel &k);

} // namespace fp8

#endif // FP8_RUNTIME_NVRTC_H
