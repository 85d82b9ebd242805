//===- fp8-run.cpp - Runs a compiled plan and checks it -------------------===//
//
//   fp8-run PLAN [--dim M=4096] [--inputs DIR | --random [--seed N]]
//                [--outputs DIR | --no-outputs] [--verify] [--bench [--iters
//                N]]
//                [--compile-only] [--cpu] [--json FILE] [--sm-count N]
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
#include "runtime/MemoryBudget.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanOracle.h"
#include "runtime/plan/PlanVerify.h"
#include "tools/fp8-run/Bench.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
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
};

[[noreturn]] void usage(int code) {
  std::fprintf(
      code ? stderr : stdout,
      "usage: fp8-run PLAN [--dim NAME=SIZE]... [--inputs DIR | --random]\n"
      "               [--seed N] [--outputs DIR | --no-outputs] [--verify]\n"
      "               [--bench [--iters N]] [--compile-only] [--cpu]\n"
      "               [--json FILE] [--sm-count N] [--similarity-bound X]\n"
      "               [--save-inputs DIR]\n"
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
      "Exit status: 0 ok, 1 error or failed verification, 2 usage, 3 no GPU\n"
      "(the kernels were compiled, nothing ran).\n");
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
      char *end = nullptr;
      errno = 0;
      const double bound = std::strtod(v.c_str(), &end);
      if (v.empty() || std::isspace(static_cast<unsigned char>(v[0])) || *end ||
          errno == ERANGE || !(bound > 0) || !std::isfinite(bound)) {
        std::fprintf(stderr,
                     "fp8-run: expected --similarity-bound to be a positive "
                     "finite number, found '%s'\n",
                     v.c_str());
        std::exit(kUsage);
      }
      o.similarityBound = bound;
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
  if (o.cpu && o.bench) {
    std::fprintf(stderr, "fp8-run: --bench times the GPU; it cannot be "
                         "combined with --cpu\n");
    std::exit(kUsage);
  }
  return o;
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / (1 << 20));
  return buf;
}

