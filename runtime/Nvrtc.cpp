//===- Nvrtc.cpp - Compiling generated kernels with NVRTC -----------------===//

#include "runtime/Nvrtc.h"
#include "core/Env.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <time.h>

namespace fp8 {

namespace {
/// CPU time of the calling thread: NVRTC and ptxas run in it.
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
} // namespace

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtcArchFlag(Arch arch) {
  return std::string("--gpu-architecture=") +
         (arch == Arch::SM90a ? "sm_90a" : "sm_100a");
}

std::vector<std::string> nvrtcOptions(Arch arch) {
  std::vector<std::string> opts = {
      nvrtcArchFlag(arch),
      "-std=c++17",
      // No fast-math: fmaf/mul must round like the CPU oracle, and UE8M0's
      // 2^-127 is a float denormal that -ftz would flush.
      "--ptxas-options=-v",
  };
  if (env::jitDebug())
    opts.push_back("-lineinfo");
  return opts;
}

void parsePtxasInfo(const std::string &log, CompiledKernel &k) {
  // One report per entry point: the kernel's figures are the most of any
  // entry (registers, stack frame) and the spills of all.
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  k.registers = k.stackBytes = k.spillBytes = -1;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), regs);
       it != std::sregex_iterator(); ++it)
    k.registers = std::max(k.registers, std::stoi((*it)[1]));
  for (auto it = std::sregex_iterator(log.begin(), log.end(), frame);
       it != std::sregex_iterator(); ++it) {
    k.stackBytes = std::max(k.stackBytes, std::stoi((*it)[1]));
    k.spillBytes =
        std::max(k.spillBytes, 0) + std::stoi((*it)[2]) + std::stoi((*it)[3]);
  }
  k.wgmmaSerialized = log.find("wgmma.mma_async instructions are serialized") !=
                      std::string::npos;
}

namespace {
/// A created NVRTC program with the kernel headers, destroyed on scope exit.
struct Program {
  nvrtcProgram prog = nullptr;
  ~Program() {
    if (prog)
      nvrtcDestroyProgram(&prog);
  }
};

Status createProgram(const GeneratedKernel &kernel, Program &p) {
  const auto &headers = kernelHeaders();
  std::vector<const char *> hdrSrc, hdrNames;
  for (const auto &[name, text] : headers) {
    hdrNames.push_back(name.c_str());
    hdrSrc.push_back(text.c_str());
  }
  std::string file = kernel.name + ".cu";
  nvrtcResult r =
      nvrtcCreateProgram(&p.prog, kernel.source.c_str(), file.c_str(),
                         int(headers.size()), hdrSrc.data(), hdrNames.data());
  if (r != NVRTC_SUCCESS) {
    p.prog = nullptr;
    return errorf("nvrtcCreateProgram failed for kernel ", kernel.name, ": ",
                  nvrtcGetErrorString(r));
  }
  return Status::ok();
}

std::string programLog(nvrtcProgram prog) {
  std::string log;
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    log.resize(logSize);
    nvrtcGetProgramLog(prog, log.data());
    log.resize(logSize - 1);
  }
  return log;
}
} // namespace

Expected<std::string> compileToPtx(const GeneratedKernel &kernel) {
  disableNvrtcCache();
  Program p;
  FP8_RETURN_IF_ERROR(createProgram(kernel, p));
  std::vector<std::string> opts = {kernel.arch == Arch::SM90a
                                       ? "--gpu-architecture=compute_90a"
                                       : "--gpu-architecture=compute_100a",
                                   "-std=c++17"};
  std::vector<const char *> optPtrs;
  for (const auto &o : opts)
    optPtrs.push_back(o.c_str());
  nvrtcResult r =
      nvrtcCompileProgram(p.prog, int(optPtrs.size()), optPtrs.data());
  if (r != NVRTC_SUCCESS)
    return errorf("NVRTC failed to compile kernel ", kernel.name, " to PTX (",
                  opts[0], "): ", nvrtcGetErrorString(r), "\n",
                  programLog(p.prog));
  size_t size = 0;
  r = nvrtcGetPTXSize(p.prog, &size);
  std::string ptx;
  if (r == NVRTC_SUCCESS) {
    ptx.resize(size);
    r = nvrtcGetPTX(p.prog, ptx.data());
  }
  if (r != NVRTC_SUCCESS || size == 0)
    return errorf("NVRTC produced no PTX for kernel ", kernel.name, ": ",
                  nvrtcGetErrorString(r));
  if (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return ptx;
}

// NOTE: NVRTC 12.9+ keeps its own cache of compiled programs on machines
// with a CUDA driver. A compile served from it returns no ptxas report (no
// register, spill or wgmma-serialisation figures: measured on the H100, where
// a second test run saw -1 registers everywhere) and takes no compile time.
// Our KernelCache already keeps cubins, so NVRTC's cache is switched off
// (CUDA_CACHE_DISABLE=1) unless the user has set CUDA_CACHE_DISABLE. The
// driver reads it when it is loaded, so runtime/CudaDriver.cpp calls this
// before dlopen too.
void disableNvrtcCache() {
  static const bool once = [] {
    setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);
    return true;
  }();
  (void)once;
}

Expected<CompiledKernel> compileWithNvrtc(const GeneratedKernel &kernel) {
  disableNvrtcCache();
  auto start = std::chrono::steady_clock::now();
  const double cpuStart = threadCpuSeconds();
  Program p;
  FP8_RETURN_IF_ERROR(createProgram(kernel, p));
  std::vector<std::string> opts = nvrtcOptions(kernel.arch);
  std::vector<const char *> optPtrs;
  for (const auto &o : opts)
    optPtrs.push_back(o.c_str());
  nvrtcResult r =
      nvrtcCompileProgram(p.prog, int(optPtrs.size()), optPtrs.data());

  CompiledKernel out;
  out.name = kernel.name;
  out.log = programLog(p.prog);
  if (r != NVRTC_SUCCESS) {
    std::string where;
    if (auto dir = env::dumpSourceDir(); !dir.empty())
      where = " (source dumped to " + dir + "/" + kernel.name + ".cu)";
    return errorf("NVRTC failed to compile kernel ", kernel.name, " for ",
                  nvrtcArchFlag(kernel.arch), ": ", nvrtcGetErrorString(r),
                  where, "\n", out.log);
  }
  size_t cubinSize = 0;
  r = nvrtcGetCUBINSize(p.prog, &cubinSize);
  if (r == NVRTC_SUCCESS) {
    out.cubin.resize(cubinSize);
    r = nvrtcGetCUBIN(p.prog, out.cubin.data());
  }
  if (r != NVRTC_SUCCESS || cubinSize == 0)
    return errorf("NVRTC produced no cubin for kernel ", kernel.name, ": ",
                  nvrtcGetErrorString(r));
  out.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  out.compileCpuSeconds = threadCpuSeconds() - cpuStart;
  parsePtxasInfo(out.log, out);
  return out;
}

} // namespace fp8
