//===- Peers.cpp - fp8-run --bench: the cuBLASLt peers of a plan ---------===//

#include "tools/fp8-run/Peers.h"

#include "runtime/KernelTiming.h"

#if defined(FP8_HAVE_CUBLASLT)
#include "tools/peers/CublasLtPeer.h"
#endif

#include <algorithm>

namespace fp8 {

struct PlanPeers::Impl {
#if defined(FP8_HAVE_CUBLASLT)
  struct Peer {
    size_t step = 0; ///< index into the report's steps
    int64_t batch = 1;
    bool bf16 = false;
    CublasLtGemm gemm;
    std::vector<double> ms;
  };
  GpuPlan *gpu = nullptr;
  cublasLtHandle_t lt = nullptr;
  // Shared by the peers, which run one at a time: the workspace, FP8 scales
  // of 1, the output, BF16 operands.
  DeviceBuffer ws, scaleA, scaleB, d, a16, b16;
  std::vector<std::unique_ptr<Peer>> peers;

  ~Impl() {
    peers.clear(); // before their handle
    if (lt)
      cublasLtDestroy(lt);
  }
#endif
};

namespace {
#if defined(FP8_HAVE_CUBLASLT)
bool isF32Block(const Granularity &g, int64_t rows, int64_t cols) {
  return g.scale == ScaleFormat::F32 && g.rows == rows && g.cols == cols;
}

/// The FP8 peer's kind of one GEMM step, its description and note in `out`.
PeerKind peerKindOf(const PlanStep &s, BenchStep &out) {
  const KernelSpec &k = s.gemm;
  PeerKind kind = PeerKind::Fp8PerTensor;
  if (isF32Block(k.a.granularity, 1, 128) &&
      isF32Block(k.b.granularity, 128, 128)) {
    kind = PeerKind::Fp8BlockScaled;
    out.peerKind = "fp8 1x128/128x128";
    out.peerSameRecipe = true;
  } else if (k.a.granularity.isPerTensor() && k.b.granularity.isPerTensor()) {
    out.peerKind = "fp8 per-tensor";
    out.peerSameRecipe = true;
  } else {
    out.peerKind = "fp8 per-tensor (nearest)";
  }
  if (out.gemmKind == GemmKind::GroupedContiguous) {
    // The same FLOPs as one dense GEMM over every group's rows (B: the
    // first expert's matrix): a bound on a loop of per-group calls.
    out.peerKind += ", dense";
    out.peerNote = "a grouped GEMM: cuBLASLt timed as one dense GEMM of all "
                   "its rows (faster than one call per group)";
  } else if (out.gemmKind == GemmKind::GroupedK) {
    // Along K: A [M, K] and B [N, K] hold every group's K; one dense GEMM
    // over all of it has the same FLOPs (one sum instead of G).
    out.peerKind += ", dense";
    out.peerNote = "a K-grouped GEMM: cuBLASLt timed as one dense GEMM over "
                   "every group's K (faster than one call per group)";
  } else if (out.gemmKind == GemmKind::GroupedMasked) {
    // Masked: one call per group on its whole slab (the valid rows are on
    // the device).
    out.peerKind += ", per group";
    out.peerNote = "a masked grouped GEMM: cuBLASLt timed as one call per "
                   "group on its whole slab of rows";
  }
  return kind;
}
#endif
} // namespace

PlanPeers::PlanPeers() : impl_(std::make_unique<Impl>()) {}
PlanPeers::~PlanPeers() = default;

Status PlanPeers::prepare(GpuPlan &gpu, const Plan &plan, BenchReport &r) {
#if defined(FP8_HAVE_CUBLASLT)
  Impl &im = *impl_;
  im.gpu = &gpu;
  if (cublasLtCreate(&im.lt) != CUBLAS_STATUS_SUCCESS) {
    im.lt = nullptr;
    return Status::ok(); // the peers stay unmeasured
  }
  r.havePeers = true;
  const std::vector<size_t> runSteps = plan.stepsOf(Phase::Run);
  if (runSteps.size() != r.steps.size())
    return errorf("expected the report of describePlanSteps (", runSteps.size(),
                  " run steps), found ", r.steps.size());
  // The shared buffers, sized for the largest GEMM.
  int64_t scales = 1, out = 2, a16 = 2, b16 = 2;
  for (size_t j = 0; j < runSteps.size(); ++j) {
    const BenchStep &b = r.steps[j];
    if (plan.steps[runSteps[j]].kind != StepKind::Gemm)
      continue;
    const int64_t kb = (b.k + 127) / 128, nb = (b.n + 127) / 128;
    scales = std::max({scales, kb * b.m, kb * nb});
    out = std::max(out, b.m * b.n * 2);
    a16 = std::max(a16, b.m * b.k * 2);
    b16 = std::max(b16, b.n * b.k * 2);
  }
  const std::vector<float> ones(size_t(scales), 1.0f);
  auto ws = DeviceBuffer::alloc(size_t(32) << 20);
  auto sa = DeviceBuffer::fromHost(ones);
  auto sb = DeviceBuffer::fromHost(ones);
  auto d = DeviceBuffer::alloc(size_t(out));
  auto a = DeviceBuffer::alloc(size_t(a16));
  auto bb = DeviceBuffer::alloc(size_t(b16));
  if (!ws || !sa || !sb || !d || !a || !bb)
    return errorf("cannot allocate the cuBLASLt peers' buffers");
  im.ws = std::move(*ws);
  im.scaleA = std::move(*sa);
  im.scaleB = std::move(*sb);
  im.d = std::move(*d);
  im.a16 = std::move(*a);
  im.b16 = std::move(*bb);
  FP8_RETURN_IF_ERROR(im.a16.fill(0x3c)); // bf16 0x3c3c, about 0.0115
  FP8_RETURN_IF_ERROR(im.b16.fill(0x3c));

  for (size_t j = 0; j < runSteps.size(); ++j) {
    const PlanStep &s = plan.steps[runSteps[j]];
    if (s.kind != StepKind::Gemm)
      continue;
    BenchStep &b = r.steps[j];
    const PeerKind kind = peerKindOf(s, b);
    for (bool bf16 : {false, true}) {
      auto p = std::make_unique<Impl::Peer>();
      p->step = j;
      p->batch = b.batch;
      p->bf16 = bf16;
      Status st =
          bf16 ? p->gemm.init(im.lt, PeerKind::Bf16, b.m, b.n, b.k,
                              im.a16.get(), im.b16.get(), nullptr, nullptr,
                              im.d.get(), im.ws.get(), im.ws.size())
               : p->gemm.init(
                     im.lt, kind, b.m, b.n, b.k,
                     reinterpret_cast<const void *>(gpu.address(s.inputs[0])),
                     reinterpret_cast<const void *>(gpu.address(s.inputs[2])),
                     im.scaleA.get(), im.scaleB.get(), im.d.get(), im.ws.get(),
                     im.ws.size(), s.gemm.a.format, s.gemm.b.format);
      if (st.isOk())
        im.peers.push_back(std::move(p));
      else if (b.peerNote.empty() || !bf16)
        b.peerNote = st.message();
    }
  }
#else
  (void)gpu;
  (void)plan;
  (void)r;
#endif
  return Status::ok();
}

Status PlanPeers::round(int warmup, int iters) {
#if defined(FP8_HAVE_CUBLASLT)
  Impl &im = *impl_;
  for (const std::unique_ptr<Impl::Peer> &p : im.peers) {
    // Queued as the plan's steps are: synchronized after every launch, the
    // GPU idled between them and ran cooler, at a higher clock under its
    // power limit, than while timing the plan.
    auto t = timeQueued(
        *im.gpu->device().driver, im.gpu->stream(), warmup, iters,
        [&]() -> Status {
          for (int64_t i = 0; i < p->batch; ++i)
            FP8_RETURN_IF_ERROR(p->gemm.run(im.gpu->stream()));
          return Status::ok();
        },
        [&] { return im.gpu->sync(60, "the cuBLASLt GEMMs"); });
    if (!t)
      return t.status();
    p->ms.insert(p->ms.end(), t->begin(), t->end());
  }
#else
  (void)warmup;
  (void)iters;
#endif
  return Status::ok();
}

void PlanPeers::finish(BenchReport &r) const {
#if defined(FP8_HAVE_CUBLASLT)
  for (const std::unique_ptr<Impl::Peer> &p : impl_->peers) {
    BenchStep &b = r.steps[p->step];
    (p->bf16 ? b.bf16Ms : b.peerMs) = medianOf(p->ms);
  }
#endif
  r.peerGemmMs = r.bf16GemmMs = 0;
  for (const BenchStep &b : r.steps) {
    r.peerGemmMs += b.peerMs > 0 ? b.peerMs : 0;
    r.bf16GemmMs += b.bf16Ms > 0 ? b.bf16Ms : 0;
  }
}

} // namespace fp8
