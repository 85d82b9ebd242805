//===- Report.cpp - fp8-bench's table, summary and JSON -------------------===//

#include "tools/fp8-bench/Report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

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

/// A table cell of `width` characters: `v` printed with `decimals`, or "-"
/// where it is 0 (a peer that did not run: the block-scaled one under
/// --recipe per-tensor, or one that refused the shape).
std::string cell(double v, int width, int decimals) {
  char buf[32];
  if (v > 0)
    std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, v);
  else
    std::snprintf(buf, sizeof buf, "%*s", width, "-");
  return buf;
}

/// A peer's figure for the JSON: null where the peer did not run (0).
json orNull(double v) { return v > 0 ? json(v) : json(nullptr); }

} // namespace

double tflops(const Shape &s, double ms) {
  return ms > 0 ? 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12 : 0;
}

json reportRow(const Row &row, const ShapeFile &file, const json &sweep) {
  const Shape &sh = row.s;
  const double roof = rooflineMs(sh, file.peakTflops, file.tbps);
  std::printf(
      "%5lld x %5lld x %5lld  ours %7.1f TF/s (%5.1f%% roof)  "
      "block %s  tensor %s  bf16 %s  x%s vs %s  "
      "sim %.1e  [%s]%s%s\n",
      (long long)sh.m, (long long)sh.n, (long long)sh.k, tflops(sh, row.ours),
      100.0 * roof / row.ours, cell(tflops(sh, row.block), 7, 1).c_str(),
      cell(tflops(sh, row.tensor), 7, 1).c_str(),
      cell(tflops(sh, row.bf16), 7, 1).c_str(),
      cell(row.block > 0 ? row.block / row.ours : row.tensor / row.ours, 0, 2)
          .c_str(),
      row.block > 0 || row.tensor <= 0 ? "block" : "tensor", row.sim,
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
    std::printf(
        "%-6lld %10.1f %s %s %s %s %s %s\n", (long long)m, geomean(o),
        cell(geomean(bl), 10, 1).c_str(), cell(geomean(te), 10, 1).c_str(),
        cell(geomean(bf), 10, 1).c_str(), cell(geomean(rb), 8, 3).c_str(),
        cell(geomean(rt), 8, 3).c_str(), cell(geomean(rf), 8, 3).c_str());
    summary[std::to_string(m)] = {
        {"ours_tflops_geomean", geomean(o)},
        {"cublaslt_block_tflops_geomean", orNull(geomean(bl))},
        {"cublaslt_tensor_tflops_geomean", orNull(geomean(te))},
        {"cublaslt_bf16_tflops_geomean", orNull(geomean(bf))},
        {"ratio_vs_block", orNull(geomean(rb))},
        {"ratio_vs_tensor", orNull(geomean(rt))},
        {"ratio_vs_bf16", orNull(geomean(rf))}};
  }
  if (ms.size() > 1) {
    // Every row at once (a shape set of mixed M: bench/heldout.json), and
    // the row furthest behind each FP8 peer.
    std::vector<double> o, rb, rt;
    for (auto &r : rows) {
      o.push_back(tflops(r.s, r.ours));
      if (r.block > 0)
        rb.push_back(r.block / r.ours);
      if (r.tensor > 0)
        rt.push_back(r.tensor / r.ours);
    }
    std::printf("%-6s %10.1f %10s %10s %10s %s %s\n", "all", geomean(o), "", "",
                "", cell(geomean(rb), 8, 3).c_str(),
                cell(geomean(rt), 8, 3).c_str());
    summary["all"] = {{"ours_tflops_geomean", geomean(o)},
                      {"ratio_vs_block", orNull(geomean(rb))},
                      {"ratio_vs_tensor", orNull(geomean(rt))}};
    auto lowest = [&](double Row::*peer, const char *name) {
      const Row *w = nullptr;
      for (auto &r : rows)
        if (r.*peer > 0 && (!w || r.*peer / r.ours < w->*peer / w->ours))
          w = &r;
      if (!w)
        return;
      const double x = w->*peer / w->ours;
      std::printf("lowest x %s: %.3f at %lldx%lldx%lld\n", name, x,
                  (long long)w->s.m, (long long)w->s.n, (long long)w->s.k);
      summary["all"][std::string("lowest_ratio_vs_") + name] = x;
    };
    lowest(&Row::block, "block");
    lowest(&Row::tensor, "tensor");
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
                     ", promotion " + std::to_string(opt.promotion) + ", bf16" +
                     (opt.amax ? ", D's amax" : "")},
      {"roofline",
       {{"fp8_tflops", file.peakTflops}, {"hbm_tb_per_s", file.tbps}}},
      {"rows", rows},
      {"summary", summary},
      {"jit", jit}};
}

} // namespace fp8::bench
