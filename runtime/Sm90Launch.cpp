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

/// Rows/columns of an operand as stored.
void storedShape(const OperandSpec &o, int64_t outer, int64_t k, int64_t &rows,
                 int64_t &cols) {
  rows = o.layout == Layout::KMajor ? outer : k;
  cols = o.layout == Layout::KMajor ? k : outer;
}

ScaleGeometry scaleGeometry(const OperandSpec &o, int64_t outer, int64_t k,
                            int64_t ldOuter, int64_t ldK) {
  int64_t r, c;
  storedShape(o, outer, k, r, c);
  ScaleGeometry g;
  g.rows = o.granularity.scaleRows(r);
  g.cols = o.granularity.scaleCols(c);
  g.ldOuter = ldOuter ? ldOuter : g.cols;
  g.ldK = ldK ? ldK : 1;
  return g;
}

int64_t scaleBytes(const OperandSpec &o) {
  return o.granularity.scale == ScaleFormat::UE8M0 ? 1 : 4;
}

} // namespace

KernelSpec recipeSpec(const GemmRecipe &r, int64_t m, int64_t n, int64_t k) {
  KernelSpec spec;
  spec.arch = Arch::SM90a;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.a = r.a;
  spec.b = r.b;
  spec.promotionInterval = r.promotionInterval;
  spec.out = r.out;
  spec.accumulate = r.accumulate;
  spec.epilogue = r.epilogue;
  return spec;
}

Status checkDeviceExtent(const CudaDriver &d, const void *p, int64_t bytes,
                         const char *what) {
  CUdeviceptr ptr = reinterpret_cast<CUdeviceptr>(p);
  CUdeviceptr start = 0;
  size_t size = 0;
  if (d.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                              ptr) != CUDA_SUCCESS ||
      d.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr) !=
          CUDA_SUCCESS)
    return errorf("expected ", what, " (", p,
                  ") to be device memory allocated with cuMemAlloc/"
                  "cudaMalloc, but the driver does not know this address");
  const int64_t avail = int64_t(start + size - ptr);
  if (avail < bytes)
    return errorf("expected ", what, " to hold at least ", bytes,
                  " bytes for this shape, but its allocation ends after ",
                  avail, " bytes");
  return Status::ok();
}

Operands operandsOf(const KernelSpec &s, int64_t m, const GemmTensors &t,
                    const Sm90Groups &g) {
  Operands o;
  o.groups = g;
  const bool masked = s.kind == GemmKind::GroupedMasked;
  storedShape(s.a, m, s.k, o.ar, o.ac);
  storedShape(s.b, s.n, s.k, o.br, o.bc);
  const bool alongK = s.kind == GemmKind::GroupedK;
  if (s.kind != GemmKind::Dense && !alongK)
    o.br *= g.count; // the groups' [N, K] matrices, stacked
  o.dRows = alongK ? g.count * m : m;
  o.dCols = s.epilogue ? s.epilogue->outCols(s.n) : s.n;
  o.lda = t.lda ? t.lda : o.ac;
  o.ldb = t.ldb ? t.ldb : o.bc;
  o.ldd = t.ldd ? t.ldd : o.dCols;
  o.ldc = t.ldc ? t.ldc : s.n;
  o.ob = s.epilogue ? 1 : sizeOf(s.out);
  if (s.epilogue) {
    const Granularity &q = s.epilogue->granularity;
    o.sd.rows = m;
    o.sd.cols = q.scaleCols(o.dCols);
    o.sd.ldOuter = t.scaleDLd ? t.scaleDLd : o.sd.cols;
    o.sd.ldK = 1;
  }
  o.sa = scaleGeometry(s.a, masked ? g.rows : m, s.k, t.scaleALdOuter,
                       t.scaleALdK);
  o.sb = scaleGeometry(s.b, s.n, s.k, t.scaleBLdOuter, t.scaleBLdK);
  // Packed groups: each group's scales right after the previous group's.
  auto packed = [](const ScaleGeometry &q) {
    return q.ldK == 1 ? q.rows * q.ldOuter : q.cols * q.ldK;
  };
  if (masked && !o.groups.saStride)
    o.groups.saStride = packed(o.sa);
  if (s.kind != GemmKind::Dense && !alongK && !o.groups.sbStride)
    o.groups.sbStride = packed(o.sb);
  return o;
}