std::string_view originName(CubinOrigin o) {
  switch (o) {
  case CubinOrigin::Memory:
    return "memory";
  case CubinOrigin::Disk:
    return "disk cache";
  case CubinOrigin::Compiled:
    return "compiled";
  }
  return "?";
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

json metricsJson(const numerics::ErrorMetrics &m) {
  return json{{"similarity", m.similarity}, {"max_abs", m.maxAbsError},
              {"max_rel", m.maxRelError},   {"mean_rel", m.meanRelError},
              {"ref_max_abs", m.refMaxAbs}, {"non_finite", m.nonFinite}};
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", x);
  return buf;
}

/// Where the quantization-error bound of `c` comes from.
std::string boundOrigin(const OutputCheck &c) {
  if (c.referenceBound == BoundSource::Stated)
    return "stated by --similarity-bound";
  const OutputErrorBound &e = c.expected;
  std::string s = "derived from the plan: depth " + std::to_string(e.depth) +
                  ", " + std::to_string(e.pathQuantizations) + " quantization" +
                  (e.pathQuantizations == 1 ? "" : "s") +
                  " on the worst path, " + std::to_string(e.quantizations) +
                  " upstream";
  if (e.bound > e.relSquaredError)
    s += "; the floor " + number(kMinSimilarityBound);
  return s;
}

json similarityJson(const SimilarityCheck &c, BoundSource source) {
  json j = metricsJson(c.metrics);
  j["bound"] = c.bound;
  j["bound_source"] = std::string(toString(source));
  j["passed"] = c.passed;
  return j;
}

/// Prints the outputs against the plan on the CPU oracle.
void printVsOracle(const std::vector<OutputCheck> &checks) {
  for (const OutputCheck &c : checks)
    std::printf("  output %s %s: similarity %s to the plan on the CPU oracle "
                "(bound %s) %s; max abs %.4g, max rel %.3g\n",
                c.name.c_str(), formatShape(c.shape).c_str(),
                number(c.vsOracle.metrics.similarity).c_str(),
                number(c.vsOracle.bound).c_str(),
                c.vsOracle.passed ? "ok" : "FAILED",
                c.vsOracle.metrics.maxAbsError, c.vsOracle.metrics.maxRelError);
}

/// Prints the outputs' quantization error (against the unquantized graph).
void printQuantizationError(const std::vector<OutputCheck> &checks) {
  for (const OutputCheck &c : checks) {
    std::printf("  output %s %s: similarity %s to the unquantized graph "
                "(expected %s; bound %s, %s) %s; max abs %.4g, max rel %.3g",
                c.name.c_str(), formatShape(c.shape).c_str(),
                number(c.vsReference.metrics.similarity).c_str(),
                number(c.expected.expectedSimilarity).c_str(),
                number(c.vsReference.bound).c_str(), boundOrigin(c).c_str(),
                c.vsReference.passed ? "ok" : "FAILED",
                c.vsReference.metrics.maxAbsError,
                c.vsReference.metrics.maxRelError);
    if (c.haveOracle)
      std::printf("; the CPU oracle's: %s",
                  number(c.oracleVsReference.similarity).c_str());
    std::printf("\n");
  }
}

/// The output checks as JSON.
json outputsJson(const std::vector<OutputCheck> &checks) {
  json arr = json::array();
  for (const OutputCheck &c : checks) {
    const OutputErrorBound &e = c.expected;
    json o{{"name", c.name},
           {"shape", c.shape},
           {"passed", c.passed()},
           {"expected",
            {{"rel_squared_error", e.relSquaredError},
             {"similarity", e.expectedSimilarity},
             {"bound", e.bound},
             {"depth", e.depth},
             {"path_quantizations", e.pathQuantizations},
             {"quantizations", e.quantizations}}}};
    if (c.haveOracle)
      o["vs_oracle"] = similarityJson(c.vsOracle, BoundSource::Derived);
    o["vs_reference"] = similarityJson(c.vsReference, c.referenceBound);
    if (c.haveOracle)
      o["oracle_vs_reference"] = metricsJson(c.oracleVsReference);
    arr.push_back(o);
  }
  return arr;
}

/// Records the verdict in `v`, prints its line and returns whether it
/// passed.
bool reportVerdict(const VerifyVerdict &verdict, json &v,
                   const std::string &suffix) {
  v["passed"] = verdict.passed();
  v["checks"] = {{"steps", verdict.stepsOffOracle},
                 {"outputs_vs_oracle", verdict.outputsOffOracle},
                 {"quantization_error", verdict.outputsOverBound}};
  if (verdict.passed())
    std::printf("verify: PASSED%s\n", suffix.c_str());
  else
    std::printf("verify: FAILED: %s%s\n", verdict.failures().c_str(),
                suffix.c_str());
  return verdict.passed();
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

/// Creates `dir` unless it is a directory already.
Status makeDirectory(const std::string &dir) {
  if (::mkdir(dir.c_str(), 0755) == 0)
    return Status::ok();
  const int err = errno;
  struct stat st;
  if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::ok();
  if (err == EEXIST)
    return errorf("expected '", dir, "' to be a directory, found a file");
  return errorf("cannot create the directory '", dir,
                "': ", std::strerror(err));
}

Status writeOutputs(const Options &o, const Plan &plan,
                    const HostBuffers &values) {
  if (!o.writeOutputs)
    return Status::ok();
  FP8_RETURN_IF_ERROR(makeDirectory(o.outputs));
  std::string names;
  for (const std::string &n : plan.outputs) {
    FP8_RETURN_IF_ERROR(writeTensorNpy(o.outputs, n, values.at(n)));
    names += (names.empty() ? "" : ", ") + n + ".npy";
  }
  std::printf("outputs: %s written to %s/\n", names.c_str(), o.outputs.c_str());
  return Status::ok();
}

/// Writes the inputs and weights with --save-inputs.
Status saveInputs(const Options &o, const Plan &plan, const HostBuffers &host) {
  if (o.saveInputs.empty())
    return Status::ok();
  FP8_RETURN_IF_ERROR(makeDirectory(o.saveInputs));
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Input || b.role == BufferRole::Weight)
      FP8_RETURN_IF_ERROR(
          writeTensorNpy(o.saveInputs, b.name, host.at(b.name)));
  return Status::ok();
}

/// Runs that --verify compares: enough for delayed scaling to use its
/// history (the first run falls back to current scaling).
int verifyIterations(const Plan &plan) {
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::State)
      return 3;
  return 1;
}

} // namespace

