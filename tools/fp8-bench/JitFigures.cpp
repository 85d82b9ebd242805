//===- JitFigures.cpp - fp8-bench's JIT measurements ----------------------===//

#include "tools/fp8-bench/JitFigures.h"

#include "codegen/Sm90Gemm.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/KernelCache.h"
#include "runtime/Nvrtc.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fp8::bench {

using json = nlohmann::json;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// NVRTC's one-time start-up (its builtins, ptxas) falls on the first
/// compile of a process, whatever the kernel (30-60 ms on the CPU machine,
/// 45 ms on the GPU host, docs/results/h100-2026-11-22j/). When the
/// benchmark's kernels came from the disk cache, nothing has paid it yet: a
/// one-line kernel pays it here, timed on its own, so that the figures
/// after it are the kernels' own compile times. Returns milliseconds.
double nvrtcStartupMs() {
  GeneratedKernel warm;
  warm.name = "fp8_nvrtc_startup";
  warm.source = "extern \"C\" __global__ void fp8_nvrtc_startup() {}\n";
  const auto w0 = std::chrono::steady_clock::now();
  (void)check(compileWithNvrtc(warm), "NVRTC start-up");
  return secondsSince(w0) * 1e3;
}

/// The host cost of one fp8::gemm call for a loaded kernel, in
/// microseconds: without (perCall[0]) and with (perCall[1]) extent checks.
void dispatchCost(const GemmRecipe &recipe, const Shape &sh,
                  const CudaDriver &d, CUstream stream, double perCall[2]) {
  GemmTensors t; // a small problem's buffers
  DeviceBuffer dA = check(DeviceBuffer::alloc(size_t(sh.m * sh.k)), "A");
  DeviceBuffer dB = check(DeviceBuffer::alloc(size_t(sh.n * sh.k)), "B");
  const int64_t kb = (sh.k + 127) / 128;
  DeviceBuffer sa = check(DeviceBuffer::alloc(size_t(sh.m * kb * 4)), "sa");
  DeviceBuffer sb =
      check(DeviceBuffer::alloc(size_t((sh.n + 127) / 128 * kb * 4)), "sb");
  DeviceBuffer dD = check(DeviceBuffer::alloc(size_t(sh.m * sh.n * 2)), "D");
  t.a = dA.get();
  t.b = dB.get();
  t.scaleA = sa.get();
  t.scaleB = sb.get();
  t.d = dD.get();
  checkOk(dA.fill(0x38), "A");
  checkOk(dB.fill(0x38), "B");
  checkOk(sa.fill(0), "sa");
  checkOk(sb.fill(0), "sb");
  for (int checked = 0; checked < 2; ++checked) {
    GemmOptions go;
    go.checkExtents = checked == 1;
    checkOk(gemm(recipe, sh.m, sh.n, sh.k, t, stream, go), "fp8::gemm");
    d.cuStreamSynchronize(stream);
    const int calls = 200;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      (void)gemm(recipe, sh.m, sh.n, sh.k, t, stream, go); // checked above
    perCall[checked] = secondsSince(t0) / calls * 1e6;
    d.cuStreamSynchronize(stream);
  }
}

/// `first` and the distinct kernels of the other shapes, in shape order.
std::vector<GeneratedKernel> distinctKernels(const GemmRecipe &recipe,
                                             const std::vector<Shape> &shapes,
                                             int smCount,
                                             const GeneratedKernel &first) {
  std::vector<GeneratedKernel> kernels = {first};
  for (const Shape &other : shapes) {
    auto os = gemmKernelSpec(recipe, other.m, other.n, other.k, smCount,
                             std::nullopt);
    if (!os)
      continue;
    auto og = check(emitSm90Gemm(*os), "emit");
    bool seen = false;
    for (const auto &k : kernels)
      seen = seen || k.name == og.name;
    if (!seen)
      kernels.push_back(og);
  }
  return kernels;
}

/// Each kernel is compiled kColdRuns times and its median taken: single
/// compiles on the GPU host spread widely from run to run (0.41-0.64 s for
/// one kernel; docs/journal/2026-11-22-hopper-kernel.md, 22h); the slowest
/// single compile is reported too.
constexpr int kColdRuns = 3;

/// The cold compiles of one kernel. Each sample is split into NVRTC's own
/// time and the rest (the cache entry written, fsynced and renamed: ~1-2 ms
/// on the GPU host, docs/results/h100-2026-11-22k/gpu-check/summary.md).
struct Cold {
  std::string kernel;
  std::vector<double> ms, nvrtcMs;
  double median = 0, nvrtcMedian = 0;
};