namespace {
/// The codes and scales a quantizing epilogue writes.
Status checkEpilogueTensors(const KernelSpec &r, bool rows,
                            const GemmTensors &t, const Operands &o) {
  if (reinterpret_cast<uintptr_t>(t.d) % 8 || o.ldd % 8)
    return errorf("expected the FP8 codes D of a quantizing epilogue to be "
                  "8-byte aligned with a row pitch of a multiple of 8 bytes "
                  "(eight codes a store), found D = ",
                  t.d, ", ldd = ", o.ldd);
  const int64_t sb =
      r.epilogue->granularity.scale == ScaleFormat::UE8M0 ? 1 : 4;
  if (rows && !t.scaleD)
    return errorf("expected a pointer to the scales of D (scaleD): "
                  "the epilogue quantizes D");
  if (reinterpret_cast<uintptr_t>(t.scaleD) % sb ||
      reinterpret_cast<uintptr_t>(t.scaleDMirror) % sb)
    return errorf("expected the scales of D and their mirror to be aligned "
                  "to their element size (",
                  sb, " bytes)");
  if (o.sd.ldOuter < o.sd.cols)
    return errorf("expected the row pitch of D's scales (scaleDLd) >= ",
                  o.sd.cols, ", found ", o.sd.ldOuter);
  const int64_t lim = (int64_t(1) << 31) - 1;
  if (t.scaleDMirror && (t.mirrorStrideRows < 0 || t.mirrorStrideCols < 0 ||
                         t.mirrorStrideRows > lim || t.mirrorStrideCols > lim))
    return errorf("expected the mirror's strides in [0, 2^31), found ",
                  t.mirrorStrideRows, " and ", t.mirrorStrideCols);
  if (o.dCols > lim)
    return errorf("expected the quantized columns below 2^31, found ", o.dCols);
  return Status::ok();
}
} // namespace

