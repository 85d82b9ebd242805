//===- fp8-run.cpp - Runs a compiled plan and checks it -------------------===//
//
//   fp8-run PLAN [--dim M=4096] [--inputs DIR | --random [--seed N]]
//                [--outputs DIR | --no-outputs] [--verify] [--bench [--iters
//                N]]
//                [--compile-only] [--cpu] [--json FILE] [--sm-count N]
//                [--serial-steps]
//
// Loads a plan (fp8-translate --fp8-to-plan), JIT-compiles its kernels
// through the runtime's cache, allocates its buffers, runs the prepare steps
// once and the run steps in order, writes the graph outputs as .npy, and on
// request verifies the run (--verify, runtime/plan/PlanVerify.h: every step and
// output against the CPU oracle, which decides; the outputs' quantization
// error against the unquantized graph, within a bound derived from the
// plan's recipe or --similarity-bound) and times the steps next to cuBLASLt
// (--bench). docs/pipeline.md has a walk-through.
//
// Exit status: 0 success; 1 an error (bad plan, inputs or arguments, a
// failed step) or a failed verification; 2 a usage error; 3 no GPU to run
// on: the kernels were compiled, nothing ran (--compile-only and --cpu never
// need one).
//
//===----------------------------------------------------------------------===//

#include "core/Env.h"
#include "core/ParseNumber.h"
#include "core/Target.h"
#include "runtime/CudaDriver.h"
#include "runtime/Tuner.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanGpuRunner.h"
#include "runtime/plan/PlanRunner.h"
#include "runtime/plan/PlanVerify.h"
#include "tools/fp8-run/Peers.h"
#include "tools/fp8-run/Report.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace fp8;
using json = nlohmann::ordered_json;

