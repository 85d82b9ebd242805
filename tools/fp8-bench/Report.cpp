//===- Report.cpp - fp8-bench's table, summary and JSON -------------------===//

#include "tools/fp8-bench/Report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fp8::bench {

using json = nlohmann::json;

namespace {

/// Roofline time (ms): the larger of the compute at `peakTflops` and the
/// memory traffic at `tbps` (A, B and D moved once).
double rooflineMs(const Shape &s, double peakTflops, double tbps) {
  const double flops = 2.0 * s.m * s.n * s.k;
  const double bytes = double(s.m) * s.k + double(s.n) * s.k + 2.0 * s.m * s.n;
  return std::max(flops / (peakTflops * 1e12), bytes / (tbps * 1e12)) * 1e3;
}

double geomean(const std::vector<double> &v) {
  double s = 0;
  int n = 0;
  for (double x : v)
    if (x > 0) {
      s += std::log(x);
      ++n;
    }
  return n ? std::exp(s / n) : 0;
}

} // namespace

double tflops(const Shape &s, double ms) {
  return ms > 0 ? 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12 : 0;
}

json reportRow(const Row &row, const ShapeFile &file, const json &sweep) {
  const Shape &sh = row.s;
  const double roof = rooflineMs(sh, file.peakTflops, file.tbps);
  std::printf(
      "%5lld x %5lld x %5lld  ours %7.1f TF/s (%5.1f%% roof)  "
      "block %7.1f  tensor %7.1f  bf16 %7.1f  x%.2f vs block  "
      "sim %.1e  [%s]%s%s\n",
      (long long)sh.m, (long long)sh.n, (long long)sh.k, tflops(sh, row.ours),
      100.0 * roof / row.ours, tflops(sh, row.block), tflops(sh, row.tensor),
      tflops(sh, row.bf16), row.block > 0 ? row.block / row.ours : 0.0, row.sim,
      row.kernel.c_str(), row.note.empty() ? "" : " note: ", row.note.c_str());
  std::fflush(stdout);
  return {{"m", sh.m},
          {"n", sh.n},
          {"k", sh.k},
          {"ours_ms", row.ours},
          {"ours_tflops", tflops(sh, row.ours)},
          {"roofline_pct", 100.0 * roof / row.ours},
          {"cublaslt_block_ms", row.block},
          {"cublaslt_block_tflops", tflops(sh, row.block)},
          {"cublaslt_tensor_ms", row.tensor},
          {"cublaslt_tensor_tflops", tflops(sh, row.tensor)},
          {"cublaslt_bf16_ms", row.bf16},
          {"cublaslt_bf16_tflops", tflops(sh, row.bf16)},
          {"similarity_vs_block_peer", row.sim},
          {"peer_scale_layout", row.peerLayout},
          {"kernel", row.kernel},
          {"sweep", sweep},
          {"note", row.note}};
}

json reportSummary(const std::vector<Row> &rows) {
  json summary = json::object();
  std::printf("\n%-6s %10s %10s %10s %10s %8s %8s %8s\n", "M", "ours", "block",
              "tensor", "bf16", "x block", "x tensor", "x bf16");
  std::vector<int64_t> ms;
  for (auto &r : rows)
    if (std::find(ms.begin(), ms.end(), r.s.m) == ms.end())
      ms.push_back(r.s.m);
  for (int64_t m : ms) {
    std::vector<double> o, bl, te, bf, rb, rt, rf;
    for (auto &r : rows) {
      if (r.s.m != m)
        continue;
      o.push_back(tflops(r.s, r.ours));
      bl.push_back(tflops(r.s, r.block));
      te.push_back(tflops(r.s, r.tensor));
      bf.push_back(tflops(r.s, r.bf16));
      if (r.block > 0)
        rb.push_back(r.block / r.ours);
      if (r.tensor > 0)
        rt.push_back(r.tensor / r.ours);
      if (r.bf16 > 0)
        rf.push_back(r.bf16 / r.ours);
    }
    std::printf("%-6lld %10.1f %10.1f %10.1f %10.1f %8.3f %8.3f %8.3f\n",
                (long long)m, geomean(o), geomean(bl), geomean(te), geomean(bf),
                geomean(rb), geomean(rt), geomean(rf));
    summary[std::to_string(m)] = {
        {"ours_tflops_geomean", geomean(o)},
        {"cublaslt_block_tflops_geomean", geomean(bl)},
        {"cublaslt_tensor_tflops_geomean", geomean(te)},
        {"cublaslt_bf16_tflops_geomean", geomean(bf)},
        {"ratio_vs_block", geomean(rb)},
        {"ratio_vs_tensor", geomean(rt)},
        {"ratio_vs_bf16", geomean(rf)}};
  }
  if (ms.size() > 1) {
    // Every row at once (a shape set of mixed M: bench/heldout.json), and
    // the row furthest behind the block-scaled peer.
    std::vector<double> o, rb;
    const Row *worst = nullptr;
    for (auto &r : rows) {
      o.push_back(tflops(r.s, r.ours));
      if (r.block > 0) {
        rb.push_back(r.block / r.ours);
        if (!worst || r.block / r.ours < worst->block / worst->ours)
          worst = &r;
      }
    }
    std::printf("%-6s %10.1f %10s %10s %10s %8.3f\n", "all", geomean(o), "", "",
                "", geomean(rb));
    summary["all"] = {{"ours_tflops_geomean", geomean(o)},
                      {"ratio_vs_block", geomean(rb)}};
    if (worst) {
      std::printf("lowest x block: %.3f at %lldx%lldx%lld\n",
                  worst->block / worst->ours, (long long)worst->s.m,
                  (long long)worst->s.n, (long long)worst->s.k);
      summary["all"]["lowest_ratio_vs_block"] = worst->block / worst->ours;
    }
  }
  return summary;
}

json benchJson(const Options &opt, const std::string &device, int smCount,
               const ShapeFile &file, json rows, json summary, json jit) {
  return {
      {"device", device},
      {"sm_count", smCount},
      {"iters", opt.iters},
      {"l2_flush", opt.flush},
      {"recipe", std::string(opt.perTensor ? "e4m3 per-tensor x e4m3 per-tensor"
                                           : "e4m3 1x128 x e4m3 128x128") +
                     ", promotion " + std::to_string(opt.promotion) + ", bf16"},
      {"roofline",
       {{"fp8_tflops", file.peakTflops}, {"hbm_tb_per_s", file.tbps}}},
      {"rows", rows},
      {"summary", summary},
      {"jit", jit}};
}

} // namespace fp8::bench
