//===- Sm90Launch.cpp - Launching one sm_90a GEMM kernel ------------------===//

#include "runtime/Sm90Launch.h"
#include "codegen/Gemm.h"
#include "codegen/Sm90Gemm.h"
#include "codegen/kernels/sm90_params.h"
#include "core/Env.h"
#include "runtime/LoadedKernels.h"
#include "runtime/SplitWorkspace.h"
#include "runtime/TensorMap.h"

#include <cstring>
#include <mutex>
#include <optional>

namespace fp8 {

namespace {

/// The kernel's parameter, from the header NVRTC compiles it with.
using Sm90Params = fp8k::GemmParams;

/// The trace buffer of FP8_KERNEL_TRACE runs (one per process; traced calls
/// synchronise their stream before it is reused).
std::mutex gTraceMutex;
CUdeviceptr gTrace = 0;
constexpr size_t kTraceWords =
    size_t(kGemmTraceCtas) * kGemmTraceRoles * kGemmTraceSlots;

/// A scale tensor as a TMA box source.
struct ScaleBox {
  const void *base;
  int64_t inner, outer, pitch; // elements; inner contiguous
};

/// The K scales that come by TMA with each pipeline stage: those the kernel
/// can take that way whose tensors' layout allows it ([K blocks][outer]
/// with the outer index contiguous (A), or [outer][K blocks] with K blocks
/// contiguous (B); 16-byte aligned base and pitches). The consumers of the
/// kernel variant loaded for the rest read them from global memory. A
/// grouped GEMM's B scales are one box source when the groups' [outer][K
/// blocks] tensors follow each other row after row (a masked GEMM's A
/// scales never come by TMA: sm90ScaleTmaOperands).
std::optional<ScaleBox> scaleBox(const KernelSpec &s, bool isA,
                                 const GemmTensors &t, const Operands &o) {
  static const int scaleTmaAllowed = env::scaleTmaMask();
  const ScaleGeometry &g = isA ? o.sa : o.sb;
  ScaleBox b{isA ? t.scaleA : t.scaleB, isA ? g.rows : g.cols,
             isA ? g.cols : g.rows, isA ? g.ldK : g.ldOuter};
  if (!isA && s.kind != GemmKind::Dense && s.kind != GemmKind::GroupedK) {
    if (o.groups.sbStride != g.rows * g.ldOuter)
      return std::nullopt;
    b.outer *= o.groups.count;
  }
  const int64_t step = isA ? g.ldOuter : g.ldK; // must be 1
  if (b.outer == 1)
    b.pitch = (b.inner + 3) / 4 * 4; // unused: any 16-byte multiple
  if (!(scaleTmaAllowed & (isA ? kSm90ScaleTmaA : kSm90ScaleTmaB)) ||
      (step != 1 && b.inner > 1) || b.pitch % 4 != 0 ||
      reinterpret_cast<uintptr_t>(b.base) % 16 != 0)
    return std::nullopt;
  return b;
}

/// The rows of A's box and of its K scales' box for the last M tile of
/// this launch (fp8k::gemmABoxRows), 0 for the tile's: only a kernel with a
/// tail box (sm90HasTailBox) takes the smaller boxes, through A's own
/// descriptors where M lies in one tile (the kernel's kSmallBox), else
/// through the tail-box variant's.
int aBoxRows(const KernelSpec &s, int64_t m) {
  if (!sm90HasTailBox(s))
    return 0;
  return fp8k::gemmABoxRows<int64_t>(m, s.tile.blockM);
}

/// Loads the kernel variant for `scaleTma` (and the tail box where M asks
/// for it) and encodes its TMA descriptors, in kernel-parameter order: A,
/// B, D, the K scales of A and B that come by TMA, C where the kernel loads
/// it by TMA, and the tail-box variant's A and A scales (unused slots stay
/// zero). A scale descriptor the driver refuses sends that operand's
/// scales to the consumers: the variant that loads them (`scaleTma` is
/// updated).
Expected<const LoadedKernel *> loadWithMaps(const CudaDriver &d,
                                            const KernelSpec &s, int64_t m,
                                            const GemmTensors &t,
                                            const Operands &o, int &scaleTma,
                                            CUtensorMap (&maps)[8]) {
  const int64_t n = s.n, k = s.k;
  const bool tailBox = sm90TailBox(s, m);
  const int aRows = aBoxRows(s, m);
  // A's own box: the tail's where every tile is the last.
  const int aOwnRows = tailBox ? 0 : aRows;
  for (;;) {
    auto kernel = loadKernel(sm90KernelName(s, scaleTma, tailBox), [&] {
      return emitSm90Gemm(s, scaleTma, tailBox);
    });
    if (!kernel)
      return kernel.status();
    const LoadedKernel *loaded = *kernel;
    std::memset(maps, 0, sizeof(maps));
    int refused = 0;
    for (const TmaPlan &p : loaded->launch.tma) {
      Expected<CUtensorMap> map = Status::error("unset");
      int slot = 0;
      switch (p.operand) {
      case TmaPlan::Operand::A:
        map = encodeTensorMap2D(d, t.a, 1, m, k, o.lda,
                                aOwnRows > 0 ? aOwnRows : p.boxOuter,
                                p.boxInner, p.swizzleBytes, "A");
        if (map && tailBox) {
          Expected<CUtensorMap> tail =
              encodeTensorMap2D(d, t.a, 1, m, k, o.lda, aRows, p.boxInner,
                                p.swizzleBytes, "A's last M tile");
          if (!tail)
            return tail.status();
          maps[6] = *tail;
        }
        break;
      case TmaPlan::Operand::B:
        slot = 1;
        map = encodeTensorMap2D(d, t.b, 1, o.br, k, o.ldb, p.boxOuter,
                                p.boxInner, p.swizzleBytes, "B");
        break;
      case TmaPlan::Operand::D:
        if (!loaded->launch.tmaStore)
          continue;
        slot = 2;
        map = encodeTensorMap2D(d, t.d, p.elemBytes, o.dRows, n, o.ldd * o.ob,
                                p.boxOuter, p.boxInner, p.swizzleBytes, "D");
        break;
      case TmaPlan::Operand::C:
        slot = 5;
        map = encodeTensorMap2D(d, t.c, p.elemBytes, o.dRows, n, o.ldc * o.ob,
                                p.boxOuter, p.boxInner, p.swizzleBytes, "C");
        break;
      case TmaPlan::Operand::ScaleA:
      case TmaPlan::Operand::ScaleB: {
        const bool isA = p.operand == TmaPlan::Operand::ScaleA;
        const ScaleBox b = *scaleBox(s, isA, t, o);
        slot = isA ? 3 : 4;
        auto encode = [&](int rows, const char *what) {
          return encodeTensorMap2D(d, b.base, 4, uint64_t(b.outer),
                                   uint64_t(b.inner), uint64_t(b.pitch) * 4,
                                   p.boxOuter, rows, 0, what);
        };
        map = encode(isA && aOwnRows > 0 ? aOwnRows : p.boxInner,
                     isA ? "the scales of A" : "the scales of B");
        if (map && isA && tailBox) {
          Expected<CUtensorMap> tail =
              encode(aRows, "the scales of A's last M tile");
          if (tail)
            maps[7] = *tail;
          else
            map = tail;
        }
        if (!map)
          refused |= isA ? kSm90ScaleTmaA : kSm90ScaleTmaB;
        break;
      }
      }
      if (refused)
        break;
      if (!map)
        return map.status();
      maps[slot] = *map;
    }
    if (!refused)
      return loaded;
    scaleTma &= ~refused;
  }
}

/// The grid and the schedule's parameters of one launch.
struct Sm90Grid {
  int64_t grid;
  Sm90TailSchedule tail;
  int64_t groups, mTiles, nTiles;
};

/// The grid of one launch: the kernel's work units (gemmTileGroups and
/// gemmUnits, the functions its schedule uses), one per CTA (cluster) when
/// not persistent, else at most one wave. A grouped GEMM's tile count is
/// device data: its bound (each group's last tile group may be partial)
/// sizes the persistent grid.
Sm90Grid sm90Grid(const LoadedKernel &kn, const KernelSpec &s, int64_t m,
                  const Sm90Groups &groups, int smCount) {
  const LaunchInfo &li = kn.launch;
  const int64_t n = s.n;
  int64_t mGroups = fp8k::gemmTileGroups<int64_t>(m, li.blockM, li.clusterM);
  if (s.kind == GemmKind::GroupedContiguous)
    mGroups += groups.count - 1;
  else if (s.kind == GemmKind::GroupedMasked)
    mGroups = groups.count * fp8k::gemmTileGroups<int64_t>(
                                 groups.rows, li.blockM, li.clusterM);
  else if (s.kind == GemmKind::GroupedK)
    mGroups *= groups.count;
  const int64_t nGroups =
      fp8k::gemmTileGroups<int64_t>(n, li.blockN, li.clusterN);
  Sm90Grid g;
  g.mTiles = mGroups * li.clusterM;
  g.nTiles = nGroups * li.clusterN;
  int64_t slots = smCount / li.clusterX;
  if (li.clusterX > 1 && kn.maxActiveClusters > 0)
    slots = kn.maxActiveClusters;
  g.groups = mGroups * nGroups;
  // (tail_split 1: nothing split, first == groups.)
  g.tail = sm90TailSchedule(g.groups, slots, li.tailSplit, li.kSlices);
  const int64_t units = g.tail.units(g.groups, li.splitK);
  g.grid =
      (li.persistent ? std::min<int64_t>(units, slots) : units) * li.clusterX;
  return g;
}

/// The kernel parameter: pointers, pitches, and the split-K or split-tail
/// workspace.
Expected<Sm90Params> sm90Params(const CudaDriver &d, CUstream stream,
                                const LaunchInfo &li, const Sm90Grid &g,
                                int64_t m, int scaleTma, const GemmTensors &t,
                                const Operands &o) {
  Sm90Params params{};
  params.m = int(m);
  params.scale_tma = scaleTma;
  params.sa = t.scaleA;
  params.sa_ld_outer = o.sa.ldOuter;
  params.sa_ld_k = o.sa.ldK;
  params.sb = t.scaleB;
  params.sb_ld_outer = o.sb.ldOuter;
  params.sb_ld_k = o.sb.ldK;
  params.c = t.c;
  params.ldc = o.ldc;
  params.d = t.d;
  params.ldd = o.ldd;
  params.tail_first = int(g.tail.first);
  params.tail_split = g.tail.split;
  params.groups = o.groups.data;
  params.num_groups = int(o.groups.count);
  params.group_rows = int(o.groups.rows);
  params.sa_ld_group = o.groups.saStride;
  params.sb_ld_group = o.groups.sbStride;
  params.k = int(std::min<int64_t>(o.ac, (int64_t(1) << 31) - 1));
  params.q_scales = t.scaleD;
  params.q_ld_scales = o.sd.ldOuter;
  params.q_mirror = t.scaleDMirror;
  params.q_mirror_rows = int(t.mirrorStrideRows);
  params.q_mirror_cols = int(t.mirrorStrideCols);
  params.q_cols = int(o.dCols);
  if (li.splitK > 1 || g.tail.split > 1) {
    // Split-K: every tile's slices; a split tail: its tiles' (numbered
    // from the first split one, each CTA of a cluster its own).
    const int64_t split = li.splitK > 1 ? li.splitK : g.tail.split;
    const int64_t tiles = li.splitK > 1
                              ? g.mTiles * g.nTiles
                              : (g.groups - g.tail.first) * li.clusterX;
    const size_t threads = size_t(li.blockM / 64) * 128;
    const size_t partial =
        size_t(tiles) * split * threads * size_t(li.blockN / 2) * sizeof(float);
    const size_t counters = size_t(tiles) * sizeof(int);
    SplitWorkspace w;
    FP8_RETURN_IF_ERROR(splitWorkspace(d, stream, partial, counters, w));
    params.workspace = reinterpret_cast<float *>(w.partials);
    params.counters = reinterpret_cast<int *>(w.counters);
  }
  return params;
}

} // namespace

Status launchSm90(const CudaDevice &dev, const KernelSpec &s, int64_t m,
                  const GemmTensors &t, const Operands &o, CUstream stream,
                  const GemmOptions &options, GemmReport *report) {
  const CudaDriver &d = *dev.driver;
  if (options.checkExtents)
    FP8_RETURN_IF_ERROR(checkExtents(d, s, t, o));

  const int canTma = sm90ScaleTmaOperands(s);
  int scaleTma = 0;
  for (int bit : {kSm90ScaleTmaA, kSm90ScaleTmaB})
    if ((canTma & bit) && scaleBox(s, bit == kSm90ScaleTmaA, t, o))
      scaleTma |= bit;
  CUtensorMap maps[8];
  Expected<const LoadedKernel *> loaded =
      loadWithMaps(d, s, m, t, o, scaleTma, maps);
  if (!loaded)
    return loaded.status();
  const LoadedKernel &kn = **loaded;
  const LaunchInfo &li = kn.launch;
  const Sm90Grid g = sm90Grid(kn, s, m, o.groups, dev.smCount);
  Expected<Sm90Params> params = sm90Params(d, stream, li, g, m, scaleTma, t, o);
  if (!params)
    return params.status();
  params->a_box_rows = aBoxRows(s, m); // as loadWithMaps encoded A
  if (s.amaxOut) {
    // Every warp joins its part by an atomic max into a +0 start.
    params->amax = t.amaxD;
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(t.amaxD), 0, 1,
                                   stream),
                "cuMemsetD32Async(D's amax)"));
  }

  // Read once, like FP8_SCALE_TMA: a process is traced or not (fp8-bench
  // --trace sets it before its first call), and the call path stays free of
  // getenv.
  static const bool tracing = env::kernelTrace();
  std::unique_lock<std::mutex> traceLock(gTraceMutex, std::defer_lock);
  if (tracing) {
    traceLock.lock();
    if (!gTrace)
      FP8_RETURN_IF_ERROR(cuCheck(d.cuMemAlloc(&gTrace, kTraceWords * 4),
                                  "cuMemAlloc(kernel trace)"));
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuMemsetD8Async(gTrace, 0, kTraceWords * 4, stream),
                "cuMemsetD8Async(kernel trace)"));
    params->trace = reinterpret_cast<unsigned *>(gTrace);
  }

  // The tail-box variant takes two more descriptors before the parameters.
  void *args[] = {&maps[0], &maps[1], &maps[2], &maps[3], &maps[4],
                  &maps[5], &maps[6], &maps[7], &*params};
  if (!li.tailBox)
    args[6] = &*params;
  CUlaunchConfig cfg{};
  cfg.gridDimX = unsigned(g.grid);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = unsigned(li.threads);
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = unsigned(li.sharedBytes);
  cfg.hStream = stream;
  CUlaunchAttribute attr[2];
  cfg.attrs = attr;
  cfg.numAttrs = 0;
  if (li.clusterX > 1) {
    CUlaunchAttribute &a = attr[cfg.numAttrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = unsigned(li.clusterX);
    a.value.clusterDim.y = 1;
    a.value.clusterDim.z = 1;
  }
  if (options.afterPriorKernel) {
    CUlaunchAttribute &a = attr[cfg.numAttrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  Status ls = cuCheck(d.cuLaunchKernelEx(&cfg, kn.function, args, nullptr),
                      "cuLaunchKernelEx");
  if (!ls.isOk())
    return ls.withContext("launching " + kn.name);
  if (report) {
    report->kernel = kn.name;
    report->tile = s.tile;
    report->grid = int(g.grid);
    report->maxActiveClusters = kn.maxActiveClusters;
    report->jitSeconds = kn.jitSeconds;
    report->scaleATma = scaleTma & 1;
    report->scaleBTma = scaleTma & 2;
    report->trace.clear();
  }
  if (tracing) {
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuStreamSynchronize(stream), "cuStreamSynchronize(trace)"));
    std::vector<uint32_t> words(kTraceWords);
    FP8_RETURN_IF_ERROR(cuCheck(
        d.cuMemcpyDtoH(words.data(), gTrace, kTraceWords * 4), "trace copy"));
    if (report)
      report->trace = std::move(words);
  }
  return Status::ok();
}

} // namespace fp8