Status checkSm90Tensors(const KernelSpec &r, int64_t m, const GemmTensors &t,
                        const Operands &o) {
  const int64_t n = r.n, k = r.k;
  if (m < 0 || n <= 0 || k <= 0)
    return errorf("expected M >= 0, N > 0 and K > 0, found M = ", m,
                  ", N = ", n, ", K = ", k);
  if (m > (int64_t(1) << 31) - 1)
    return errorf("expected M below 2^31, found ", m);
  // A GEMM of no rows reads and writes nothing: A, D, C and A's scales
  // may then be null (an empty tensor's data pointer is).
  const bool rows = m > 0;
  if ((rows && !t.a) || !t.b || (rows && !t.d))
    return errorf("expected pointers to A, B and D, found A = ", t.a,
                  ", B = ", t.b, ", D = ", t.d);
  if ((rows && !t.scaleA) || !t.scaleB)
    return errorf("expected pointers to the scales of A and B, found "
                  "scaleA = ",
                  t.scaleA, ", scaleB = ", t.scaleB);
  if (rows && r.accumulate && !t.c)
    return errorf("expected a C pointer: the recipe accumulates into C");
  const int64_t lda = o.lda, ldb = o.ldb, ldd = o.ldd, ldc = o.ldc;
  const int64_t ob = o.ob;
  if (lda < o.ac)
    return errorf("expected lda >= ", o.ac, ", found ", lda);
  if (ldb < o.bc)
    return errorf("expected ldb >= ", o.bc, ", found ", ldb);
  if (ldd < o.dCols)
    return errorf(
        "expected ldd >= ", r.epilogue ? "the quantized columns (" : "N (",
        o.dCols, "), found ", ldd);
  if (r.accumulate && ldc < n)
    return errorf("expected ldc >= N (", n, "), found ", ldc);
  if (reinterpret_cast<uintptr_t>(t.a) % 16 ||
      reinterpret_cast<uintptr_t>(t.b) % 16)
    return errorf("expected A and B to be 16-byte aligned (TMA), found A = ",
                  t.a, ", B = ", t.b);
  if (lda % 16 || ldb % 16)
    return errorf("expected the row pitches of A and B to be multiples of 16 "
                  "bytes (TMA), found lda = ",
                  lda, ", ldb = ", ldb);
  if (r.epilogue) {
    FP8_RETURN_IF_ERROR(checkEpilogueTensors(r, rows, t, o));
  } else if ((n * ob) % 16 == 0) {
    if (reinterpret_cast<uintptr_t>(t.d) % 16 || (ldd * ob) % 16)
      return errorf("expected D to be 16-byte aligned with a row pitch that "
                    "is a multiple of 16 bytes (TMA store), found D = ",
                    t.d, ", ldd = ", ldd);
    if (r.accumulate &&
        (reinterpret_cast<uintptr_t>(t.c) % 16 || (ldc * ob) % 16))
      return errorf("expected C to be 16-byte aligned with a row pitch that "
                    "is a multiple of 16 bytes (loaded by TMA like D is "
                    "stored), found C = ",
                    t.c, ", ldc = ", ldc);
  } else if (reinterpret_cast<uintptr_t>(t.d) % ob) {
    return errorf("expected D to be aligned to its element size (", ob,
                  " bytes), found ", t.d);
  }
  if (r.accumulate && reinterpret_cast<uintptr_t>(t.c) % ob)
    return errorf("expected C to be aligned to its element size (", ob,
                  " bytes), found ", t.c);
  const ScaleGeometry &sa = o.sa, &sb = o.sb;
  if (sa.ldOuter < 0 || sa.ldK < 0 || sb.ldOuter < 0 || sb.ldK < 0)
    return errorf("expected non-negative scale strides");
  if (reinterpret_cast<uintptr_t>(t.scaleA) % scaleBytes(r.a) ||
      reinterpret_cast<uintptr_t>(t.scaleB) % scaleBytes(r.b))
    return errorf("expected the scale tensors to be aligned to their element "
                  "size");
  return Status::ok();
}

