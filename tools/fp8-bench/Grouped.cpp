//===- Grouped.cpp - fp8-bench's grouped (MoE) section --------------------===//

#include "tools/fp8-bench/Grouped.h"

#include "numerics/Formats.h"
#include "numerics/Random.h"
#include "runtime/GroupedGemm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

namespace fp8::bench {

using json = nlohmann::json;

namespace {

/// One shape's device data: A, B, scales (A's [K/128][rows], B's
/// [G][N/128][K/128]), the groups, our D and the peer's.
struct GroupedData {
  std::vector<int32_t> rows;     ///< each group's valid rows
  std::vector<int32_t> rowStart; ///< each group's first row of A / D
  int64_t aRows = 0, slab = 0;   ///< rows of A as stored; masked slab
  /// Scales between A's K blocks: the rows, rounded up to 4 so that the
  /// row of scales is a 16-byte multiple (what TMA reads).
  int64_t saPitch = 0;
  std::vector<float> sa; ///< host copy of A's scales
  DeviceBuffer dA, dB, dSa, dSb, dGroups, dD;
  GroupedGemmTensors t;
  GroupedGemmShape shape;
};

GroupedData makeData(Context &ctx, const GroupedShape &s, size_t index) {
  GroupedData g;
  const GroupedDraw draw = drawGrouped(s, index);
  g.rows = draw.rows;
  const bool masked = s.kind == GemmKind::GroupedMasked;
  g.slab = masked ? draw.m : 0;
  std::vector<int32_t> groups;
  int64_t row = 0;
  if (!masked)
    groups.push_back(0);
  for (int64_t i = 0; i < s.groups; ++i) {
    g.rowStart.push_back(int32_t(masked ? i * g.slab : row));
    row += g.rows[size_t(i)];
    groups.push_back(masked ? g.rows[size_t(i)] : int32_t(row));
  }
  g.aRows = masked ? s.groups * g.slab : row;
  const int64_t kb = (s.k + 127) / 128, nb = (s.n + 127) / 128;
  // 16 spare rows: a padded peer GEMM of the last group reads past it.
  std::vector<uint8_t> a =
      numerics::randomCodes((g.aRows + 16) * s.k, DType::E4M3FN, ctx.rng());
  std::vector<uint8_t> b =
      numerics::randomCodes(s.groups * s.n * s.k, DType::E4M3FN, ctx.rng());
  g.saPitch = masked ? g.slab : (g.aRows + 3) / 4 * 4;
  g.sa.resize(size_t(kb * g.saPitch * (masked ? s.groups : 1)));
  for (auto &v : g.sa)
    v = 0.01f * ctx.uni(ctx.rng);
  std::vector<float> sb(size_t(s.groups * nb * kb));
  for (auto &v : sb)
    v = 0.01f * ctx.uni(ctx.rng);
  g.dA = check(DeviceBuffer::fromHost(a), "A");
  g.dB = check(DeviceBuffer::fromHost(b), "B");
  g.dSa = check(DeviceBuffer::fromHost(g.sa), "A scales");
  g.dSb = check(DeviceBuffer::fromHost(sb), "B scales");
  g.dGroups = check(DeviceBuffer::fromHost(groups), "groups");
  g.dD = check(DeviceBuffer::alloc(size_t(g.aRows * s.n * 2)), "D");
  g.t.a = g.dA.get();
  g.t.b = g.dB.get();
  g.t.scaleA = g.dSa.get();
  g.t.scaleB = g.dSb.get();
  g.t.d = g.dD.get();
  g.t.groups = static_cast<const int32_t *>(g.dGroups.get());
  // A's scales [K/128][rows]: masked, one [K/128][slab] block per group.
  g.t.scaleALdOuter = 1;
  g.t.scaleALdK = g.saPitch;
  // The launch as the draw states it, which fp8-tune keys its entry at.
  g.shape = launchShape(s, draw);
  return g;
}

/// A's scales of rows [row0, row0 + rows) as a packed [K/128][padded]
/// tensor (cuBLASLt's activation layout), padding rows scaled by 1.
std::vector<float> peerScalesA(const GroupedData &g, const GroupedShape &s,
                               int64_t group, int64_t padded) {
  const int64_t kb = (s.k + 127) / 128;
  const bool masked = s.kind == GemmKind::GroupedMasked;
  const int64_t ld = g.saPitch;
  const int64_t base = masked ? group * kb * g.slab : g.rowStart[size_t(group)];
  std::vector<float> out(size_t(kb * padded), 1.0f);
  for (int64_t k = 0; k < kb; ++k)
    for (int64_t r = 0; r < g.rows[size_t(group)]; ++r)
      out[size_t(k * padded + r)] = g.sa[size_t(base + k * ld + r)];
  return out;
}

/// The peer: one cuBLASLt block-scaled GEMM per group.
struct PeerLoop {
  std::vector<std::unique_ptr<CublasLtGemm>> gemms;
  std::vector<DeviceBuffer> scales;
  std::vector<int64_t> outRow; ///< each group's first row in `dP`
  DeviceBuffer dP;
  int padded = 0; ///< groups padded to a multiple of 16 rows
  std::string note;
};

PeerLoop makePeer(Context &ctx, GroupedData &g, const GroupedShape &s) {
  PeerLoop p;
  int64_t rows = 0;
  for (int64_t i = 0; i < s.groups; ++i) {
    p.outRow.push_back(rows);
    rows += (g.rows[size_t(i)] + 15) / 16 * 16;
  }
  p.dP =
      check(DeviceBuffer::alloc(size_t(std::max<int64_t>(rows, 1) * s.n * 2)),
            "peer D");
  const int64_t kb = (s.k + 127) / 128, nb = (s.n + 127) / 128;
  for (int64_t i = 0; i < s.groups; ++i) {
    const int64_t m = g.rows[size_t(i)];
    const auto *a = static_cast<const uint8_t *>(g.dA.get()) +
                    int64_t(g.rowStart[size_t(i)]) * s.k;
    const auto *sb = static_cast<const float *>(g.dSb.get()) + i * nb * kb;
    auto *d = static_cast<uint16_t *>(p.dP.get()) + p.outRow[size_t(i)] * s.n;
    const auto *b = static_cast<const uint8_t *>(g.dB.get()) + i * s.n * s.k;
    auto gemm = std::make_unique<CublasLtGemm>();
    Status st = Status::error("unset");
    for (int64_t rowsPeer : {m, (m + 15) / 16 * 16}) {
      p.scales.push_back(check(
          DeviceBuffer::fromHost(peerScalesA(g, s, i, rowsPeer)), "scales"));
      gemm = std::make_unique<CublasLtGemm>();
      st =
          gemm->init(ctx.lt, PeerKind::Fp8BlockScaled, rowsPeer, s.n, s.k, a, b,
                     p.scales.back().get(), sb, d, ctx.ws.get(), ctx.wsBytes);
      if (st.isOk()) {
        p.padded += rowsPeer != m;
        break;
      }
    }
    if (!st.isOk()) {
      p.note =
          "cuBLASLt refused group " + std::to_string(i) + ": " + st.message();
      p.gemms.clear();
      return p;
    }
    p.gemms.push_back(std::move(gemm));
  }
  return p;
}

/// 1 - similarity of our D and the peer's over every group's valid rows
/// (every 5th row), as fp8-bench's dense rows report it.
double difference(const GroupedData &g, const PeerLoop &p,
                  const GroupedShape &s) {
  std::vector<uint16_t> ours(size_t(g.aRows * s.n));
  std::vector<uint16_t> peer(p.dP.size() / 2);
  checkOk(g.dD.download(ours), "download D");
  checkOk(p.dP.download(peer), "download peer D");
  std::vector<uint16_t> x, y;
  for (int64_t i = 0; i < s.groups; ++i)
    for (int64_t r = 0; r < g.rows[size_t(i)]; r += 5) {
      const auto *o = ours.data() + (g.rowStart[size_t(i)] + r) * s.n;
      const auto *q = peer.data() + (p.outRow[size_t(i)] + r) * s.n;
      x.insert(x.end(), o, o + s.n);
      y.insert(y.end(), q, q + s.n);
    }
  return bf16Difference(x.data(), y.data(), x.size());
}

json measure(Context &ctx, const ShapeFile &file, const GroupedShape &s,
             size_t index) {
  if (s.kind == GemmKind::GroupedK)
    return measureAlongK(ctx, file, s, index);
  GroupedData g = makeData(ctx, s, index);
  int64_t valid = 0;
  for (int32_t r : g.rows)
    valid += r;
  const double flops = 2.0 * double(valid) * double(s.n) * double(s.k);
  double ms = 0;
  json row = {
      {"list", s.list},     {"groups", s.groups}, {"M_per_group", s.mPerGroup},
      {"N", s.n},           {"K", s.k},           {"rows", g.rows},
      {"valid_rows", valid}};
  row.update(timeOurs(ctx, file, g.shape, g.t, flops, ms));
  const double weightBytes = double(s.groups) * double(s.n) * double(s.k);
  if (s.decode) {
    const double tbps = weightBytes / ms * 1e-9;
    row["weight_tb_per_s"] = tbps;
    row["pct_dram"] = 100.0 * tbps / file.tbps;
  }
  if (ctx.opt.peers) {
    PeerLoop p = makePeer(ctx, g, s);
    if (p.gemms.empty()) {
      row["peer_note"] = p.note;
    } else {
      Status peerRun = Status::ok();
      const double pms = ctx.time(ctx.opt.iters, [&] {
        for (auto &gemm : p.gemms)
          if (Status st = gemm->run(ctx.stream); !st)
            peerRun = st;
      });
      checkOk(peerRun, "cuBLASLt loop");
      checkOk(cuCheck(ctx.d->cuStreamSynchronize(ctx.stream), "sync"),
              "peer loop");
      row["peer_ms"] = pms;
      row["peer_tflops"] = flops / pms * 1e-9;
      row["ratio"] = pms / ms;
      row["peer_groups_padded"] = p.padded;
      row["difference"] = difference(g, p, s);
    }
  }
  return row;
}

double geomean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += std::log(x);
  return v.empty() ? 0.0 : std::exp(s / double(v.size()));
}

} // namespace