namespace {

enum ExitCode { kOk = 0, kFailed = 1, kUsage = 2, kNoGpu = 3 };

/// Upper bounds of --iters and --sm-count: far above any real use, low
/// enough that no count derived from them overflows.
constexpr uint64_t kMaxIters = 1000000;
constexpr uint64_t kMaxSmCount = 4096;

struct Options {
  std::string plan;
  std::vector<std::pair<std::string, int64_t>> dims;
  InputOptions inputs;
  std::string outputs = "fp8-run-out";
  std::string saveInputs;
  bool writeOutputs = true;
  bool verify = false, bench = false, compileOnly = false, cpu = false;
  int iters = 20;
  /// --sm-count: the H100's, for plans compiled without a GPU at hand.
  int smCount = targetInfo(Arch::SM90a).smCount;
  std::optional<double> similarityBound; ///< stated; else derived
  std::string jsonOut;
  std::string tuningDb; ///< --tuning-db; else FP8_TUNING_DB's
  bool tuneOnFirstUse = false;
  bool serialSteps = false; ///< GpuPlan::setOverlapSteps(false)
};

[[noreturn]] void usage(int code) {
  std::fprintf(
      code ? stderr : stdout,
      "usage: fp8-run PLAN [--dim NAME=SIZE]... [--inputs DIR | --random]\n"
      "               [--seed N] [--outputs DIR | --no-outputs] [--verify]\n"
      "               [--bench [--iters N]] [--compile-only] [--cpu]\n"
      "               [--json FILE] [--sm-count N] [--similarity-bound X]\n"
      "               [--save-inputs DIR] [--tuning-db FILE]\n"
      "               [--tune-on-first-use] [--serial-steps]\n"
      "Runs a plan written by fp8-translate --fp8-to-plan.\n"
      "  --dim NAME=SIZE  size of a dynamic dimension (every one needs one)\n"
      "  --inputs DIR     read DIR/<buffer>.npy for every input and weight\n"
      "  --random         seeded random inputs and weights (the default)\n"
      "  --outputs DIR    write the graph outputs there as .npy (default\n"
      "                   fp8-run-out)\n"
      "  --save-inputs DIR  write the inputs and weights used there as .npy\n"
      "                   (for --inputs DIR later)\n"
      "  --verify         check every step and output against the CPU oracle\n"
      "                   (outputs within the error the plan's recipe is\n"
      "                   expected to cost) and report the outputs'\n"
      "                   quantization error against the unquantized graph\n"
      "                   (within the same bound, or --similarity-bound's)\n"
      "  --bench          time the steps (median of --iters, default 20) and\n"
      "                   the same GEMMs through cuBLASLt\n"
      "  --compile-only   only JIT-compile the kernels (no GPU needed)\n"
      "  --cpu            run the plan on the CPU oracle instead of a GPU\n"
      "  --similarity-bound X  the bound of the quantization error: every\n"
      "                   output's similarity to the unquantized graph\n"
      "                   (default: derived from the plan's quantizations,\n"
      "                   at least 1e-3)\n"
      "  --json FILE      write the results as JSON\n"
      "  --sm-count N     SMs for the tiles the runtime picks when only\n"
      "                   compiling (default 132, an H100 SXM)\n"
      "  --tuning-db FILE GEMM steps take the tiles fp8-tune measured on this\n"
      "                   GPU for their shape over the plan's (default:\n"
      "                   FP8_TUNING_DB's database, if set)\n"
      "  --tune-on-first-use  a GEMM step without a measured tile is tuned\n"
      "                   (fp8-tune's measurement) at its first launch; with\n"
      "                   --tuning-db the entries are merged into FILE\n"
      "                   (created if missing), else kept for this run\n"
      "  --serial-steps   launch each step's first kernel in the stream's\n"
      "                   full order (by default a step of at most %lld rows\n"
      "                   may start while the step before finishes, waiting\n"
      "                   in the kernel for that step's results:\n"
      "                   programmatic dependent launch)\n"
      "Exit status: 0 ok, 1 error or failed verification, 2 usage, 3 no GPU\n"
      "(the kernels were compiled, nothing ran).\n",
      static_cast<long long>(GpuPlan::kOverlapMaxRows));
  std::exit(code);
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr,
                     "fp8-run: expected a value after %s, found the end of "
                     "the arguments\n",
                     a.c_str());
        std::exit(kUsage);
      }
      return argv[++i];
    };
    // Digits only (no sign, spaces or trailing text), in [lo, hi]: a value
    // beyond the range is refused, never clamped.
    auto number = [&](const std::string &what, const std::string &s,
                      uint64_t lo, uint64_t hi,
                      const char *expected) -> uint64_t {
      const std::optional<uint64_t> v = parseUnsigned(s, lo, hi);
      if (!v) {
        std::fprintf(stderr, "fp8-run: expected %s to be %s, found '%s'\n",
                     what.c_str(), expected, s.c_str());
        std::exit(kUsage);
      }
      return *v;
    };
    if (a == "--dim") {
      const std::string v = next();
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "fp8-run: expected --dim NAME=SIZE, found '%s'\n",
                     v.c_str());
        std::exit(kUsage);
      }
      o.dims.emplace_back(
          v.substr(0, eq),
          int64_t(number("--dim " + v.substr(0, eq), v.substr(eq + 1), 1,
                         uint64_t(kMaxDimSize) - 1,
                         "a positive integer below 2^40")));
    } else if (a == "--inputs") {
      o.inputs.dir = next();
    } else if (a == "--random") {
      o.inputs.dir.clear();
    } else if (a == "--seed") {
      o.inputs.seed = number("--seed", next(), 0, UINT64_MAX,
                             "a non-negative integer below 2^64");
    } else if (a == "--outputs") {
      o.outputs = next();
    } else if (a == "--save-inputs") {
      o.saveInputs = next();
    } else if (a == "--no-outputs") {
      o.writeOutputs = false;
    } else if (a == "--verify") {
      o.verify = true;
    } else if (a == "--bench") {
      o.bench = true;
    } else if (a == "--iters") {
      o.iters = int(number("--iters", next(), 1, kMaxIters,
                           "an integer in [1, 1000000]"));
    } else if (a == "--compile-only") {
      o.compileOnly = true;
    } else if (a == "--cpu") {
      o.cpu = true;
    } else if (a == "--json") {
      o.jsonOut = next();
    } else if (a == "--similarity-bound") {
      const std::string v = next();
      const std::optional<double> bound = parseFinite(v);
      if (!bound || !(*bound > 0)) {
        std::fprintf(stderr,
                     "fp8-run: expected --similarity-bound to be a positive "
                     "finite number, found '%s'\n",
                     v.c_str());
        std::exit(kUsage);
      }
      o.similarityBound = *bound;
    } else if (a == "--tuning-db") {
      o.tuningDb = next();
    } else if (a == "--tune-on-first-use") {
      o.tuneOnFirstUse = true;
    } else if (a == "--serial-steps") {
      o.serialSteps = true;
    } else if (a == "--sm-count") {
      o.smCount = int(number("--sm-count", next(), 1, kMaxSmCount,
                             "an integer in [1, 4096]"));
    } else if (a == "--help" || a == "-h") {
      usage(kOk);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "fp8-run: unknown option '%s'\n", a.c_str());
      usage(kUsage);
    } else if (o.plan.empty()) {
      o.plan = a;
    } else {
      std::fprintf(stderr, "fp8-run: expected one plan, found '%s' and '%s'\n",
                   o.plan.c_str(), a.c_str());
      std::exit(kUsage);
    }
  }
  if (o.plan.empty()) {
    std::fprintf(stderr, "fp8-run: expected a plan file\n");
    usage(kUsage);
  }
  // Options that act on the GPU alone.
  const std::pair<bool, const char *> gpuOnly[] = {
      {o.tuneOnFirstUse, "--tune-on-first-use times GEMMs"},
      {o.serialSteps, "--serial-steps orders the steps' launches"},
      {o.bench && o.cpu, "--bench times the steps"}};
  for (const auto &[given, what] : gpuOnly)
    if (given && (o.cpu || o.compileOnly)) {
      std::fprintf(stderr,
                   "fp8-run: %s on the GPU; it cannot be combined with %s\n",
                   what, o.cpu ? "--cpu" : "--compile-only");
      std::exit(kUsage);
    }
  return o;
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / (1 << 20));
  return buf;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

