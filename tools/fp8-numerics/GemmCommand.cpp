//===- GemmCommand.cpp - fp8-numerics gemm --------------------------------===//
//
// "What does this recipe cost me": quantizes random A [M, K] and B [N, K]
// with the chosen formats and granularities, then runs the promoted
// reference GEMM for every (promotion interval, accumulator precision) pair
// and reports its error against the FP64 product of the same FP8 values (the
// cost of the summation order and precision) and against the FP64 product of
// the unquantized inputs (the whole cost, DeepGEMM's similarity).
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-numerics/Commands.h"

#include "core/Args.h"
#include "core/KernelSpec.h"
#include "core/RecipeRules.h"
#include "numerics/Metrics.h"
#include "numerics/Parallel.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"
#include "runtime/MemoryBudget.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace fp8::tools {

using namespace fp8::numerics;
using json = nlohmann::ordered_json;

namespace {

const char *kSummary =
    "For one GEMM shape, prints the error of D = A * B^T computed with each\n"
    "promotion interval (K elements summed in the tensor-core accumulator\n"
    "before being scaled and added into FP32; 0 = never) and each\n"
    "accumulator precision (0 = IEEE FP32; N = the truncating tensor-core\n"
    "model with N fraction bits; 13 models the H100). Errors are relative\n"
    "to FP64 of the same FP8 values ('summation cost') and to FP64 of the\n"
    "unquantized inputs ('total cost', DeepGEMM's similarity; < 1e-3 is the\n"
    "usual FP8 bar). Granularities are given for A as [M, K] and B as [N, K].";

std::vector<OptionSpec> options() {
  return {
      {"m", "M", "rows of A and D", "512"},
      {"n", "N", "rows of B, columns of D", "512"},
      {"k", "K", "reduction length", "7168"},
      {"format-a", "F", "e4m3fn or e5m2", "e4m3fn"},
      {"format-b", "F", "e4m3fn or e5m2", "e4m3fn"},
      {"granularity-a", "G",
       "A's scaling over [M, K] (1x128: DeepSeek "
       "activations)",
       "per_tensor"},
      {"granularity-b", "G",
       "B's scaling over [N, K] (128x128: DeepSeek "
       "weights)",
       "per_tensor"},
      {"layout-a", "L", "k_major or mn_major", "k_major"},
      {"layout-b", "L", "k_major or mn_major", "k_major"},
      {"promotion", "LIST", "promotion intervals (0 = none)",
       "0,32,64,128,256,512,1024"},
      {"acc-bits", "LIST", "accumulator fraction bits (0 = IEEE FP32)", "0,13"},
      {"acc-group", "N", "products per MMA step of the model", "32"},
      {"dist", "D", "input values: normal, uniform, positive, outliers",
       "normal"},
      {"seed", "N", "random seed (B uses seed + 1)", "1"},
      {"json", "", "print JSON instead of text", ""},
      {"help", "", "print this help", ""},
  };
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// A logical [rows, k] matrix stored per `layout`.
std::vector<float> store(const std::vector<float> &logical, int64_t rows,
                         int64_t k, Layout layout) {
  if (layout == Layout::KMajor)
    return logical;
  std::vector<float> t(logical.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c)
      t[size_t(c * rows + r)] = logical[size_t(r * k + c)];
  return t;
}

/// Mean of (x - y) / max(|y|, floor): the systematic part of the error
/// (negative: the result underestimates).
double bias(const std::vector<float> &x, const std::vector<double> &y) {
  double maxAbs = 0;
  for (double v : y)
    maxAbs = std::max(maxAbs, std::fabs(v));
  double floor = kDefaultRelFloor * maxAbs, sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double den = std::max(std::fabs(y[i]), floor);
    sum += den > 0 ? (double(x[i]) - y[i]) / den : 0.0;
  }
  return x.empty() ? 0.0 : sum / double(x.size());
}

struct Operand {
  DType format;
  Granularity logical;
  Layout layout;
};

Expected<Operand> parseOperand(const Args &args, const std::string &suffix) {
  Operand o;
  std::optional<DType> f = parseDType(args.get("format-" + suffix));
  if (!f || !isFP8(*f))
    return errorf("expected --format-", suffix, " e4m3fn or e5m2, found '",
                  args.get("format-" + suffix), "'");
  o.format = *f;
  Expected<Granularity> g = parseGranularity(args.get("granularity-" + suffix));
  if (!g)
    return g.status();
  o.logical = *g;
  std::optional<Layout> l = parseLayout(args.get("layout-" + suffix));
  if (!l)
    return errorf("expected --layout-", suffix, " k_major or mn_major, found '",
                  args.get("layout-" + suffix), "'");
  o.layout = *l;
  return o;
}

/// The GEMM, its operands and the grid of runs the command line asks for.
struct Setup {
  int64_t m = 0, n = 0, k = 0, group = 0, seed = 0;
  std::vector<int64_t> promotions, bits;
  Operand a, b;
  Distribution dist;
};

/// Reads the command line into `setup`: an exit code, or kExitOk to go on.
int parseSetup(const Args &args, Setup &setup) {
  const int64_t kMaxDim = int64_t(1) << 20;
  Expected<int64_t> m = args.getInt("m", 1, kMaxDim);
  Expected<int64_t> n = args.getInt("n", 1, kMaxDim);
  Expected<int64_t> k = args.getInt("k", 1, kMaxDim);
  Expected<int64_t> group = args.getInt("acc-group", 1, 1024);
  Expected<int64_t> seed = args.getInt("seed", 0, INT64_MAX);
  Expected<std::vector<int64_t>> promotions =
      args.getIntList("promotion", 0, kMaxDim);
  Expected<std::vector<int64_t>> bits =
      args.getIntList("acc-bits", 0, kMaxAccumulatorBits);
  for (const Status &s : {m.status(), n.status(), k.status(), group.status(),
                          seed.status(), promotions.status(), bits.status()})
    if (!s)
      return fail(s.message(), kExitUsage);
  if (*m * *k > kMaxOperandElements || *n * *k > kMaxOperandElements)
    return fail("expected M*K and N*K to be at most 2^31 elements, found " +
                    std::to_string(*m * *k) + " and " + std::to_string(*n * *k),
                kExitUsage);
  if (*m * *n > kMaxOperandElements)
    return fail("expected M*N to be at most 2^31 elements, found " +
                    std::to_string(*m * *n),
                kExitUsage);
  // f32 inputs, their stored copies and codes; the f32 result and the two
  // f64 references.
  const int64_t hostBytes = (*m * *k + *n * *k) * 9 + *m * *n * 20;
  if (Status s =
          checkHostMemory("holding the GEMM's inputs and results", hostBytes);
      !s)
    return fail(s.message(), kExitFailure);
  Expected<Operand> opA = parseOperand(args, "a");
  if (!opA)
    return fail(opA.message(), kExitUsage);
  Expected<Operand> opB = parseOperand(args, "b");
  if (!opB)
    return fail(opB.message(), kExitUsage);
  std::optional<Distribution> dist = parseDistribution(args.get("dist"));
  if (!dist)
    return fail("expected --dist normal, uniform, positive or outliers, "
                "found '" +
                    args.get("dist") + "'",
                kExitUsage);
  setup =
      Setup{*m, *n, *k, *group, *seed, *promotions, *bits, *opA, *opB, *dist};
  return kExitOk;
}

/// Keeps the promotion intervals the kernels' rules allow for the stored
/// granularities: without --promotion, the default list keeps those the
/// recipe allows (e.g. 32, 64, 128 for 128-wide K blocks); a stated one
/// that is not allowed is an error.
Status allowedPromotions(const Args &args, const OperandSpec &specA,
                         const OperandSpec &specB,
                         std::vector<int64_t> &promotions) {
  std::vector<int64_t> allowed;
  Status firstError;
  for (int64_t p : promotions) {
    std::optional<int64_t> interval;
    if (p > 0)
      interval = p;
    Status s = checkGemmRecipe(specA, specB, interval, DType::F32);
    if (s) {
      allowed.push_back(p);
      continue;
    }
    if (args.has("promotion"))
      return errorf("promotion ", p, ": ", s.message());
    if (firstError.isOk())
      firstError = s;
  }
  if (allowed.empty())
    return firstError;
  promotions = allowed;
  return Status::ok();
}

/// The random inputs, quantized, and the two FP64 references.
struct Data {
  std::vector<float> a, b; ///< unquantized, [M, K] and [N, K]
  QuantizedTensor qa, qb;
  QuantStats stA, stB;
  std::vector<double> d64;   ///< FP64 of the same FP8 values
  std::vector<double> exact; ///< FP64 of the unquantized inputs
};

/// Draws, stores, quantizes and references the operands; an exit code, or
/// kExitOk to go on.
int prepareData(const Setup &su, const Granularity &gA, const Granularity &gB,
                Data &data) {
  RandomSpec sa, sb;
  sa.dist = sb.dist = su.dist;
  sa.seed = uint64_t(su.seed);
  sb.seed = uint64_t(su.seed) + 1;
  data.a = randomTensor(su.m * su.k, sa);
  data.b = randomTensor(su.n * su.k, sb);
  std::vector<float> aStored = store(data.a, su.m, su.k, su.a.layout);
  std::vector<float> bStored = store(data.b, su.n, su.k, su.b.layout);
  bool aK = su.a.layout == Layout::KMajor, bK = su.b.layout == Layout::KMajor;
  QuantRecipe ra, rb;
  ra.format = su.a.format;
  ra.granularity = gA;
  rb.format = su.b.format;
  rb.granularity = gB;
  Expected<QuantizedTensor> qa = quantize(aStored.data(), aK ? su.m : su.k,
                                          aK ? su.k : su.m, ra, &data.stA);
  if (!qa)
    return fail("quantizing A: " + qa.message(), kExitFailure);
  Expected<QuantizedTensor> qb = quantize(bStored.data(), bK ? su.n : su.k,
                                          bK ? su.k : su.n, rb, &data.stB);
  if (!qb)
    return fail("quantizing B: " + qb.message(), kExitFailure);
  Expected<std::vector<double>> d64 =
      referenceGemmF64(*qa, su.a.layout, *qb, su.b.layout);
  Expected<std::vector<double>> exact =
      referenceGemmUnquantized(data.a.data(), Layout::KMajor, data.b.data(),
                               Layout::KMajor, su.m, su.n, su.k);
  if (!d64 || !exact)
    return fail(!d64 ? d64.message() : exact.message(), kExitFailure);
  data.qa = std::move(*qa);
  data.qb = std::move(*qb);
  data.d64 = std::move(*d64);
  data.exact = std::move(*exact);
  return kExitOk;
}

/// Prints the text report's header: the GEMM, its operands, the columns.
void printHeader(const Setup &su, const Data &data) {
  std::printf("gemm M=%lld N=%lld K=%lld, %s inputs, %d threads\n",
              (long long)su.m, (long long)su.n, (long long)su.k,
              std::string(toString(su.dist)).c_str(), numThreads());
  for (auto [name, o, st] :
       {std::tuple{"A", &su.a, &data.stA}, std::tuple{"B", &su.b, &data.stB}})
    std::printf("  %s: %s, %s, %s; quantization: underflow %.3g%%, mean "
                "rel error %.3g%%\n",
                name, std::string(toString(o->format)).c_str(),
                toString(o->logical).c_str(),
                std::string(toString(o->layout)).c_str(),
                100 * st->underflowRatio, 100 * st->meanRelError);
  std::printf("\n  %-9s %-11s | %-40s | %-21s | %s\n", "", "",
              "vs FP64 of the same FP8 values", "vs unquantized", "");
  std::printf("  %-9s %-11s | %-9s %-9s %-10s %-9s | %-10s %-10s | %s\n",
              "promotion", "accumulator", "mean rel", "max rel", "bias", "sim",
              "sim", "max rel", "time");
}

/// Runs the reference GEMM for every (promotion, accumulator) pair, printing
/// each row or collecting it in `rows`; an exit code.
int runGrid(const Setup &su, const Data &data, bool asJson, json &rows) {
  for (int64_t p : su.promotions)
    for (int64_t nb : su.bits) {
      ReferenceGemmOptions o;
      o.promotionInterval = promotionFromInt(p);
      o.accumulator.mantissaBits = int(nb);
      o.accumulator.groupK = int(su.group);
      auto t1 = std::chrono::steady_clock::now();
      Expected<std::vector<float>> d =
          referenceGemm(data.qa, su.a.layout, data.qb, su.b.layout, nullptr, o);
      double secs = seconds(t1);
      if (!d)
        return fail(d.message(), kExitFailure);
      ErrorMetrics e8 = compare(d->data(), data.d64.data(), su.m * su.n);
      ErrorMetrics eu = compare(d->data(), data.exact.data(), su.m * su.n);
      double b8 = bias(*d, data.d64);
      std::string acc = nb == 0 ? "fp32" : "e8m" + std::to_string(nb);
      if (asJson) {
        json r;
        r["promotion"] = p;
        r["acc_bits"] = nb;
        r["acc_group"] = su.group;
        r["vs_fp64"] = {{"mean_rel", e8.meanRelError},
                        {"max_rel", e8.maxRelError},
                        {"max_abs", e8.maxAbsError},
                        {"bias", b8},
                        {"similarity", e8.similarity}};
        r["vs_unquantized"] = {{"mean_rel", eu.meanRelError},
                               {"max_rel", eu.maxRelError},
                               {"max_abs", eu.maxAbsError},
                               {"similarity", eu.similarity}};
        r["seconds"] = secs;
        rows.push_back(r);
      } else {
        std::string pname = p == 0 ? "none" : std::to_string(p);
        std::printf("  %-9s %-11s | %-9.3g %-9.3g %-+10.3g %-9.3g | %-10.3g "
                    "%-10.3g | %.2f s\n",
                    pname.c_str(), acc.c_str(), e8.meanRelError, e8.maxRelError,
                    b8, e8.similarity, eu.similarity, eu.maxRelError, secs);
      }
    }
  return kExitOk;
}

} // namespace