json timeOurs(Context &ctx, const ShapeFile &file,
              const GroupedGemmShape &shape, const GroupedGemmTensors &t,
              double flops, double &ms) {
  GemmReport rep;
  GemmOptions opts;
  opts.tile = ctx.opt.tile;
  checkOk(groupedGemm(ctx.recipe, shape, t, ctx.stream, opts, &rep),
          "grouped GEMM");
  checkOk(waitStream(ctx.stream, 60.0, "grouped GEMM"), "grouped GEMM");
  opts.checkExtents = false; // checked by the first call
  Status timed = Status::ok();
  ms = ctx.time(ctx.opt.iters, [&] {
    if (Status st = groupedGemm(ctx.recipe, shape, t, ctx.stream, opts); !st)
      timed = st;
  });
  checkOk(timed, "grouped GEMM");
  return {{"kernel", rep.kernel},
          {"tile", json::parse(toJSON(rep.tile))},
          {"tile_source", rep.tileSource},
          {"grid", rep.grid},
          {"ms", ms},
          {"tflops", flops / ms * 1e-9},
          {"pct_peak", 100.0 * flops / ms * 1e-9 / file.peakTflops}};
}

double bf16Difference(const uint16_t *a, const uint16_t *b, size_t count) {
  double xy = 0, xx = 0;
  for (size_t i = 0; i < count; ++i) {
    const double x = numerics::bf16ToFloat(a[i]);
    const double y = numerics::bf16ToFloat(b[i]);
    if (!std::isfinite(x) || !std::isfinite(y))
      return 1.0;
    xy += x * y;
    xx += x * x + y * y;
  }
  return xx > 0 ? 1.0 - 2.0 * xy / xx : 0.0;
}