int finish(const Options &o, json &results, int code) {
  results["exit_code"] = code;
  if (!o.jsonOut.empty()) {
    std::ofstream f(o.jsonOut);
    f << results.dump(2) << "\n";
    if (!f) {
      std::fprintf(stderr, "fp8-run: cannot write %s\n", o.jsonOut.c_str());
      return code ? code : kFailed;
    }
  }
  return code;
}

int fail(const Options &o, json &results, const std::string &what,
         const Status &s) {
  std::fprintf(stderr, "fp8-run: %s: %s\n", what.c_str(), s.message().c_str());
  results["error"] = what + ": " + s.message();
  return finish(o, results, kFailed);
}

/// fail() for a status that names its stage (PlanRunner.h).
int fail(const Options &o, json &results, const Status &s) {
  std::fprintf(stderr, "fp8-run: %s\n", s.message().c_str());
  results["error"] = s.message();
  return finish(o, results, kFailed);
}

PlanInputOptions inputOptions(const Options &o) {
  return PlanInputOptions{o.inputs, o.saveInputs};
}

/// Writes the graph outputs unless --no-outputs.
Status writeOutputs(const Options &o, const Plan &plan,
                    const HostBuffers &values) {
  if (!o.writeOutputs)
    return Status::ok();
  auto names = writePlanOutputs(plan, values, o.outputs);
  if (!names)
    return names.status();
  std::printf("outputs: %s written to %s/\n", names->c_str(),
              o.outputs.c_str());
  return Status::ok();
}

