//===- Peers.cpp - fp8-run --bench: the cuBLASLt peers of a plan ---------===//

#include "tools/fp8-run/Peers.h"

#if defined(FP8_HAVE_CUBLASLT)
#include "tools/peers/CublasLtPeer.h"
#endif

#include <algorithm>

namespace fp8 {

namespace {
#if defined(FP8_HAVE_CUBLASLT)
/// Median time (ms) of `run` over `iters` launches after 3 warm-up ones,
/// queued as the plan's steps are (GpuPlan::timeRun): events i and i + 1
/// bracket launch i, the stream drained once at the end. (Synchronized
/// after every launch, the GPU idled between them and ran cooler, at a
/// higher clock under its power limit, than while timing the plan.)
template <typename F>
Expected<double> timeIt(const CudaDriver &d, GpuPlan &gpu, int iters, F run) {
  for (int i = 0; i < 3; ++i)
    FP8_RETURN_IF_ERROR(run());
  FP8_RETURN_IF_ERROR(gpu.sync(60, "the cuBLASLt warm-up"));
  std::vector<CUevent> events(size_t(std::max(iters, 0)) + 1, nullptr);
  Status s;
  for (CUevent &e : events) {
    s = cuCheck(d.cuEventCreate(&e, 0), "cuEventCreate");
    if (!s.isOk())
      break;
  }
  if (s.isOk())
    s = cuCheck(d.cuEventRecord(events[0], gpu.stream()), "cuEventRecord");
  for (int i = 0; i < iters && s.isOk(); ++i) {
    s = run();
    if (s.isOk())
      s = cuCheck(d.cuEventRecord(events[size_t(i) + 1], gpu.stream()),
                  "cuEventRecord");
  }
  if (s.isOk())
    s = gpu.sync(60, "the cuBLASLt GEMMs");
  std::vector<double> ms;
  for (int i = 0; i < iters && s.isOk(); ++i) {
    float t = 0;
    s = cuCheck(
        d.cuEventElapsedTime(&t, events[size_t(i)], events[size_t(i) + 1]),
        "cuEventElapsedTime");
    ms.push_back(t);
  }
  for (CUevent e : events)
    if (e)
      d.cuEventDestroy(e);
  if (!s.isOk())
    return s;
  return medianOf(ms);
}

bool isF32Block(const Granularity &g, int64_t rows, int64_t cols) {
  return g.scale == ScaleFormat::F32 && g.rows == rows && g.cols == cols;
}

/// The cuBLASLt peers of one GEMM step.
Status peersOf(GpuPlan &gpu, const PlanStep &s, const ResolvedPlan &shapes,
               cublasLtHandle_t lt, const DeviceBuffer &ws, int iters,
               BenchStep &out) {
  const CudaDriver &d = *gpu.device().driver;
  const KernelSpec &k = s.gemm;
  const int64_t m = out.m, n = out.n, kk = out.k;
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
  const int64_t kb = (kk + 127) / 128, nb = (n + 127) / 128;
  std::vector<float> ones(size_t(std::max<int64_t>({kb * m, kb * nb, 1})),
                          1.0f);
  auto sa = DeviceBuffer::fromHost(ones);
  auto sb = DeviceBuffer::fromHost(ones);
  auto dbuf = DeviceBuffer::alloc(size_t(std::max<int64_t>(m * n * 2, 2)));
  if (!sa || !sb || !dbuf)
    return errorf("cannot allocate the cuBLASLt peer's buffers");
  const void *a = reinterpret_cast<const void *>(gpu.address(s.inputs[0]));
  const void *b = reinterpret_cast<const void *>(gpu.address(s.inputs[2]));
  {
    CublasLtGemm g;
    Status st =
        g.init(lt, kind, m, n, kk, a, b, sa->get(), sb->get(), dbuf->get(),
               ws.get(), ws.size(), k.a.format, k.b.format);
    if (st.isOk()) {
      auto t = timeIt(d, gpu, iters, [&] {
        for (int64_t i = 0; i < out.batch; ++i)
          FP8_RETURN_IF_ERROR(g.run(gpu.stream()));
        return Status::ok();
      });
      if (!t)
        return t.status();
      out.peerMs = *t;
    } else {
      out.peerNote = st.message();
    }
  }
  {
    auto a16 = DeviceBuffer::alloc(size_t(std::max<int64_t>(m * kk * 2, 2)));
    auto b16 = DeviceBuffer::alloc(size_t(std::max<int64_t>(n * kk * 2, 2)));
    if (!a16 || !b16)
      return errorf("cannot allocate the BF16 peer's buffers");
    FP8_RETURN_IF_ERROR(a16->fill(0x3c)); // bf16 0x3c3c, about 0.0115
    FP8_RETURN_IF_ERROR(b16->fill(0x3c));
    CublasLtGemm g;
    Status st = g.init(lt, PeerKind::Bf16, m, n, kk, a16->get(), b16->get(),
                       nullptr, nullptr, dbuf->get(), ws.get(), ws.size());
    if (st.isOk()) {
      auto t = timeIt(d, gpu, iters, [&] {
        for (int64_t i = 0; i < out.batch; ++i)
          FP8_RETURN_IF_ERROR(g.run(gpu.stream()));
        return Status::ok();
      });
      if (!t)
        return t.status();
      out.bf16Ms = *t;
    } else if (out.peerNote.empty()) {
      out.peerNote = st.message();
    }
  }
  (void)shapes;
  return Status::ok();
}
#endif
} // namespace

Status benchPeers(GpuPlan &gpu, const Plan &plan, const ResolvedPlan &shapes,
                  int iters, BenchReport &r) {
#if defined(FP8_HAVE_CUBLASLT)
  std::vector<size_t> runSteps;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (plan.steps[i].phase == Phase::Run)
      runSteps.push_back(i);
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS) {
    r.havePeers = true;
    auto ws = DeviceBuffer::alloc(size_t(32) << 20);
    if (!ws)
      return ws.status();
    for (size_t j = 0; j < runSteps.size(); ++j) {
      const PlanStep &s = plan.steps[runSteps[j]];
      if (s.kind != StepKind::Gemm)
        continue;
      BenchStep &b = r.steps[j];
      FP8_RETURN_IF_ERROR(peersOf(gpu, s, shapes, lt, *ws, iters, b));
      r.peerGemmMs += b.peerMs > 0 ? b.peerMs : 0;
      r.bf16GemmMs += b.bf16Ms > 0 ? b.bf16Ms : 0;
    }
    cublasLtDestroy(lt);
  }
#else
  (void)gpu;
  (void)plan;
  (void)shapes;
  (void)iters;
  (void)r;
#endif
  return Status::ok();
}

} // namespace fp8
