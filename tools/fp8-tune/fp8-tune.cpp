//===- fp8-tune.cpp - Tile configurations measured, into the tuning database
//-===//
//
//   fp8-tune --db tuning.json --shapes bench/shapes.json [--m 128,4096]
//   fp8-tune --db tuning.json --plan examples/plans/mlp.sm_90a.plan.json \
//            --dim M=4096
//   fp8-tune --shape 4096x7168x2112 --compile-only      (no GPU needed)
//
// For each GEMM: every candidate tile the generator builds (runtime/Tuner.h)
// compiled in parallel, timed on the GPU, the winner checked against the
// CPU oracle; each winner merged into the tuning database (codegen/
// TuningDb.h, safe when several processes update it) as soon as it is
// measured, so that a run stopped part-way keeps the GEMMs it finished;
// fp8::gemm, fp8-run and fp8-bench read it through FP8_TUNING_DB.
//
//===----------------------------------------------------------------------===//

#include "codegen/Gemm.h"
#include "codegen/TuningDb.h"
#include "core/Args.h"
#include "core/Env.h"
#include "core/InputFile.h"
#include "core/JsonInput.h"
#include "core/ParseNumber.h"
#include "core/RecipePresets.h"
#include "core/Target.h"
#include "runtime/CudaDriver.h"
#include "runtime/Gemm.h"
#include "runtime/GroupedGemm.h"
#include "runtime/KernelCache.h"
#include "runtime/Tuner.h"
#include "runtime/plan/Plan.h"
#include "tools/shapes/ShapeFile.h"

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace fp8;
using json = nlohmann::json;

namespace {

const char *const kTool = "fp8-tune";

[[noreturn]] void die(const std::string &message, int code = 1) {
  std::fprintf(stderr, "%s: %s\n", kTool, message.c_str());
  std::exit(code);
}

/// One GEMM to tune: its spec (tile unset) and M.
struct Problem {
  KernelSpec spec;
  int64_t m = 0;
  std::string from; ///< "shape 3 of FILE", "step 'gemm_0'"
};

KernelSpec specOfRecipe(const std::string &preset, int64_t n, int64_t k) {
  std::optional<RecipePreset> p = findRecipePreset(preset, Arch::SM90a);
  if (!p)
    die("expected --recipe to be one of " + recipePresetNames() + ", found '" +
            preset + "'",
        2);
  KernelSpec s;
  s.arch = Arch::SM90a;
  s.a.granularity = p->a;
  s.b.granularity = p->b;
  s.promotionInterval = p->promotionInterval;
  s.out = DType::BF16;
  s.n = n;
  s.k = k;
  return s;
}

/// "MxNxK[,MxNxK...]".
std::vector<std::array<int64_t, 3>> parseShapes(const std::string &text) {
  std::vector<std::array<int64_t, 3>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string one = text.substr(pos, end - pos);
    std::array<int64_t, 3> v{};
    size_t at = 0;
    for (int i = 0; i < 3; ++i) {
      const size_t x = i < 2 ? one.find('x', at) : one.size();
      std::optional<int64_t> n = parseInteger(
          one.substr(at, x == std::string::npos ? std::string::npos : x - at),
          1, int64_t(1) << 20);
      if (!n || x == std::string::npos)
        die("expected --shape as MxNxK[,MxNxK...] with sizes in [1, 2^20], "
            "found '" +
                one + "'",
            2);
      v[size_t(i)] = *n;
      at = x + 1;
    }
    out.push_back(v);
    pos = end + 1;
  }
  return out;
}

/// The plan's GEMM steps at the dims given ("M=4096,N=8"), dense and
/// grouped, with M as tuneGemm takes it: A's rows (all groups' in the
/// contiguous form), a masked group's slab (A [G, max_m, K]), or along K
/// D's rows.
std::vector<Problem> planProblems(const std::string &path,
                                  const std::string &dims) {
  Expected<Plan> plan = loadPlan(path);
  if (!plan)
    die(plan.message(), 2);
  std::vector<std::pair<std::string, int64_t>> given;
  size_t pos = 0;
  while (!dims.empty() && pos <= dims.size()) {
    const size_t end = std::min(dims.find(',', pos), dims.size());
    const std::string one = dims.substr(pos, end - pos);
    const size_t eq = one.find('=');
    std::optional<int64_t> v =
        eq == std::string::npos
            ? std::nullopt
            : parseInteger(one.substr(eq + 1), 0, kMaxDimSize - 1);
    if (!v)
      die("expected --dim NAME=SIZE[,NAME=SIZE...], found '" + one + "'", 2);
    given.emplace_back(one.substr(0, eq), *v);
    pos = end + 1;
  }
  Expected<DimValues> dv = resolveDims(*plan, given);
  if (!dv)
    die(dv.message(), 2);
  Expected<ResolvedPlan> shapes = resolvePlan(*plan, *dv);
  if (!shapes)
    die(shapes.message(), 2);
  std::vector<Problem> out;
  for (const PlanStep &s : plan->steps) {
    if (s.kind != StepKind::Gemm)
      continue;
    if (s.gemm.epilogue || s.batch != 1) {
      std::fprintf(stderr,
                   "%s: step '%s' skipped: fp8-tune times single GEMMs "
                   "without an epilogue\n",
                   kTool, s.name.c_str());
      continue;
    }
    Problem p;
    const Shape &a = shapes->shapes.at(s.inputs[0]);
    p.spec = gemmLaunchValues(s, a);
    p.m = geometry(a).rows;
    p.from = "step '" + s.name + "'";
    out.push_back(p);
  }
  return out;
}

