//===- Report.cpp - fp8-run's verification and benchmark report -----------===//

#include "tools/fp8-run/Report.h"

#include <cstdio>

namespace fp8 {

using json = nlohmann::ordered_json;

namespace {

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

} // namespace

void printCompiledTileNotes(const std::vector<CompiledPlanKernel> &kernels) {
  bool first = true;
  for (const CompiledPlanKernel &k : kernels) {
    if (!k.tile || !k.heuristicTile)
      continue;
    if (first)
      std::printf("note: these GEMM steps launch the tile compiled into the "
                  "plan (its heuristic's for another M or SM count); the "
                  "runtime's heuristic picks another for these dims:\n");
    first = false;
    std::printf("  %-12s %s, the runtime's %s\n", k.step.c_str(),
                k.tile->name().c_str(), k.heuristicTile->name().c_str());
  }
  if (!first)
    std::printf("  (a plan compiled with --fp8-compile=\"... m-hint=0\" "
                "chooses each GEMM's tile at launch, for the actual M)\n");
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

json reportStepChecks(const std::vector<StepCheck> &steps) {
  json js = json::array();
  for (const StepCheck &c : steps) {
    if (c.exact)
      std::printf("  step %-14s %-11s %lld/%lld elements identical%s%s\n",
                  c.step.c_str(), c.kind.c_str(),
                  (long long)(c.elements - c.mismatches), (long long)c.elements,
                  c.passed ? "" : "  FAILED: ", c.detail.c_str());
    else
      std::printf("  step %-14s %-11s %s = %.3g (bound %.2g)%s%s%s\n",
                  c.step.c_str(), c.kind.c_str(), c.metric.c_str(), c.relError,
                  c.bound, c.passed ? "" : "  FAILED",
                  c.detail.empty() ? "" : ": ", c.detail.c_str());
    js.push_back({{"step", c.step},
                  {"kind", c.kind},
                  {"exact", c.exact},
                  {"elements", c.elements},
                  {"mismatches", c.mismatches},
                  {"rel_error", c.relError},
                  {"metric", c.metric},
                  {"bound", c.bound},
                  {"passed", c.passed},
                  {"detail", c.detail}});
  }
  return js;
}

json reportBench(const BenchReport &b, const DramRoofline &target) {
  std::printf("bench: median of %d runs (CUDA events, steps back to back, "
              "the runs queued ahead of the GPU, in turns of 5 with the "
              "graph's and cuBLASLt's; other steps: their buffers' "
              "bytes over their time, against "
              "the %s's %.2f TB/s):\n",
              b.iters, target.gpu, target.dramBytesPerSecond / 1e12);
  std::printf("  %-14s %-11s %10s %9s   %-26s %10s %8s %10s\n", "step", "kind",
              "ours ms", "TFLOP/s", "cuBLASLt", "ms", "ratio", "bf16 ms");
  json jb = json::array();
  for (const BenchStep &s : b.steps) {
    json e{
        {"step", s.step}, {"kind", s.kind}, {"ms", s.ms}, {"kernel", s.kernel}};
    if (s.kind == "gemm") {
      char peer[64] = "";
      if (s.peerMs > 0)
        std::snprintf(peer, sizeof(peer), "%10.4f %7.2fx", s.peerMs,
                      s.peerMs / s.ms);
      else
        std::snprintf(peer, sizeof(peer), "%10s %8s", "n/a", "");
      const char *tma = s.scaleATma && s.scaleBTma ? "  (A and B scales by TMA)"
                        : s.scaleATma              ? "  (A scales by TMA)"
                        : s.scaleBTma              ? "  (B scales by TMA)"
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
      const double pct = 100.0 * s.gbPerS * 1e9 / target.dramBytesPerSecond;
      std::printf("  %-14s %-11s %10.4f %9s   %.0f GB/s, %.1f%% of DRAM "
                  "bandwidth (%.1f MB)\n",
                  s.step.c_str(), s.kind.c_str(), s.ms, "", s.gbPerS, pct,
                  double(s.bytes) / 1e6);
      e["bytes"] = s.bytes;
      e["gb_per_s"] = s.gbPerS;
      e["dram_percent"] = pct;
      e["dram_bytes_per_second"] = target.dramBytesPerSecond;
    }
    jb.push_back(e);
  }
  std::printf("  %-14s %-11s %10.4f   (GEMMs %.4f ms; the same GEMMs "
              "through cuBLASLt %.4f ms, BF16 %.4f ms)\n",
              "total", "", b.totalMs, b.gemmMs, b.peerGemmMs, b.bf16GemmMs);
  if (b.graphMs >= 0)
    std::printf("  %-14s %-11s %10.4f   (one launch of the captured run "
                "phase, timed in turns with the steps; their times sum to "
                "%.4f ms)\n",
                "as a graph", "", b.graphMs, b.stepSumMs);
  else
    std::printf("  as a graph: not measured (%s)\n", b.graphNote.c_str());
  return {{"iters", b.iters},
          {"step_sum_ms", b.stepSumMs},
          {"graph_ms", b.graphMs >= 0 ? json(b.graphMs) : json(nullptr)},
          {"graph_note", b.graphNote},
          {"steps", jb},
          {"total_ms", b.totalMs},
          {"gemm_ms", b.gemmMs},
          {"cublaslt_gemm_ms", b.peerGemmMs},
          {"cublaslt_bf16_gemm_ms", b.bf16GemmMs},
          {"have_cublaslt", b.havePeers}};
}

} // namespace fp8