/// Every kernel of `kernels` compiled cold kColdRuns times, each in a
/// fresh cache under `dir` (the first shape's kernel, `first`, reuses its
/// compile `c1`); sorted by median. `maxSingle`: the slowest single compile.
std::vector<Cold> coldCompiles(const std::vector<GeneratedKernel> &kernels,
                               const std::string &first, const CubinHandle &c1,
                               const std::string &dir, double &maxSingle) {
  std::vector<Cold> colds;
  int fresh = 0;
  maxSingle = 0;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (const auto &kg : kernels) {
    Cold c{kg.name, {}, {}, 0, 0};
    if (kg.name == first) {
      c.ms.push_back(c1.seconds * 1e3);
      c.nvrtcMs.push_back(c1.kernel->compileSeconds * 1e3);
    }
    while (int(c.ms.size()) < kColdRuns) {
      KernelCache freshCache(dir + "/" + std::to_string(fresh++));
      auto h = check(freshCache.get(kg), "cold compile");
      c.ms.push_back(h.seconds * 1e3);
      c.nvrtcMs.push_back(h.kernel->compileSeconds * 1e3);
    }
    c.median = median(c.ms);
    c.nvrtcMedian = median(c.nvrtcMs);
    maxSingle =
        std::max(maxSingle, *std::max_element(c.ms.begin(), c.ms.end()));
    colds.push_back(c);
  }
  std::sort(colds.begin(), colds.end(),
            [](const Cold &a, const Cold &b) { return a.median < b.median; });
  return colds;
}

} // namespace

json jitFigures(const GemmRecipe &recipe, const std::vector<Shape> &shapes,
                int smCount, const CudaDriver &d, CUstream stream) {
  const Shape &sh = shapes.front();
  auto spec =
      check(gemmKernelSpec(recipe, sh.m, sh.n, sh.k, smCount, std::nullopt),
            "kernel spec");
  auto gen = check(emitSm90Gemm(spec), "emit");
  char tmpl[] = "/tmp/fp8-bench-cache-XXXXXX";
  const char *dir = mkdtemp(tmpl);
  if (!dir)
    return json::object();
  const double startupMs = nvrtcStartupMs();
  KernelCache cold(dir);
  auto c1 = check(cold.get(gen), "cold compile");
  cold.clearMemory();
  auto c2 = check(cold.get(gen), "disk load");
  auto c3 = check(cold.get(gen), "memory hit");
  double perCall[2];
  dispatchCost(recipe, sh, d, stream, perCall);
  if (c1.kernel->registers < 0)
    std::printf("(ptxas statistics missing from the NVRTC log: '%s')\n",
                c1.kernel->log.substr(0, 300).c_str());
  std::printf("\nJIT (%s): cold compile %.1f ms, disk-cache load %.2f ms, "
              "memory hit %.3f ms; fp8::gemm host cost %.1f us per call "
              "(%.1f us with extent checks); %d registers, %d bytes "
              "spilled\n",
              gen.name.c_str(), c1.seconds * 1e3, c2.seconds * 1e3,
              c3.seconds * 1e3, perCall[0], perCall[1], c1.kernel->registers,
              c1.kernel->spillBytes);
  // Every distinct kernel of this run, compiled cold: the bar is per
  // kernel, and the first shape's is not the largest one.
  double maxSingle = 0;
  const std::vector<Cold> colds =
      coldCompiles(distinctKernels(recipe, shapes, smCount, gen), gen.name, c1,
                   dir, maxSingle);
  const double coldMedian = colds[colds.size() / 2].median;
  const Cold &coldMax = colds.back();
  std::printf("JIT NVRTC start-up (a one-line kernel compiled before "
              "the others; all of it if no compile came first): %.1f "
              "ms\n",
              startupMs);
  double nvrtcMax = 0;
  for (const auto &c : colds)
    nvrtcMax = std::max(nvrtcMax, c.nvrtcMedian);
  std::printf("JIT cold compile of each of the %zu kernels (median of "
              "%d compiles each): median %.1f ms, max %.1f ms (%s); "
              "slowest single compile %.1f ms; NVRTC alone: max %.1f "
              "ms (the rest writes the cache entry)\n",
              colds.size(), kColdRuns, coldMedian, coldMax.median,
              coldMax.kernel.c_str(), maxSingle, nvrtcMax);
  json coldList = json::array();
  for (const auto &c : colds)
    coldList.push_back({{"kernel", c.kernel},
                        {"cold_compile_ms", c.median},
                        {"samples_ms", c.ms},
                        {"nvrtc_ms", c.nvrtcMedian},
                        {"nvrtc_samples_ms", c.nvrtcMs}});
  json jit = {{"kernel", gen.name},
              {"cold_compile_ms", c1.seconds * 1e3},
              {"nvrtc_startup_ms", startupMs},
              {"cold_compile_runs", kColdRuns},
              {"cold_compile_median_ms", coldMedian},
              {"cold_compile_max_ms", coldMax.median},
              {"cold_compile_max_kernel", coldMax.kernel},
              {"cold_compile_max_single_ms", maxSingle},
              {"cold_compile_nvrtc_max_ms", nvrtcMax},
              {"cold_compiles", coldList},
              {"disk_load_ms", c2.seconds * 1e3},
              {"memory_hit_ms", c3.seconds * 1e3},
              {"dispatch_us", perCall[0]},
              {"dispatch_checked_us", perCall[1]},
              {"registers", c1.kernel->registers},
              {"spill_bytes", c1.kernel->spillBytes}};
  std::string cmd = std::string("rm -rf '") + dir + "'";
  (void)std::system(cmd.c_str());
  return jit;
}

} // namespace fp8::bench
