//===- Sm90Operands.cpp - An sm_90a GEMM launch's operands, checked -------===//
//
// What a launch's tensors are as stored (operandsOf) and the checks that
// refuse bad ones by name before any kernel runs: the shapes, pointers,
// pitches and alignments TMA needs (checkSm90Tensors), and with the driver,
// that every buffer is device memory as large as the shape needs
// (checkExtents).
//
//===----------------------------------------------------------------------===//

#include "runtime/Sm90Launch.h"

namespace fp8 {

namespace {

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
  spec.amaxOut = r.amaxOut;
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
  if (r.amaxOut != (t.amaxD != nullptr))
    return errorf(r.amaxOut ? "expected a pointer to D's amax (amaxD): the "
                              "recipe writes it"
                            : "expected no amaxD pointer: the recipe writes "
                              "no amax (GemmRecipe::amaxOut)");
  if (reinterpret_cast<uintptr_t>(t.amaxD) % 4)
    return errorf("expected D's amax to be 4-byte aligned (an f32), found ",
                  static_cast<const void *>(t.amaxD));
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
  if (s.amaxOut)
    FP8_RETURN_IF_ERROR(checkDeviceExtent(d, t.amaxD, 4, "D's amax"));
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

} // namespace fp8