json runGrouped(Context &ctx, const ShapeFile &file) {
  const std::vector<GroupedShape> &shapes = file.grouped;
  json rows = json::array();
  std::printf("%-22s %5s %6s %6s %6s | %9s %6s %-18s | %9s %7s %8s\n", "list",
              "G", "M/grp", "N", "K", "TFLOP/s", "%peak", "tile from",
              "peer TF/s", "ratio", "%DRAM");
  std::map<std::string, std::vector<double>> tf, ratio, dram;
  for (size_t index = 0; index < shapes.size(); ++index) {
    const GroupedShape &s = shapes[index];
    json row = measure(ctx, file, s, index);
    // grouped_k: M, and the range each group's K is drawn from.
    const std::string k = s.kind == GemmKind::GroupedK
                              ? std::to_string(s.kMin / 1024) + "-" +
                                    std::to_string(s.kMax / 1024) + "k"
                              : std::to_string(s.k);
    std::printf("%-22s %5lld %6lld %6lld %6s | %9.1f %6.1f %-18s | ",
                s.list.c_str(), (long long)s.groups, (long long)s.mPerGroup,
                (long long)s.n, k.c_str(), row["tflops"].get<double>(),
                row["pct_peak"].get<double>(),
                row["tile_source"].get<std::string>().c_str());
    if (row.contains("ratio"))
      std::printf("%9.1f %6.3fx", row["peer_tflops"].get<double>(),
                  row["ratio"].get<double>());
    else
      std::printf("%9s %7s", "-", "-");
    if (row.contains("pct_dram"))
      std::printf(" %7.1f%%", row["pct_dram"].get<double>());
    std::printf("\n");
    tf[s.list].push_back(row["tflops"].get<double>());
    if (row.contains("ratio"))
      ratio[s.list].push_back(row["ratio"].get<double>());
    if (row.contains("pct_dram"))
      dram[s.list].push_back(row["pct_dram"].get<double>());
    rows.push_back(row);
  }
  json summary = json::object();
  for (const auto &[list, v] : tf) {
    json l = {{"geomean_tflops", geomean(v)}};
    if (!ratio[list].empty())
      l["geomean_ratio"] = geomean(ratio[list]);
    if (!dram[list].empty())
      l["min_pct_dram"] =
          *std::min_element(dram[list].begin(), dram[list].end());
    summary[list] = l;
    std::printf("%s: geomean %.1f TFLOP/s", list.c_str(), geomean(v));
    if (!ratio[list].empty())
      std::printf(", %.3fx the per-group cuBLASLt loop", geomean(ratio[list]));
    if (!dram[list].empty())
      std::printf(", at least %.1f%% of DRAM bandwidth on the weights",
                  l["min_pct_dram"].get<double>());
    std::printf("\n");
  }
  return {{"rows", rows}, {"summary", summary}};
}

} // namespace fp8::bench