namespace {
int run(int argc, char **argv) {
  const Options o = parseArgs(argc, argv);
  json results;
  results["plan"] = o.plan;

  auto plan = loadPlan(o.plan);
  if (!plan)
    return fail(o, results, "cannot use the plan", plan.status());
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

  // The CPU oracle instead of a GPU.
  if (o.cpu) {
    if (Status s =
            checkHostMemory("running the plan on the CPU oracle (dims " +
                                formatDims(*dims) + ")",
                            hostRunBytes(*plan, *shapes, RunOn::Cpu, o.verify));
        !s)
      return fail(o, results, "cannot run the plan", s);
    HostBuffers host = allocateHostBuffers(*plan, *shapes);
    if (Status s = fillInputs(*plan, host, o.inputs); !s)
      return fail(o, results, "cannot read the inputs", s);
    if (Status s = saveInputs(o, *plan, host); !s)
      return fail(o, results, "cannot save the inputs", s);
    const HostBuffers inputs = host;
    const int iters = o.verify ? verifyIterations(*plan) : 1;
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = runPlanOnCpu(*plan, host, iters); !s)
      return fail(o, results, "the CPU run failed", s);
    std::printf("cpu: ran the plan on the CPU oracle (%d iteration%s) in "
                "%.2f s\n",
                iters, iters > 1 ? "s" : "", secondsSince(t0));
    int code = kOk;
    if (o.verify) {
      OutputCheckOptions opts;
      opts.iterations = iters;
      opts.statedBound = o.similarityBound;
      auto checks = checkOutputs(*plan, *shapes, inputs, host, opts);
      if (!checks)
        return fail(o, results, "verification could not run", checks.status());
      std::printf("verify: the recipe's quantization error, the CPU oracle's "
                  "outputs against the unquantized graph:\n");
      printQuantizationError(*checks);
      json v;
      v["outputs"] = outputsJson(*checks);
      v["iterations"] = iters;
      const bool ok = reportVerdict(verdict({}, *checks), v, "");
      results["verify"] = v;
      code = ok ? kOk : kFailed;
    }
    if (Status s = writeOutputs(o, *plan, host); !s)
      return fail(o, results, "cannot write the outputs", s);
    return finish(o, results, code);
  }

  // JIT: every kernel, through the cache (no GPU needed).
  int smCount = o.smCount;
  if (!o.compileOnly)
    if (auto dev = CudaDevice::get())
      smCount = (*dev)->smCount;
  auto t0 = std::chrono::steady_clock::now();
  auto kernels = compilePlanKernels(*plan, *shapes, smCount);
  if (!kernels)
    return fail(o, results, "cannot compile the plan's kernels",
                kernels.status());
  size_t cubinBytes = 0, compiled = 0;
  std::set<std::string> distinct;
  json jk = json::array();
  for (const CompiledPlanKernel &k : *kernels) {
    if (distinct.insert(k.name).second) {
      cubinBytes += k.cubinBytes;
      compiled += k.origin == CubinOrigin::Compiled;
    }
    std::printf("  kernel %-12s %-58s %-10s %6.3f s %7zu B cubin, %d regs\n",
                k.step.c_str(), k.name.c_str(),
                std::string(originName(k.origin)).c_str(), k.seconds,
                k.cubinBytes, k.registers);
    jk.push_back({{"step", k.step},
                  {"name", k.name},
                  {"origin", std::string(originName(k.origin))},
                  {"seconds", k.seconds},
                  {"cubin_bytes", k.cubinBytes},
                  {"registers", k.registers},
                  {"spill_bytes", k.spillBytes}});
  }
  const std::string cache = env::cacheDir();
  std::printf("jit: %zu kernels for %zu steps (%zu compiled, %zu from the "
              "disk cache) in %.2f s, %zu KiB of cubins (cache: %s)\n",
              distinct.size(), kernels->size(), compiled,
              distinct.size() - compiled, secondsSince(t0), cubinBytes / 1024,
              cache.empty() ? "memory only" : cache.c_str());
  results["kernels"] = jk;
  if (o.compileOnly)
    return finish(o, results, kOk);