int runGemm(int argc, char **argv) {
  Args args("gemm", options());
  if (Status s = args.parse(argc, argv, 2); !s)
    return fail(s.message(), kExitUsage);
  if (args.has("help")) {
    std::fputs(args.help("fp8-numerics", kSummary).c_str(), stdout);
    return kExitOk;
  }
  Setup su;
  if (int code = parseSetup(args, su); code != kExitOk)
    return code;

  // Stored granularities, and every promotion interval checked against the
  // kernels' rules before any work.
  Granularity gA = logicalGranularity(su.a.logical, su.a.layout);
  Granularity gB = logicalGranularity(su.b.logical, su.b.layout);
  OperandSpec specA{su.a.format, su.a.layout, gA};
  OperandSpec specB{su.b.format, su.b.layout, gB};
  if (Status s = allowedPromotions(args, specA, specB, su.promotions); !s)
    return fail(s.message(), kExitUsage);

  auto t0 = std::chrono::steady_clock::now();
  Data data;
  if (int code = prepareData(su, gA, gB, data); code != kExitOk)
    return code;
  double setupSeconds = seconds(t0);

  bool asJson = args.has("json");
  json out;
  out["command"] = "gemm";
  out["m"] = su.m;
  out["n"] = su.n;
  out["k"] = su.k;
  out["distribution"] = toString(su.dist);
  out["threads"] = numThreads();
  auto operandJson = [](const Operand &o, const Granularity &stored,
                        const QuantStats &st) {
    json j;
    j["format"] = toString(o.format);
    j["granularity"] = toString(o.logical);
    j["layout"] = toString(o.layout);
    j["stored_granularity"] = toString(stored);
    j["underflow_ratio"] = st.underflowRatio;
    j["mean_rel_error"] = st.meanRelError;
    return j;
  };
  out["a"] = operandJson(su.a, gA, data.stA);
  out["b"] = operandJson(su.b, gB, data.stB);
  if (!asJson)
    printHeader(su, data);

  json rows = json::array();
  if (int code = runGrid(su, data, asJson, rows); code != kExitOk)
    return code;
  if (asJson) {
    out["results"] = rows;
    out["setup_seconds"] = setupSeconds;
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("\n  sim: DeepGEMM's 1 - 2*sum(xy)/sum(x^2+y^2) (0 = equal); "
                "relative errors\n  use a floor of %.0e x max|reference|; "
                "bias: mean signed relative error\n",
                kDefaultRelFloor);
    std::printf("  setup (inputs, quantization, FP64 references): %.2f s\n",
                setupSeconds);
  }
  return kExitOk;
}

} // namespace fp8::tools