/// --cpu: the plan on the CPU oracle instead of a GPU.
int runCpu(const Options &o, json &results, const Plan &plan,
           const ResolvedPlan &shapes, const DimValues &dims) {
  auto run = runPlanOnCpuOracle(plan, shapes, dims, inputOptions(o), o.verify);
  if (!run)
    return fail(o, results, run.status());
  std::printf("cpu: ran the plan on the CPU oracle (%d iteration%s) in "
              "%.2f s\n",
              run->iterations, run->iterations > 1 ? "s" : "", run->seconds);
  int code = kOk;
  if (o.verify) {
    OutputCheckOptions opts;
    opts.iterations = run->iterations;
    opts.statedBound = o.similarityBound;
    auto checks = checkOutputs(plan, shapes, run->inputs, run->values, opts);
    if (!checks)
      return fail(o, results, "verification could not run", checks.status());
    std::printf("verify: the recipe's quantization error, the CPU oracle's "
                "outputs against the unquantized graph:\n");
    printQuantizationError(*checks);
    json v;
    v["outputs"] = outputsJson(*checks);
    v["iterations"] = run->iterations;
    const bool ok = reportVerdict(verdict({}, *checks), v, "");
    results["verify"] = v;
    code = ok ? kOk : kFailed;
  }
  if (Status s = writeOutputs(o, plan, run->values); !s)
    return fail(o, results, s);
  return finish(o, results, code);
}

/// JIT-compiles every kernel through the cache (no GPU needed) and prints
/// them; returns the number of distinct kernels.
Expected<size_t> compileKernels(const Options &o, json &results,
                                const Plan &plan, const ResolvedPlan &shapes) {
  int smCount = o.smCount;
  // The GPU at hand: its SM count, and its tuning database entries, which
  // the GEMM steps launch with (so the kernels listed are those that run).
  std::optional<TuningDevice> device;
  if (!o.compileOnly)
    if (auto dev = CudaDevice::get()) {
      smCount = (*dev)->smCount;
      device = tuningDevice(**dev);
    }
  auto t0 = std::chrono::steady_clock::now();
  auto kernels =
      compilePlanKernels(plan, shapes, smCount, device ? &*device : nullptr);
  if (!kernels)
    return kernels.status();
  size_t cubinBytes = 0, compiled = 0;
  std::set<std::string> distinct;
  json jk = json::array();
  for (const CompiledPlanKernel &k : *kernels) {
    if (distinct.insert(k.name).second) {
      cubinBytes += k.cubinBytes;
      compiled += k.origin == CubinOrigin::Compiled;
    }
    std::printf(
        "  kernel %-12s %-58s %-10s %6.3f s %7zu B cubin, %d regs%s\n",
        k.step.c_str(), k.name.c_str(), std::string(toString(k.origin)).c_str(),
        k.seconds, k.cubinBytes, k.registers,
        k.tileSource.empty() ? ""
                             : (", tile from the " + k.tileSource).c_str());
    json one = {{"step", k.step},
                {"name", k.name},
                {"origin", std::string(toString(k.origin))},
                {"seconds", k.seconds},
                {"cubin_bytes", k.cubinBytes},
                {"registers", k.registers},
                {"spill_bytes", k.spillBytes}};
    if (!k.tileSource.empty())
      one["tile_source"] = k.tileSource;
    jk.push_back(one);
  }
  const std::string cache = env::cacheDir();
  std::printf("jit: %zu kernels for %zu steps (%zu compiled, %zu from the "
              "disk cache) in %.2f s, %zu KiB of cubins (cache: %s)\n",
              distinct.size(), kernels->size(), compiled,
              distinct.size() - compiled, secondsSince(t0), cubinBytes / 1024,
              cache.empty() ? "memory only" : cache.c_str());
  printCompiledTileNotes(*kernels);
  results["kernels"] = jk;
  return distinct.size();
}

