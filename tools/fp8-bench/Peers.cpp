//===- Peers.cpp - fp8-bench's cuBLASLt peers of one shape ----------------===//
//
// cuBLASLt FP8 block-scaled (the same recipe as ours), FP8 per-tensor and
// BF16 on the operands of our kernel. The block-scaled peer's scale layouts
// are found by comparing its result with ours: both compute the same
// function on the same data.
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-bench/Measure.h"

#include "numerics/Formats.h"

#include <cmath>
#include <string>

namespace fp8::bench {

namespace {

double similarity(const std::vector<uint16_t> &a,
                  const std::vector<uint16_t> &b) {
  double xy = 0, xx = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = numerics::bf16ToFloat(a[i]), y = numerics::bf16ToFloat(b[i]);
    if (!std::isfinite(x) || !std::isfinite(y))
      return 1.0;
    xy += x * y;
    xx += x * x + y * y;
  }
  return xx > 0 ? 1.0 - 2.0 * xy / xx : 0.0;
}

/// The median time of `g`'s runs, or 0 when a run fails (the first
/// failure goes to `row.note`, naming the peer).
double timePeer(Context &ctx, CublasLtGemm &g, const char *what, Row &row) {
  Status failed;
  const double ms = ctx.time(ctx.opt.iters, [&] {
    if (failed.isOk())
      failed = g.run(ctx.stream);
  });
  if (failed.isOk())
    return ms;
  if (row.note.empty())
    row.note = std::string(what) + ": " + failed.message();
  return 0;
}

/// `g`'s result into `peer` (the output poisoned first, so that a run that
/// writes nothing does not match).
Status runPeerOnce(Context &ctx, CublasLtGemm &g, Operands &ops,
                   std::vector<uint16_t> &peer) {
  FP8_RETURN_IF_ERROR(ops.dP.fill(0xFF));
  FP8_RETURN_IF_ERROR(g.run(ctx.stream));
  FP8_RETURN_IF_ERROR(
      cuCheck(ctx.d->cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"));
  return ops.dP.download(peer);
}

/// The block-scaled peer: each scale layout of the activations and of the
/// weights until one matches our result (then that one only).
void blockScaledPeer(Context &ctx, const Shape &sh, Operands &ops,
                     const std::vector<uint16_t> &ours,
                     std::vector<uint16_t> &peer, Row &row) {
  std::vector<int> combos = ctx.opt.perTensor ? std::vector<int>{}
                            : ctx.layoutKnown ? std::vector<int>{ctx.peerCombo}
                                              : std::vector<int>{0, 1, 2, 3};
  for (int combo : combos) {
    const bool actOuter = !(combo & 1), wOuter = !(combo & 2);
    CublasLtGemm g;
    Status s =
        g.init(ctx.lt, PeerKind::Fp8BlockScaled, sh.m, sh.n, sh.k, ops.dA.get(),
               ops.dB.get(), actOuter ? ops.dSaO.get() : ops.dSaK.get(),
               wOuter ? ops.dSbO.get() : ops.dSbK.get(), ops.dP.get(),
               ctx.ws.get(), ctx.wsBytes);
    if (!s) {
      row.note = s.message();
      break;
    }
    if (Status r = runPeerOnce(ctx, g, ops, peer); !r) {
      row.note = "cuBLASLt block-scaled: " + r.message();
      break;
    }
    double sim = similarity(ours, peer);
    row.sim = sim;
    if (sim < 1e-4) {
      ctx.peerCombo = combo;
      ctx.layoutKnown = true;
      row.peerLayout = std::string("activations ") +
                       (actOuter ? "[K/128][M]" : "[M][K/128]") + ", weights " +
                       (wOuter ? "[K/128][N/128]" : "[N/128][K/128]");
      row.block = timePeer(ctx, g, "cuBLASLt block-scaled", row);
      break;
    }
  }
  if (!ctx.opt.perTensor && !ctx.layoutKnown && row.note.empty())
    row.note = "cuBLASLt block-scaled result matches ours in no scale "
               "layout (best similarity " +
               std::to_string(row.sim) + ")";
}

/// The per-tensor peer (unit scales); with a per-tensor recipe its result
/// must match ours.
void perTensorPeer(Context &ctx, const Shape &sh, Operands &ops,
                   const std::vector<uint16_t> &ours,
                   std::vector<uint16_t> &peer, Row &row) {
  CublasLtGemm g;
  if (Status s = g.init(ctx.lt, PeerKind::Fp8PerTensor, sh.m, sh.n, sh.k,
                        ops.dA.get(), ops.dB.get(), ops.one.get(),
                        ops.one.get(), ops.dP.get(), ctx.ws.get(), ctx.wsBytes);
      !s)
    return;
  if (ctx.opt.perTensor) {
    if (Status r = runPeerOnce(ctx, g, ops, peer); !r)
      die(r, "cuBLASLt per-tensor");
    row.sim = similarity(ours, peer);
  }
  row.tensor = timePeer(ctx, g, "cuBLASLt per-tensor", row);
}

/// The BF16 peer on BF16 operands of the same shape.
void bf16Peer(Context &ctx, const Shape &sh, Operands &ops, Row &row) {
  DeviceBuffer a16 = check(DeviceBuffer::alloc(ops.a.size() * 2), "bf16 A");
  DeviceBuffer b16 = check(DeviceBuffer::alloc(ops.b.size() * 2), "bf16 B");
  // 0x3c3c: a bf16 near 0.0115, not zero
  checkOk(a16.fill(0x3c), "bf16 A");
  checkOk(b16.fill(0x3c), "bf16 B");
  CublasLtGemm g;
  if (Status s =
          g.init(ctx.lt, PeerKind::Bf16, sh.m, sh.n, sh.k, a16.get(), b16.get(),
                 nullptr, nullptr, ops.dP.get(), ctx.ws.get(), ctx.wsBytes);
      s)
    row.bf16 = timePeer(ctx, g, "cuBLASLt BF16", row);
}

} // namespace

void timePeers(Context &ctx, const Shape &sh, Operands &ops,
               const std::vector<uint16_t> &ours, Row &row) {
  std::vector<uint16_t> peer(ours.size());
  blockScaledPeer(ctx, sh, ops, ours, peer, row);
  perTensorPeer(ctx, sh, ops, ours, peer, row);
  bf16Peer(ctx, sh, ops, row);
}

} // namespace fp8::bench
