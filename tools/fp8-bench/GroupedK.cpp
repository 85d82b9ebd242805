//===- GroupedK.cpp - fp8-bench's weight-gradient grouped GEMMs -----------===//
//
// One grouped_k row: dW_g[M, N] = A[:, K_g] * B[:, K_g]^T for G groups whose
// K (tokens) are drawn in [K_min, K_max], multiples of 128, with a fixed
// seed. A [M, K] and B [N, K] hold every group's slab (K-major); A's 1x128
// scales [K/128][M], B's 128x128 scales [N/128][K/128] (the block-scaled
// peer's recipe). The peer loop runs one cuBLASLt GEMM per group on the same
// codes and scales, each group's slabs copied into packed tensors (the
// layout of the dense peer, which cuBLASLt's block scaling reads).
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-bench/Grouped.h"

#include "numerics/Random.h"
#include "runtime/GroupedGemm.h"

#include <algorithm>
#include <memory>

namespace fp8::bench {

using json = nlohmann::json;

json measureAlongK(Context &ctx, const ShapeFile &file, const GroupedShape &s,
                   size_t index) {
  const GroupedDraw draw = drawGrouped(s, index);
  const std::vector<int32_t> &ks = draw.ks;
  std::vector<int32_t> offsets{0};
  for (int32_t kg : ks)
    offsets.push_back(offsets.back() + kg);
  const int64_t m = draw.m, n = s.n, k = draw.k;
  const int64_t kb = k / 128, nb = (n + 127) / 128;
  std::vector<float> sa(size_t(kb * m)), sb(size_t(nb * kb));
  for (auto &v : sa)
    v = 0.01f * ctx.uni(ctx.rng);
  for (auto &v : sb)
    v = 0.01f * ctx.uni(ctx.rng);
  const std::vector<uint8_t> a =
      numerics::randomCodes(m * k, DType::E4M3FN, ctx.rng());
  const std::vector<uint8_t> b =
      numerics::randomCodes(n * k, DType::E4M3FN, ctx.rng());
  DeviceBuffer dA = check(DeviceBuffer::fromHost(a), "A");
  DeviceBuffer dB = check(DeviceBuffer::fromHost(b), "B");
  DeviceBuffer dSa = check(DeviceBuffer::fromHost(sa), "A scales");
  DeviceBuffer dSb = check(DeviceBuffer::fromHost(sb), "B scales");
  DeviceBuffer dG = check(DeviceBuffer::fromHost(offsets), "offsets");
  const size_t dBytes = size_t(s.groups * m * n * 2);
  DeviceBuffer dD = check(DeviceBuffer::alloc(dBytes), "D");
  GroupedGemmTensors t;
  t.a = dA.get();
  t.b = dB.get();
  t.scaleA = dSa.get();
  t.scaleALdOuter = 1; // [K/128][M]
  t.scaleALdK = m;
  t.scaleB = dSb.get();
  t.d = dD.get();
  t.groups = static_cast<const int32_t *>(dG.get());
  GroupedGemmShape shape{GemmKind::GroupedK, s.groups, m, n, k, 0};
  const double flops = 2.0 * double(m) * double(n) * double(k);
  double ms = 0;
  json row = {
      {"list", s.list}, {"groups", s.groups}, {"M", m}, {"N", n}, {"K", ks}};
  row.update(timeOurs(ctx, file, shape, t, flops, ms));
  if (!ctx.opt.peers)
    return row;

  // The peer's operands: each group's slabs of A and B and their scales as
  // packed tensors of their own, the layout the dense peer reads.
  DeviceBuffer dP = check(DeviceBuffer::alloc(dBytes), "peer D");
  std::vector<DeviceBuffer> buffers;
  std::vector<std::unique_ptr<CublasLtGemm>> gemms;
  for (int64_t g = 0; g < s.groups; ++g) {
    const int64_t k0 = offsets[size_t(g)], kg = ks[size_t(g)];
    std::vector<uint8_t> ag(size_t(m * kg)), bg(size_t(n * kg));
    for (int64_t r = 0; r < m; ++r)
      std::copy(a.begin() + r * k + k0, a.begin() + r * k + k0 + kg,
                ag.begin() + r * kg);
    for (int64_t r = 0; r < n; ++r)
      std::copy(b.begin() + r * k + k0, b.begin() + r * k + k0 + kg,
                bg.begin() + r * kg);
    std::vector<float> sag(sa.begin() + (k0 / 128) * m,
                           sa.begin() + ((k0 + kg) / 128) * m);
    std::vector<float> sbg(size_t(nb * (kg / 128)));
    for (int64_t r = 0; r < nb; ++r)
      for (int64_t j = 0; j < kg / 128; ++j)
        sbg[size_t(r * (kg / 128) + j)] = sb[size_t(r * kb + k0 / 128 + j)];
    buffers.push_back(check(DeviceBuffer::fromHost(ag), "peer A"));
    buffers.push_back(check(DeviceBuffer::fromHost(bg), "peer B"));
    buffers.push_back(check(DeviceBuffer::fromHost(sag), "peer A scales"));
    buffers.push_back(check(DeviceBuffer::fromHost(sbg), "peer B scales"));
    const size_t at = buffers.size() - 4;
    auto gemm = std::make_unique<CublasLtGemm>();
    Status st = gemm->init(ctx.lt, PeerKind::Fp8BlockScaled, m, n, kg,
                           buffers[at].get(), buffers[at + 1].get(),
                           buffers[at + 2].get(), buffers[at + 3].get(),
                           static_cast<uint16_t *>(dP.get()) + g * m * n,
                           ctx.ws.get(), ctx.wsBytes);
    if (!st) {
      row["peer_note"] =
          "cuBLASLt refused group " + std::to_string(g) + ": " + st.message();
      return row;
    }
    gemms.push_back(std::move(gemm));
  }
  Status peerRun = Status::ok();
  const double pms = ctx.time(ctx.opt.iters, [&] {
    for (auto &gemm : gemms)
      if (Status st = gemm->run(ctx.stream); !st)
        peerRun = st;
  });
  checkOk(peerRun, "cuBLASLt loop");
  checkOk(cuCheck(ctx.d->cuStreamSynchronize(ctx.stream), "sync"),
          "cuBLASLt loop");
  std::vector<uint16_t> ours(dBytes / 2), peer(dBytes / 2);
  checkOk(dD.download(ours), "download D");
  checkOk(dP.download(peer), "download peer D");
  row["peer_ms"] = pms;
  row["peer_tflops"] = flops / pms * 1e-9;
  row["ratio"] = pms / ms;
  row["difference"] = bf16Difference(ours.data(), peer.data(), ours.size());
  return row;
}

} // namespace fp8::bench