/// Verifies the GPU's run: every step, then every output, against the CPU
/// oracle. Returns whether it passed; nothing when it could not run (after
/// fail(), whose exit code is kFailed).
std::optional<bool> verifyGpuRun(const Options &o, json &results,
                                 const Plan &plan, const ResolvedPlan &shapes,
                                 const HostBuffers &host,
                                 const HostBuffers &gpuValues,
                                 const HostBuffers &statesBefore, int iters) {
  auto t0 = std::chrono::steady_clock::now();
  std::printf("verify: every step against the CPU oracle on the step's GPU "
              "inputs:\n");
  auto steps = checkSteps(plan, gpuValues, statesBefore);
  if (!steps) {
    fail(o, results, "verification could not run", steps.status());
    return std::nullopt;
  }
  json v;
  v["steps"] = reportStepChecks(*steps);
  OutputCheckOptions opts;
  opts.iterations = iters;
  opts.withOracle = true;
  opts.statedBound = o.similarityBound;
  auto outs = checkOutputs(plan, shapes, host, gpuValues, opts);
  if (!outs) {
    fail(o, results, "verification could not run", outs.status());
    return std::nullopt;
  }
  std::printf("verify: every output against the whole plan run on the CPU "
              "oracle (%d run%s), within the error the recipe is expected "
              "to cost:\n",
              iters, iters > 1 ? "s" : "");
  printVsOracle(*outs);
  std::printf("verify: the recipe's quantization error, every output "
              "against the unquantized graph:\n");
  printQuantizationError(*outs);
  v["outputs"] = outputsJson(*outs);
  v["iterations"] = iters;
  v["seconds"] = secondsSince(t0);
  char cpu[48];
  std::snprintf(cpu, sizeof(cpu), " (%.1f s on the CPU)", secondsSince(t0));
  const bool ok = reportVerdict(verdict(*steps, *outs), v, cpu);
  results["verify"] = v;
  return ok;
}

/// Prints the scale mirrors of the plan on the GPU.
void reportScaleMirrors(json &results, const GpuPlan &gpu, const Plan &plan) {
  json jm = json::array();
  for (const ScaleMirrorUse &m : scaleMirrorUses(gpu, plan)) {
    std::printf("scale mirror: %s [%lld][%lld] by %s, %s scales of %s\n",
                m.scales.c_str(), static_cast<long long>(m.outer),
                static_cast<long long>(m.pitch), m.writer.c_str(),
                m.isA ? "A" : "B", m.readers.c_str());
    jm.push_back({{"scales", m.scales},
                  {"writer", m.writer},
                  {"operand", m.isA ? "a" : "b"},
                  {"readers", m.readers},
                  {"shape", {m.outer, m.pitch}}});
  }
  results["scale_mirrors"] = jm;
}

/// The plan on the GPU: set up, prepare, run, verify, write, bench.
int runGpu(const Options &o, json &results, const Plan &plan,
           const ResolvedPlan &shapes, const DimValues &dims,
           const CudaDevice &dev, size_t prepare) {
  std::printf("device: %s (%d SMs, compute capability %d.%d)\n",
              dev.name.c_str(), dev.smCount, dev.ccMajor, dev.ccMinor);
  results["device"] = dev.name;
  HostBuffers host;
  auto gpu = setUpGpuPlan(plan, shapes, dims, inputOptions(o), o.verify, host);
  if (!gpu)
    return fail(o, results, gpu.status());
  std::printf("buffers: %s on the device\n",
              mib(double((*gpu)->deviceBytes())).c_str());
  (*gpu)->setOverlapSteps(!o.serialSteps);
  std::printf("steps of at most %lld rows overlap the one before: %s\n",
              static_cast<long long>(GpuPlan::kOverlapMaxRows),
              o.serialSteps ? "no (--serial-steps)" : "yes");
  results["overlap_steps"] = !o.serialSteps;
  // The scales some GEMMs read in their TMA layout: A's transposed, B's
  // with a padded pitch (runtime/plan/PlanScaleMirror.h).
  reportScaleMirrors(results, **gpu, plan);
  auto prepareSeconds = runPrepareSteps(**gpu);
  if (!prepareSeconds)
    return fail(o, results, prepareSeconds.status());
  std::printf("prepare: %zu steps in %.1f ms (first launch: module loads "
              "included)\n",
              prepare, *prepareSeconds * 1e3);
  const int iters = o.verify ? verifyIterations(plan) : 1;
  HostBuffers statesBefore;
  if (Status s = runIterations(
          **gpu, plan, iters, statesBefore,
          [&](int it, double seconds) {
            std::printf("run %d: %zu steps in %.1f ms (every step "
                        "synchronized)\n",
                        it + 1, plan.steps.size() - prepare, seconds * 1e3);
          });
      !s)
    return fail(o, results, s);
  auto gpuValues = readResults(**gpu, plan, o.verify);
  if (!gpuValues)
    return fail(o, results, gpuValues.status());

  int code = kOk;
  if (o.verify) {
    const std::optional<bool> ok = verifyGpuRun(
        o, results, plan, shapes, host, *gpuValues, statesBefore, iters);
    if (!ok)
      return kFailed;
    code = *ok ? kOk : kFailed;
  }
  if (Status s = writeOutputs(o, plan, *gpuValues); !s)
    return fail(o, results, s);
  if (o.bench) {
    // cuBLASLt's peers timed in the steps' turns (PlanBench.h).
    BenchReport b = describePlanSteps(**gpu, plan, shapes);
    PlanPeers peers;
    Status s = peers.prepare(**gpu, plan, b);
    if (s.isOk())
      s = timePlanSteps(**gpu, plan, o.iters, b, [&](int warmup, int iters) {
        return peers.round(warmup, iters);
      });
    if (!s.isOk())
      return fail(o, results, "the benchmark failed", s);
    peers.finish(b);
    results["bench"] =
        reportBench(b, dramRoofline(dev.name.c_str(), plan.arch));
  }
  return finish(o, results, code);
}