/// Progress on stderr: a bar redrawn in place on a terminal, a line per
/// GEMM otherwise; the ETA from the time spent so far.
class Progress {
public:
  explicit Progress(size_t total)
      : total_(total), tty_(::isatty(2)),
        start_(std::chrono::steady_clock::now()) {}

  void update(size_t index, const std::string &what, const TuneProgress &p) {
    // Compiling is about a third of a GEMM's time, timing the rest.
    const double phase = p.total ? double(p.done) / double(p.total) : 0.0;
    const double frac = (double(index) + (std::string(p.phase) == "compile"
                                              ? 0.3 * phase
                                              : 0.3 + 0.7 * phase)) /
                        double(total_);
    const double elapsed = seconds();
    const int width = 30, filled = int(frac * width);
    char eta[32] = "--";
    if (frac > 0.01)
      std::snprintf(eta, sizeof(eta), "%.0f s", elapsed / frac - elapsed);
    if (!tty_)
      return;
    std::fprintf(stderr, "\r[%s%s] %3.0f%%  %zu/%zu %s: %s %zu/%zu  ETA %s   ",
                 std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), frac * 100,
                 index + 1, total_, what.c_str(), p.phase, p.done, p.total,
                 eta);
    std::fflush(stderr);
  }
  void line(const std::string &text) {
    std::fprintf(stderr, "%s", tty_ ? "\r\033[K" : "");
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }

private:
  size_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

/// "4096x2112x7168"; a grouped GEMM's with its form and groups,
/// "grouped_masked 8 x 256x4096x7168" (M: tuneGemm's).
std::string shapeText(const Problem &p) {
  std::string text = std::to_string(p.m) + "x" + std::to_string(p.spec.n) +
                     "x" + std::to_string(p.spec.k);
  if (p.spec.kind == GemmKind::Dense)
    return text;
  return std::string(toString(p.spec.kind)) + " " +
         std::to_string(p.spec.groups) + " x " + text;
}

/// Compiles every candidate of every problem without a GPU.
int compileOnly(const std::vector<Problem> &problems, const TuneOptions &o,
                int smCount) {
  for (const Problem &p : problems) {
    const std::vector<TileConfig> tiles =
        tuneCandidates(p.spec, p.m, smCount, o);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<TunedTile> out;
    for (const TileConfig &t : tiles)
      out.push_back({t});
    if (Status st = compileCandidates(p.spec, p.m, out, o); !st)
      die(st.message());
    size_t failed = 0;
    for (const TunedTile &t : out)
      if (!t.error.empty()) {
        ++failed;
        std::fprintf(stderr, "%s: %s: tile %s: %s\n", kTool,
                     shapeText(p).c_str(), toJSON(t.tile).c_str(),
                     t.error.c_str());
      }
    std::printf(
        "%s (%s): %zu candidates compiled, %zu failed, %.1f s\n",
        shapeText(p).c_str(), p.from.c_str(), out.size() - failed, failed,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
    if (failed)
      return 1;
  }
  return 0;
}

/// The GEMMs the arguments name: a plan's steps, or shapes.
std::vector<Problem> problemsOf(const Args &args) {
  std::vector<Problem> problems;
  if (args.has("plan")) {
    problems = planProblems(args.get("plan"), args.get("dim"));
  } else {
    std::vector<std::array<int64_t, 3>> shapes;
    ShapeFile file;
    if (args.has("shapes")) {
      Expected<ShapeFile> read = readShapeFile(args.get("shapes"));
      if (!read)
        die(read.message(), 2);
      file = std::move(*read);
      for (const DenseShape &d : file.dense)
        shapes.push_back({d.m, d.n, d.k});
    }
    if (args.has("shape"))
      for (const auto &s : parseShapes(args.get("shape")))
        shapes.push_back(s);
    if (shapes.empty() && file.grouped.empty())
      die("expected --shapes FILE, --shape MxNxK or --plan FILE (see --help)",
          2);
    std::vector<int64_t> ms;
    if (args.has("m")) {
      auto v = args.getIntList("m", 1, int64_t(1) << 20);
      if (!v)
        die(v.message(), 2);
      ms = *v;
    }
    size_t index = 0;
    for (const auto &s : shapes) {
      ++index;
      for (int64_t m : ms.empty() ? std::vector<int64_t>{s[0]} : ms) {
        Problem p;
        p.spec = specOfRecipe(args.get("recipe"), s[1], s[2]);
        p.m = m;
        p.from = "shape " + std::to_string(index);
        problems.push_back(p);
      }
    }
    // A grouped entry as fp8-bench launches it (its draw of each group's
    // rows or K), so that the entry is keyed where fp8-bench looks it up.
    for (size_t i = 0; i < file.grouped.size(); ++i) {
      const GroupedShape &g = file.grouped[i];
      const GroupedDraw draw = drawGrouped(g, i);
      Problem p;
      p.spec = groupedSpec(specOfRecipe(args.get("recipe"), g.n, draw.k),
                           launchShape(g, draw));
      p.m = draw.m;
      p.from = g.list + " " + std::to_string(i + 1);
      problems.push_back(p);
    }
  }
  return problems;
}

} // namespace