namespace {

/// Asks the driver whether every buffer is device memory as large as the
/// shape needs.
Status checkExtents(const CudaDriver &d, const KernelSpec &s,
                    const GemmTensors &t, const Operands &o) {
  const int64_t n = s.n;
  FP8_RETURN_IF_ERROR(
      checkDeviceExtent(d, t.a, (o.ar - 1) * o.lda + o.ac, "A"));
  FP8_RETURN_IF_ERROR(
      checkDeviceExtent(d, t.b, (o.br - 1) * o.ldb + o.bc, "B"));
  FP8_RETURN_IF_ERROR(
      checkDeviceExtent(d, t.d, ((o.dRows - 1) * o.ldd + o.dCols) * o.ob, "D"));
  if (s.epilogue) {
    const int64_t sb =
        s.epilogue->granularity.scale == ScaleFormat::UE8M0 ? 1 : 4;
    const ScaleGeometry &q = o.sd;
    FP8_RETURN_IF_ERROR(
        checkDeviceExtent(d, t.scaleD, ((q.rows - 1) * q.ldOuter + q.cols) * sb,
                          "the scales of D"));
    if (t.scaleDMirror)
      FP8_RETURN_IF_ERROR(
          checkDeviceExtent(d, t.scaleDMirror,
                            ((q.rows - 1) * t.mirrorStrideRows +
                             (q.cols - 1) * t.mirrorStrideCols + 1) *
                                sb,
                            "the mirror of D's scales"));
  }
  if (s.accumulate)
    FP8_RETURN_IF_ERROR(
        checkDeviceExtent(d, t.c, ((o.dRows - 1) * o.ldc + n) * o.ob, "C"));
  const ScaleGeometry &sa = o.sa, &sb = o.sb;
  const Sm90Groups &g = o.groups;
  const int64_t aGroups = s.kind == GemmKind::GroupedMasked ? g.count : 1;
  const int64_t bGroups =
      s.kind == GemmKind::Dense || s.kind == GemmKind::GroupedK ? 1 : g.count;
  FP8_RETURN_IF_ERROR(checkDeviceExtent(d, t.scaleA,
                                        ((aGroups - 1) * g.saStride +
                                         (sa.rows - 1) * sa.ldOuter +
                                         (sa.cols - 1) * sa.ldK + 1) *
                                            scaleBytes(s.a),
                                        "the scales of A"));
  return checkDeviceExtent(d, t.scaleB,
                           ((bGroups - 1) * g.sbStride +
                            (sb.rows - 1) * sb.ldOuter +
                            (sb.cols - 1) * sb.ldK + 1) *
                               scaleBytes(s.b),
                           "the scales of B");
}

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

/// The rows of A's box and of its K scales' box for this launch
/// (fp8k::gemmABoxRows), 0 for the tile's: only a dense kernel whose CTAs
/// do not share A in a cluster takes the smaller boxes (the kernel's
/// kSmallBox).
int aBoxRows(const KernelSpec &s, const LaunchInfo &li, int64_t m) {
  if (s.kind != GemmKind::Dense || li.clusterN > 1)
    return 0;
  return fp8k::gemmABoxRows<int64_t>(m, li.blockM);
}

/// Loads the kernel variant for `scaleTma` and encodes its TMA descriptors,
/// in kernel-parameter order: A, B, D, the K scales of A and B that come by
/// TMA, and C where the kernel loads it by TMA (unused slots stay zero). A
/// scale descriptor the driver refuses sends that operand's scales to the
/// consumers: the variant that loads them (`scaleTma` is updated).
Expected<const LoadedKernel *> loadWithMaps(const CudaDriver &d,
                                            const KernelSpec &s, int64_t m,
                                            const GemmTensors &t,
                                            const Operands &o, int &scaleTma,
                                            CUtensorMap (&maps)[6]) {
  const int64_t n = s.n, k = s.k;
  for (;;) {
    auto kernel = loadKernel(sm90KernelName(s, scaleTma),
                             [&] { return emitSm90Gemm(s, scaleTma); });
    if (!kernel)
      return kernel.status();
    const LoadedKernel *loaded = *kernel;
    const int aRows = aBoxRows(s, loaded->launch, m);
    std::memset(maps, 0, sizeof(maps));
    int refused = 0;
    for (const TmaPlan &p : loaded->launch.tma) {
      Expected<CUtensorMap> map = Status::error("unset");
      int slot = 0;
      switch (p.operand) {
      case TmaPlan::Operand::A:
        map = encodeTensorMap2D(d, t.a, 1, m, k, o.lda,
                                aRows > 0 ? aRows : p.boxOuter, p.boxInner,
                                p.swizzleBytes, "A");
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
        map =
            encodeTensorMap2D(d, b.base, 4, uint64_t(b.outer),
                              uint64_t(b.inner), uint64_t(b.pitch) * 4,
                              p.boxOuter, isA && aRows > 0 ? aRows : p.boxInner,
                              0, isA ? "the scales of A" : "the scales of B");
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
  CUtensorMap maps[6];
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
  params->a_box_rows = aBoxRows(s, li, m); // as loadWithMaps encoded A

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

  void *args[] = {&maps[0], &maps[1], &maps[2], &maps[3],
                  &maps[4], &maps[5], &*params};
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