int run(int argc, char **argv) {
  const Options o = parseArgs(argc, argv);
  json results;
  results["plan"] = o.plan;

  auto plan = loadPlan(o.plan);
  if (!plan)
    return fail(o, results, "cannot use the plan", plan.status());
  if (o.tuneOnFirstUse) {
    if (Status s = tuneOnFirstUse(o.tuningDb); !s)
      return fail(o, results, "cannot use the tuning database", s);
  } else if (!o.tuningDb.empty()) {
    if (Status s = setTuningDatabase(o.tuningDb); !s)
      return fail(o, results, "cannot use the tuning database", s);
  }
  auto dims = resolveDims(*plan, o.dims);
  if (!dims)
    return fail(o, results, "cannot size the plan", dims.status());
  auto shapes = resolvePlan(*plan, *dims);
  if (!shapes)
    return fail(o, results, "cannot size the plan", shapes.status());
  size_t prepare = 0;
  for (const PlanStep &s : plan->steps)
    prepare += s.phase == Phase::Prepare;
  std::printf("plan %s: @%s for %s, %zu steps (%zu prepare, %zu run), "
              "%zu buffers, dims %s\n",
              o.plan.c_str(), plan->function.c_str(),
              std::string(toString(plan->arch)).c_str(), plan->steps.size(),
              prepare, plan->steps.size() - prepare, plan->buffers.size(),
              formatDims(*dims).c_str());
  results["function"] = plan->function;
  results["arch"] = std::string(toString(plan->arch));
  results["dims"] = *dims;

  if (o.cpu)
    return runCpu(o, results, *plan, *shapes, *dims);

  auto distinct = compileKernels(o, results, *plan, *shapes);
  if (!distinct)
    return fail(o, results, "cannot compile the plan's kernels",
                distinct.status());
  if (o.compileOnly)
    return finish(o, results, kOk);

  auto dev = CudaDevice::get();
  if (!dev) {
    std::fprintf(
        stderr,
        "fp8-run: no GPU to run on: %s\n"
        "fp8-run: the %zu kernels compiled; nothing ran (--compile-only "
        "only compiles, --cpu runs the plan on the CPU oracle)\n",
        dev.message().c_str(), *distinct);
    results["error"] = "no GPU: " + dev.message();
    return finish(o, results, kNoGpu);
  }
  return runGpu(o, results, *plan, *shapes, *dims, **dev, prepare);
}

} // namespace

int main(int argc, char **argv) {
  if (fp8::Status env = fp8::env::checkEnvironment(); !env) {
    std::fprintf(stderr, "fp8-run: %s\n", env.message().c_str());
    return kUsage;
  }
  // Sizes are checked and memory is bounded before anything is allocated;
  // this is the last resort for an allocation that fails anyway (memory
  // taken by another process meanwhile).
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "fp8-run: out of host memory (an allocation "
                         "failed)\n");
  } catch (const std::length_error &) {
    std::fprintf(stderr, "fp8-run: out of host memory (an allocation was too "
                         "large)\n");
  }
  return kFailed;
}