/// One GEMM's line of the --json report: every candidate's time.
json reportOf(const Problem &p, const TuneResult &r) {
  json cands = json::array();
  for (const TunedTile &c : r.candidates)
    cands.push_back({{"tile", json::parse(toJSON(c.tile))},
                     {"ms", c.ms},
                     {"spread", c.spread},
                     {"error", c.error}});
  // The GEMM as tuned: its recipe's preset name (null where it has none)
  // and its spec without the tile, so that a reader can ask a later
  // heuristic for its pick (scripts/heuristic-regret.py).
  json spec = json::parse(toJSON(p.spec));
  spec.erase("tile");
  const std::optional<std::string_view> preset =
      recipePresetOf(p.spec.arch, p.spec.a.granularity, p.spec.b.granularity,
                     p.spec.promotionInterval);
  return {{"kind", toString(p.spec.kind)},
          {"recipe", preset ? json(std::string(*preset)) : json(nullptr)},
          {"spec", spec},
          {"groups", p.spec.groups},
          {"m", p.m},
          {"n", p.spec.n},
          {"k", p.spec.k},
          {"best", json::parse(toJSON(r.spec.tile))},
          {"ms", r.ms},
          {"heuristic", json::parse(toJSON(r.heuristicTile))},
          {"heuristic_ms", r.heuristicMs},
          {"oracle_difference", r.oracleDiff},
          {"candidates", cands}};
}

/// Writes `j` to `path` through a temporary file renamed over it, so that
/// a reader (or a run stopped mid-write) never sees half a report.
Status writeJson(const std::string &path, const json &j) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << j.dump(1);
    if (!f)
      return errorf("cannot write '", tmp, "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return errorf("cannot rename '", tmp, "' to '", path, "': ", ec.message());
  return Status::ok();
}

/// Tunes every problem on `device`. Each GEMM's entry is merged into the
/// database `db`, and the report `jsonPath` (if any) rewritten, as soon as
/// it is measured: a run stopped part-way keeps the GEMMs it finished. A
/// GEMM that fails is reported and the others go on; the exit status is
/// then 1.
int tuneAll(const std::vector<Problem> &problems, TuneOptions o,
            const TuningDevice &device, const std::string &db,
            const std::string &jsonPath) {
  // The database is read (and created if missing) before the first GEMM's
  // minutes are spent: a file that cannot be used fails now.
  if (Status s = TuningDb::update(db, {}); !s)
    die(s.message());
  Progress progress(problems.size());
  std::vector<std::string> failed;
  size_t merged = 0;
  json report = json::array();
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem &p = problems[i];
    o.progress = [&](const TuneProgress &tp) {
      progress.update(i, shapeText(p), tp);
    };
    Expected<TuneResult> r = tuneGemm(p.spec, p.m, o);
    if (!r) {
      failed.push_back(shapeText(p) + " (" + p.from + "): " + r.message());
      progress.line("fp8-tune: " + failed.back());
      continue;
    }
    char line[512];
    std::snprintf(
        line, sizeof(line),
        "%s: %.1f TF/s (%.4f ms) with %s; the heuristic's %.1f TF/s: %.3fx; "
        "oracle difference %.1e on %lldx%lld",
        shapeText(p).c_str(), r->tflops, r->ms, toJSON(r->spec.tile).c_str(),
        r->heuristicMs > 0 ? r->tflops * r->ms / r->heuristicMs : 0.0,
        r->heuristicMs > 0 ? r->heuristicMs / r->ms : 0.0, r->oracleDiff,
        (long long)r->oracleRows, (long long)r->oracleCols);
    progress.line(line);
    if (Status s = TuningDb::update(db, {tuningEntry(*r, device, "fp8-tune")});
        !s)
      die(s.message());
    ++merged;
    report.push_back(reportOf(p, *r));
    if (!jsonPath.empty())
      if (Status s = writeJson(
              jsonPath, {{"device", device.describe()}, {"gemms", report}});
          !s)
        die(s.message());
  }
  std::printf("%zu entries merged into %s (%.0f s)\n", merged, db.c_str(),
              progress.seconds());
  if (failed.empty())
    return 0;
  std::fprintf(stderr, "fp8-tune: %zu of %zu GEMMs failed:\n", failed.size(),
               problems.size());
  for (const std::string &f : failed)
    std::fprintf(stderr, "  %s\n", f.c_str());
  return 1;
}