  // The GPU.
  auto dev = CudaDevice::get();
  if (!dev) {
    std::fprintf(
        stderr,
        "fp8-run: no GPU to run on: %s\n"
        "fp8-run: the %zu kernels compiled; nothing ran (--compile-only "
        "only compiles, --cpu runs the plan on the CPU oracle)\n",
        dev.message().c_str(), distinct.size());
    results["error"] = "no GPU: " + dev.message();
    return finish(o, results, kNoGpu);
  }
  std::printf("device: %s (%d SMs, compute capability %d.%d)\n",
              (*dev)->name.c_str(), (*dev)->smCount, (*dev)->ccMajor,
              (*dev)->ccMinor);
  results["device"] = (*dev)->name;
  if (Status s =
          checkHostMemory("staging the plan's buffers on the host (dims " +
                              formatDims(*dims) + ")",
                          hostRunBytes(*plan, *shapes, RunOn::Gpu, o.verify));
      !s)
    return fail(o, results, "cannot run the plan", s);
  auto gpu = GpuPlan::create(*plan, *shapes);
  if (!gpu)
    return fail(o, results, "cannot set up the plan on the GPU", gpu.status());
  HostBuffers host = allocateHostBuffers(*plan, *shapes);
  if (Status s = fillInputs(*plan, host, o.inputs); !s)
    return fail(o, results, "cannot read the inputs", s);
  if (Status s = saveInputs(o, *plan, host); !s)
    return fail(o, results, "cannot save the inputs", s);
  if (Status s = (*gpu)->upload(host); !s)
    return fail(o, results, "cannot upload the inputs", s);
  std::printf("buffers: %s on the device\n",
              mib(double((*gpu)->deviceBytes())).c_str());
  {
    // The scales some GEMMs read in their TMA layout: A's transposed, B's
    // with a padded pitch (runtime/plan/PlanScaleMirror.h).
    const ScaleMirrorPlan &mp = (*gpu)->scaleMirrors();
    json jm = json::array();
    for (size_t mi = 0; mi < mp.mirrors.size(); ++mi) {
      const ScaleMirror &m = mp.mirrors[mi];
      const bool isA = m.transposed();
      std::string readers;
      for (size_t i = 0; i < plan->steps.size(); ++i)
        if (scaleSource(mp, i, isA).mirror == int(mi))
          readers += (readers.empty() ? "" : ", ") + plan->steps[i].name;
      std::printf("scale mirror: %s [%lld][%lld] by %s, %s scales of %s\n",
                  m.scales.c_str(), static_cast<long long>(m.outer()),
                  static_cast<long long>(m.pitch()),
                  plan->steps[m.writer].name.c_str(), isA ? "A" : "B",
                  readers.c_str());
      jm.push_back({{"scales", m.scales},
                    {"writer", plan->steps[m.writer].name},
                    {"operand", isA ? "a" : "b"},
                    {"readers", readers},
                    {"shape", {m.outer(), m.pitch()}}});
    }
    results["scale_mirrors"] = jm;
  }

  t0 = std::chrono::steady_clock::now();
  if (Status s = (*gpu)->run(Phase::Prepare, true); !s)
    return fail(o, results, "a prepare step failed", s);
  std::printf("prepare: %zu steps in %.1f ms (first launch: module loads "
              "included)\n",
              prepare, secondsSince(t0) * 1e3);
  const int iters = o.verify ? verifyIterations(*plan) : 1;
  HostBuffers statesBefore;
  for (int it = 0; it < iters; ++it) {
    if (it + 1 == iters)
      for (const PlanBuffer &b : plan->buffers)
        if (b.role == BufferRole::State) {
          HostTensor t;
          if (Status s = (*gpu)->download(b.name, t); !s)
            return fail(o, results, "cannot read a state", s);
          statesBefore[b.name] = std::move(t);
        }
    t0 = std::chrono::steady_clock::now();
    if (Status s = (*gpu)->run(Phase::Run, true); !s)
      return fail(o, results, "a step failed", s);
    std::printf("run %d: %zu steps in %.1f ms (every step synchronized)\n",
                it + 1, plan->steps.size() - prepare, secondsSince(t0) * 1e3);
  }
  HostBuffers gpuValues;
  for (const PlanBuffer &b : plan->buffers) {
    if (!o.verify && b.role != BufferRole::Output)
      continue;
    HostTensor t;
    if (Status s = (*gpu)->download(b.name, t); !s)
      return fail(o, results, "cannot read the results", s);
    gpuValues[b.name] = std::move(t);
  }

