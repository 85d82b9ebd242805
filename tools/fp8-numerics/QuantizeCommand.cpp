//===- QuantizeCommand.cpp - fp8-numerics quantize ------------------------===//
//
// Quantizes one tensor (random, or read from a .npy file) with a recipe and
// reports QuantStats; with --mode delayed, runs --steps steps of delayed
// scaling on a tensor that grows by --growth per step and reports each.
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-numerics/Commands.h"

#include "core/Args.h"
#include "core/RecipeRules.h"
#include "numerics/Npy.h"
#include "numerics/Parallel.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "runtime/MemoryBudget.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace fp8::tools {

using namespace fp8::numerics;
using json = nlohmann::ordered_json;

int fail(const std::string &message, int code) {
  std::fprintf(stderr, "fp8-numerics: error: %s\n", message.c_str());
  return code;
}

namespace {

const char *kSummary =
    "Quantizes a tensor to FP8 with the given recipe and prints what it\n"
    "cost: underflow (nonzero values that became zero), overflow (values\n"
    "clamped at the format maximum: delayed scaling only), range collapse\n"
    "(distinct values of a block that became equal), and the round-trip\n"
    "error. Definitions: docs/numerics.md.";

std::vector<OptionSpec> options() {
  return {
      {"shape", "RxC", "shape of the random tensor", "4096x7168"},
      {"input", "FILE",
       "quantize this .npy instead (f4, f8, f2, bf16 as V2 "
       "or u2); N-d arrays are read as [rows, last dim]",
       ""},
      {"granularity", "G",
       "per_tensor, per_row, per_column, 1x128, 128x128, mx, <r>x<c>[:scale] "
       "(per_tensor with --mode delayed)",
       "1x128"},
      {"format", "F", "e4m3fn or e5m2", "e4m3fn"},
      {"scale", "S",
       "scale format f32, f32_pow2 or ue8m0 (overrides a "
       "':scale' suffix of the granularity)",
       ""},
      {"dist", "D", "random values: normal, uniform, positive, outliers",
       "normal"},
      {"seed", "N", "random seed", "1"},
      {"magnitude", "X", "multiplies the random values", "1"},
      {"outlier-fraction", "P", "outliers: share of elements hit", "0.001"},
      {"outlier-scale", "X", "outliers: factor applied to them", "100"},
      {"mode", "M", "current or delayed scaling", "current"},
      {"steps", "N", "delayed: steps to run", "4"},
      {"growth", "X", "delayed: the tensor is multiplied by X^step", "1.5"},
      {"history", "N", "delayed: amax history length", "16"},
      {"interval", "N", "delayed: steps between amax measurements", "1"},
      {"margin", "N", "delayed: scale = amax * 2^N / fmt_max", "0"},
      {"algo", "A", "delayed: max or most_recent", "max"},
      {"nonfinite", "P", "NaN/inf inputs: error or propagate", "error"},
      {"save", "PREFIX",
       "write PREFIX.codes.npy (u1) and PREFIX.scales.npy (f4; plus "
       "PREFIX.scale_codes.npy for ue8m0)",
       ""},
      {"json", "", "print JSON instead of text", ""},
      {"help", "", "print this help", ""},
  };
}

json statsJson(const QuantStats &s) {
  json j;
  j["elements"] = s.elements;
  j["blocks"] = s.blocks;
  j["zero_blocks"] = s.zeroBlocks;
  j["non_finite"] = s.nonFinite;
  j["nonzero"] = s.nonzero;
  j["underflow"] = s.underflow;
  j["underflow_ratio"] = s.underflowRatio;
  j["overflow"] = s.overflow;
  j["overflow_ratio"] = s.overflowRatio;
  j["distinct_inputs"] = s.distinctInputs;
  j["distinct_quantized"] = s.distinctQuantized;
  j["range_collapse_ratio"] = s.rangeCollapseRatio;
  j["amax"] = s.amax;
  j["max_abs_error"] = s.maxAbsError;
  j["max_rel_error"] = s.maxRelError;
  j["mean_rel_error"] = s.meanRelError;
  j["rms_error"] = s.rmsError;
  return j;
}

void printStats(const QuantStats &s) {
  std::printf("  scale blocks      %lld (%lld all-zero)\n", (long long)s.blocks,
              (long long)s.zeroBlocks);
  std::printf("  amax              %.6g\n", s.amax);
  std::printf("  underflow         %.5g%% (%lld of %lld nonzero values)\n",
              100 * s.underflowRatio, (long long)s.underflow,
              (long long)s.nonzero);
  std::printf("  overflow          %.5g%% (%lld values)\n",
              100 * s.overflowRatio, (long long)s.overflow);
  std::printf("  range collapse    %.5g%% (%lld distinct values -> %lld "
              "codes, summed over blocks)\n",
              100 * s.rangeCollapseRatio, (long long)s.distinctInputs,
              (long long)s.distinctQuantized);
  std::printf("  max abs error     %.6g\n", s.maxAbsError);
  std::printf("  relative error    max %.6g, mean %.6g\n", s.maxRelError,
              s.meanRelError);
  std::printf("  rms error         %.6g\n", s.rmsError);
  if (s.nonFinite)
    std::printf("  non-finite        %lld values\n", (long long)s.nonFinite);
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// Host memory per element: the f32 values, their copy in delayed scaling,
/// the codes and the statistics' per-block keys.
constexpr int64_t kQuantizeBytesPerElement = 13;

/// The input tensor: from --input, else random.
struct Input {
  std::vector<float> values;
  int64_t rows = 0, cols = 0;
  std::string description;
};

Expected<Input> loadInput(const Args &args, const RandomSpec &spec) {
  Input in;
  if (args.has("input")) {
    std::string path = args.get("input");
    Expected<NpyArray> a = readNpy(path);
    if (!a)
      return a.status();
    if (a->elements() > kMaxOperandElements)
      return errorf("expected '", path,
                    "' to hold at most 2^31 elements, "
                    "found ",
                    a->elements());
    FP8_RETURN_IF_ERROR(checkHostMemory(
        "quantizing '" + path + "'", a->elements() * kQuantizeBytesPerElement));
    U2As u2 = U2As::BF16; // '<u2' arrays are bf16 bit patterns here
    Expected<std::vector<float>> v = npyToFloat(*a, u2);
    if (!v)
      return Status(v.status()).withContext("reading '" + path + "'");
    in.values = std::move(*v);
    if (a->shape.empty()) {
      in.rows = in.cols = 1;
    } else {
      in.cols = a->shape.back();
      in.rows = in.cols ? int64_t(in.values.size()) / in.cols : 0;
    }
    in.description = path + " (" + a->descr + ")";
    return in;
  }
  Expected<std::pair<int64_t, int64_t>> shape = args.getShape("shape");
  if (!shape)
    return shape.status();
  in.rows = shape->first;
  in.cols = shape->second;
  in.values = randomTensor(in.rows * in.cols, spec);
  in.description =
      std::string(toString(spec.dist)) + ", seed " + std::to_string(spec.seed);
  return in;
}

Status save(const std::string &prefix, const QuantizedTensor &q) {
  FP8_RETURN_IF_ERROR(writeNpy(prefix + ".codes.npy",
                               npyFromBytes(q.codes.data(), {q.rows, q.cols})));
  FP8_RETURN_IF_ERROR(
      writeNpy(prefix + ".scales.npy",
               npyFromFloat(q.scales.data(), {q.scaleRows, q.scaleCols})));
  if (!q.scaleCodes.empty())
    FP8_RETURN_IF_ERROR(writeNpy(
        prefix + ".scale_codes.npy",
        npyFromBytes(q.scaleCodes.data(), {q.scaleRows, q.scaleCols})));
  return Status::ok();
}

/// The recipe and the run of the command line: its errors are usage errors.
struct Setup {
  QuantRecipe recipe;
  QuantizeOptions qopts;
  RandomSpec spec; ///< the random tensor's (without --input)
  int64_t steps = 0;
  double growth = 1;
};

/// The recipe's options: format, granularity, scale, mode and delayed
/// scaling's parameters, the non-finite policy.
Status parseRecipe(const Args &args, Setup &setup) {
  QuantRecipe &recipe = setup.recipe;
  std::optional<DType> fmt = parseDType(args.get("format"));
  if (!fmt || !isFP8(*fmt))
    return errorf("expected --format e4m3fn or e5m2, found '",
                  args.get("format"), "'");
  recipe.format = *fmt;
  Expected<Granularity> g = parseGranularity(args.get("granularity"));
  if (!g)
    return g.status();
  recipe.granularity = *g;
  if (args.has("scale")) {
    std::optional<ScaleFormat> sf = parseScaleFormat(args.get("scale"));
    if (!sf)
      return errorf("expected --scale f32, f32_pow2 or ue8m0, found '",
                    args.get("scale"), "'");
    recipe.granularity.scale = *sf;
  }
  std::optional<ScalingMode> mode = parseScalingMode(args.get("mode"));
  if (!mode)
    return errorf("expected --mode current or delayed, found '",
                  args.get("mode"), "'");
  recipe.mode = *mode;
  // Delayed scaling is per-tensor (core/RecipeRules.h): make that the
  // default granularity there.
  if (recipe.mode == ScalingMode::Delayed && !args.has("granularity"))
    recipe.granularity = Granularity::perTensor(recipe.granularity.scale);
  Expected<int64_t> steps = args.getInt("steps", 1, 1000000);
  Expected<int64_t> history = args.getInt("history", 1, 1 << 20);
  Expected<int64_t> interval = args.getInt("interval", 1, 1 << 20);
  Expected<int64_t> margin = args.getInt("margin", 0, 127);
  Expected<double> growth = args.getDouble("growth");
  for (const Status &s : {steps.status(), history.status(), interval.status(),
                          margin.status(), growth.status()})
    if (!s)
      return s;
  std::optional<AmaxAlgo> algo = parseAmaxAlgo(args.get("algo"));
  if (!algo)
    return errorf("expected --algo max or most_recent, found '",
                  args.get("algo"), "'");
  recipe.delayed.historyLength = *history;
  recipe.delayed.updateInterval = *interval;
  recipe.delayed.margin = *margin;
  recipe.delayed.algo = *algo;
  setup.steps = *steps;
  setup.growth = *growth;
  std::string nonFinite = args.get("nonfinite");
  if (nonFinite == "propagate")
    setup.qopts.nonFinite = NonFinitePolicy::Propagate;
  else if (nonFinite != "error")
    return errorf("expected --nonfinite error or propagate, found '", nonFinite,
                  "'");
  return Status::ok();
}

/// The random tensor's distribution, seed and outliers.
Status parseRandomSpec(const Args &args, RandomSpec &spec) {
  std::optional<Distribution> dist = parseDistribution(args.get("dist"));
  if (!dist)
    return errorf("expected --dist normal, uniform, positive or outliers, "
                  "found '",
                  args.get("dist"), "'");
  spec.dist = *dist;
  Expected<int64_t> seed = args.getInt("seed", 0, INT64_MAX);
  Expected<double> magnitude = args.getDouble("magnitude");
  Expected<double> ofrac = args.getDouble("outlier-fraction");
  Expected<double> oscale = args.getDouble("outlier-scale");
  for (const Status &s :
       {seed.status(), magnitude.status(), ofrac.status(), oscale.status()})
    if (!s)
      return s;
  spec.seed = uint64_t(*seed);
  spec.scale = float(*magnitude);
  spec.outlierFraction = *ofrac;
  spec.outlierScale = float(*oscale);
  return Status::ok();
}

/// The random tensor's size, checked before anything is allocated: an
/// exit code, or kExitOk to go on.
int checkRandomTensor(const Args &args) {
  Expected<std::pair<int64_t, int64_t>> shape = args.getShape("shape");
  if (!shape)
    return fail(shape.message(), kExitUsage);
  const int64_t elements = shape->first * shape->second; // each <= 2^31
  if (elements > kMaxOperandElements)
    return fail("expected --shape to have at most 2^31 elements, found " +
                    args.get("shape") + " (" + std::to_string(elements) + ")",
                kExitUsage);
  if (Status s =
          checkHostMemory("quantizing a " + args.get("shape") + " tensor",
                          elements * kQuantizeBytesPerElement);
      !s)
    return fail(s.message(), kExitFailure);
  return kExitOk;
}

/// Current scaling: one quantization and its statistics.
int runCurrent(const Args &args, const Input &in, const Setup &setup,
               json &out) {
  QuantStats st;
  auto t0 = std::chrono::steady_clock::now();
  Expected<QuantizedTensor> q =
      quantize(in.values.data(), in.rows, in.cols, setup.recipe, &st, nullptr,
               setup.qopts);
  double secs = seconds(t0);
  if (!q)
    return fail(q.message(), kExitFailure);
  if (args.has("save"))
    if (Status s = save(args.get("save"), *q); !s)
      return fail(s.message(), kExitFailure);
  if (args.has("json")) {
    out["stats"] = statsJson(st);
    out["seconds"] = secs;
    std::cout << out.dump(2) << "\n";
  } else {
    printStats(st);
    std::printf("  time              %.3f s (quantization and statistics, "
                "%d threads)\n",
                secs, numThreads());
  }
  return kExitOk;
}

/// Delayed scaling: the same tensor (re-drawn for random inputs) grown by
/// growth^step, one quantization per step.
int runDelayed(const Args &args, const Input &in, const Setup &setup,
               json &out) {
  const QuantRecipe &recipe = setup.recipe;
  const DelayedScaling &ds = recipe.delayed;
  const bool asJson = args.has("json");
  AmaxHistory hist(ds);
  if (!asJson)
    std::printf("  history %lld, interval %lld, margin %lld, %s; tensor x "
                "%.3g^step\n\n  %-5s %-11s %-11s %-8s %-10s %-10s %-10s %s\n",
                (long long)ds.historyLength, (long long)ds.updateInterval,
                (long long)ds.margin, std::string(toString(ds.algo)).c_str(),
                setup.growth, "step", "amax", "scale amax", "source",
                "overflow", "underflow", "collapse", "mean rel err");
  json rows = json::array();
  for (int64_t step = 0; step < setup.steps; ++step) {
    std::vector<float> x = in.values;
    if (!args.has("input") && step > 0) {
      RandomSpec s = setup.spec;
      s.seed = setup.spec.seed + uint64_t(step);
      x = randomTensor(in.rows * in.cols, s);
    }
    float factor = float(std::pow(setup.growth, double(step)));
    for (float &v : x)
      v *= factor;
    QuantStats st;
    Expected<QuantizedTensor> q =
        quantize(x.data(), in.rows, in.cols, recipe, &st, &hist, setup.qopts);
    if (!q)
      return fail(q.message(), q.message().find("expected finite") == 0
                                   ? kExitFailure
                                   : kExitUsage);
    if (asJson) {
      json r = statsJson(st);
      r["step"] = step;
      r["scale_amax"] = st.scaleAmax;
      r["used_history"] = st.usedHistory;
      rows.push_back(r);
    } else {
      std::printf("  %-5lld %-11.5g %-11.5g %-8s %-10.4g %-10.4g %-10.6g "
                  "%.4g\n",
                  (long long)step, st.amax, st.scaleAmax,
                  st.usedHistory ? "history" : "current", st.overflowRatio,
                  st.underflowRatio, st.rangeCollapseRatio, st.meanRelError);
    }
  }
  if (asJson) {
    out["delayed"] = {{"history", ds.historyLength},
                      {"interval", ds.updateInterval},
                      {"margin", ds.margin},
                      {"algo", toString(ds.algo)},
                      {"growth", setup.growth}};
    out["steps"] = rows;
    std::cout << out.dump(2) << "\n";
  }
  return kExitOk;
}

} // namespace

int runQuantize(int argc, char **argv) {
  Args args("quantize", options());
  if (Status s = args.parse(argc, argv, 2); !s)
    return fail(s.message(), kExitUsage);
  if (args.has("help")) {
    std::fputs(args.help("fp8-numerics", kSummary).c_str(), stdout);
    return kExitOk;
  }
  Setup setup;
  if (Status s = parseRecipe(args, setup); !s)
    return fail(s.message(), kExitUsage);
  if (Status s = parseRandomSpec(args, setup.spec); !s)
    return fail(s.message(), kExitUsage);
  if (args.has("input") && args.has("shape"))
    return fail("expected either --input or --shape, found both", kExitUsage);
  // The recipe before any data: a bad granularity is a usage error, found
  // before the tensor is allocated. A block larger than the tensor covers
  // that dimension whole.
  const QuantRecipe &recipe = setup.recipe;
  if (Status s = checkQuantRecipe(recipe, "the tensor"); !s)
    return fail(s.message(), kExitUsage);
  if (!args.has("input"))
    if (int code = checkRandomTensor(args); code != kExitOk)
      return code;
  Expected<Input> in = loadInput(args, setup.spec);
  if (!in)
    return fail(in.message(), args.has("input") ? kExitFailure : kExitUsage);

  json out;
  out["command"] = "quantize";
  out["input"] = in->description;
  out["shape"] = {in->rows, in->cols};
  out["format"] = toString(recipe.format);
  out["granularity"] = toString(recipe.granularity);
  out["scale_format"] = toString(recipe.granularity.scale);
  out["mode"] = toString(recipe.mode);
  out["threads"] = numThreads();
  if (!args.has("json"))
    std::printf(
        "quantize %lldx%lld (%s) -> %s, %s%s, %s scaling\n",
        (long long)in->rows, (long long)in->cols, in->description.c_str(),
        std::string(toString(recipe.format)).c_str(),
        toString(recipe.granularity).c_str(),
        recipe.granularity.scale == ScaleFormat::F32 ? " (f32 scales)" : "",
        std::string(toString(recipe.mode)).c_str());
  if (recipe.mode == ScalingMode::Current)
    return runCurrent(args, *in, setup, out);
  return runDelayed(args, *in, setup, out);
}

} // namespace fp8::tools