int main(int argc, char **argv) {
  Args args(
      kTool,
      {{"db", "FILE", "the tuning database to update (created if missing)", ""},
       {"shapes", "FILE",
        "a shape file (bench/shapes.json's form): its dense shapes, and its "
        "grouped ones as fp8-bench draws them",
        ""},
       {"shape", "MxNxK,...", "shapes given inline", ""},
       {"m", "M,...", "tune every dense shape's N, K at these M instead", ""},
       {"recipe", "NAME", "the recipe of --shapes and --shape", "deepseek"},
       {"plan", "FILE", "tune the GEMM steps of a plan (dense and grouped)",
        ""},
       {"dim", "NAME=SIZE,...", "the plan's dims", ""},
       {"iters", "N", "timed runs a candidate (median)", "20"},
       {"quick", "",
        "leave out 2-CTA clusters, overlap over N halves and the "
        "heuristic tile's neighbours (a fifth of the candidates)",
        ""},
       {"widths", "W,...", "the tile widths (BLOCK_N) to try",
        "the measured ones"},
       {"splits", "S,...", "the split-K slice counts to try (M <= 1024)",
        "1,2,4,8"},
       {"threads", "N", "NVRTC compile threads (default: every core)", "0"},
       {"no-flush", "", "do not flush the L2 before each timed run", ""},
       {"json", "FILE", "write every candidate's time as JSON", ""},
       {"compile-only", "",
        "compile the candidates, time nothing (no GPU needed)", ""},
       {"help", "", "this text", ""}});
  if (Status s = args.parse(argc, argv, 1); !s)
    die(s.message(), 2);
  if (Status s = env::checkEnvironment(); !s)
    die(s.message(), 2);
  if (args.has("help")) {
    std::printf("%s", args.help(kTool, "time every candidate tile of GEMMs "
                                       "and record the fastest in a tuning "
                                       "database")
                          .c_str());
    return 0;
  }
  TuneOptions o;
  o.grid.full = !args.has("quick");
  o.neighbours = !args.has("quick");
  o.flushL2 = !args.has("no-flush");
  if (args.has("widths")) {
    auto v = args.getIntList("widths", 8, 256);
    if (!v)
      die(v.message(), 2);
    for (int64_t w : *v)
      if (w % 8 != 0)
        die("expected --widths to be multiples of 8 in [8, 256], found '" +
                std::to_string(w) + "'",
            2);
    o.grid.widths.assign(v->begin(), v->end());
  }
  if (args.has("splits")) {
    auto v = args.getIntList("splits", 1, 64);
    if (!v)
      die(v.message(), 2);
    o.grid.splits.assign(v->begin(), v->end());
  }
  if (auto v = args.getInt("iters", 1, 1000); v)
    o.iters = int(*v);
  else
    die(v.message(), 2);
  if (auto v = args.getInt("threads", 0, 1024); v)
    o.compileThreads = int(*v);
  else
    die(v.message(), 2);

  const std::vector<Problem> problems = problemsOf(args);
  if (problems.empty())
    die("no GEMM to tune", 2);

  if (args.has("compile-only"))
    return compileOnly(problems, o, targetInfo(Arch::SM90a).smCount);
  if (!args.has("db"))
    die("expected --db FILE (the tuning database to update)", 2);
  // A database that exists must load before any GPU time is spent on it
  // (a missing one is created by the first GEMM's merge).
  if (std::error_code ec; std::filesystem::exists(args.get("db"), ec))
    if (Expected<TuningDb> old = TuningDb::load(args.get("db")); !old)
      die(old.status()
              .withContext("not updating '" + args.get("db") +
                           "' (left as it is)")
              .message());
  auto dev = CudaDevice::get();
  if (!dev)
    die("no GPU to time on: " + dev.message() +
        " (--compile-only compiles the candidates without one)");
  const TuningDevice device = tuningDevice(**dev);
  std::printf("device: %s\n", device.describe().c_str());

  return tuneAll(problems, o, device, args.get("db"),
                 args.has("json") ? args.get("json") : "");
}