  int code = kOk;
  if (o.verify) {
    t0 = std::chrono::steady_clock::now();
    std::printf("verify: every step against the CPU oracle on the step's GPU "
                "inputs:\n");
    auto steps = checkSteps(*plan, gpuValues, statesBefore);
    if (!steps)
      return fail(o, results, "verification could not run", steps.status());
    json v, js = json::array();
    for (const StepCheck &c : *steps) {
      if (c.exact)
        std::printf("  step %-14s %-11s %lld/%lld elements identical%s%s\n",
                    c.step.c_str(), c.kind.c_str(),
                    (long long)(c.elements - c.mismatches),
                    (long long)c.elements,
                    c.passed ? "" : "  FAILED: ", c.detail.c_str());
      else
        std::printf("  step %-14s %-11s max |d - oracle| / max |oracle| = "
                    "%.3g (bound %.0e)%s%s\n",
                    c.step.c_str(), c.kind.c_str(), c.relError, c.bound,
                    c.passed ? "" : "  FAILED ", c.detail.c_str());
      js.push_back({{"step", c.step},
                    {"kind", c.kind},
                    {"exact", c.exact},
                    {"elements", c.elements},
                    {"mismatches", c.mismatches},
                    {"rel_error", c.relError},
                    {"bound", c.bound},
                    {"passed", c.passed},
                    {"detail", c.detail}});
    }
    v["steps"] = js;
    OutputCheckOptions opts;
    opts.iterations = iters;
    opts.withOracle = true;
    opts.statedBound = o.similarityBound;
    auto outs = checkOutputs(*plan, *shapes, host, gpuValues, opts);
    if (!outs)
      return fail(o, results, "verification could not run", outs.status());
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
    code = ok ? kOk : kFailed;
  }
  if (Status s = writeOutputs(o, *plan, gpuValues); !s)
    return fail(o, results, "cannot write the outputs", s);

  if (o.bench) {
    auto b = benchPlan(**gpu, *plan, *shapes, o.iters);
    if (!b)
      return fail(o, results, "the benchmark failed", b.status());
    std::printf("bench: median of %d runs (CUDA events, steps back to back):\n",
                b->iters);
    std::printf("  %-14s %-11s %10s %9s   %-26s %10s %8s %10s\n", "step",
                "kind", "ours ms", "TFLOP/s", "cuBLASLt", "ms", "ratio",
                "bf16 ms");
    json jb = json::array();
    for (const BenchStep &s : b->steps) {
      json e{{"step", s.step},
             {"kind", s.kind},
             {"ms", s.ms},
             {"kernel", s.kernel}};
      if (s.kind == "gemm") {
        char peer[64] = "";
        if (s.peerMs > 0)
          std::snprintf(peer, sizeof(peer), "%10.4f %7.2fx", s.peerMs,
                        s.peerMs / s.ms);
        else
          std::snprintf(peer, sizeof(peer), "%10s %8s", "n/a", "");
        const char *tma = s.scaleATma && s.scaleBTma
                              ? "  (A and B scales by TMA)"
                          : s.scaleATma ? "  (A scales by TMA)"
                          : s.scaleBTma ? "  (B scales by TMA)"
                                        : "";
        std::printf("  %-14s %-11s %10.4f %9.1f   %-26s %s %10.4f%s\n",
                    s.step.c_str(), s.kind.c_str(), s.ms, s.tflops,
                    s.peerKind.c_str(), peer, s.bf16Ms, tma);
        if (!s.peerNote.empty())
          std::printf("    (cuBLASLt: %s)\n", s.peerNote.c_str());
        e["m"] = s.m;
        e["n"] = s.n;
        e["k"] = s.k;
        e["batch"] = s.batch;
        e["tflops"] = s.tflops;
        e["scale_a_tma"] = s.scaleATma;
        e["scale_b_tma"] = s.scaleBTma;
        e["cublaslt_kind"] = s.peerKind;
        e["cublaslt_same_recipe"] = s.peerSameRecipe;
        e["cublaslt_ms"] = s.peerMs;
        e["cublaslt_bf16_ms"] = s.bf16Ms;
        if (!s.peerNote.empty())
          e["cublaslt_note"] = s.peerNote;
      } else {
        std::printf("  %-14s %-11s %10.4f\n", s.step.c_str(), s.kind.c_str(),
                    s.ms);
      }
      jb.push_back(e);
    }
    std::printf("  %-14s %-11s %10.4f   (GEMMs %.4f ms; the same GEMMs "
                "through cuBLASLt %.4f ms, BF16 %.4f ms)\n",
                "total", "", b->totalMs, b->gemmMs, b->peerGemmMs,
                b->bf16GemmMs);
    results["bench"] = {{"iters", b->iters},
                        {"steps", jb},
                        {"total_ms", b->totalMs},
                        {"gemm_ms", b->gemmMs},
                        {"cublaslt_gemm_ms", b->peerGemmMs},
                        {"cublaslt_bf16_gemm_ms", b->bf16GemmMs},
                        {"have_cublaslt", b->havePeers}};
  }
  return finish(o, results, code);
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
