//===- HostOracle.cpp - The runtime's entry points on host memory ---------===//

#include "runtime/HostOracle.h"

#include "codegen/kernels/fp8_delayed.h"
#include "core/RecipeRules.h"
#include "core/Target.h"
#include "numerics/Formats.h"
#include "numerics/GroupedGemm.h"
#include "numerics/Quantize.h"
#include "numerics/ReferenceGemm.h"
#include "runtime/Sm90Launch.h"
#include "runtime/plan/PlanOracle.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

namespace fp8 {

namespace nm = numerics;

namespace {

/// Element i of a bf16, f16 or f32 array, widened exactly to float.
float wideAt(const void *p, DType t, int64_t i) {
  if (t == DType::F32) {
    float v;
    std::memcpy(&v, static_cast<const uint8_t *>(p) + 4 * i, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, static_cast<const uint8_t *>(p) + 2 * i, 2);
  return t == DType::BF16 ? nm::bf16ToFloat(bits) : nm::f16ToFloat(bits);
}

/// Stores v rounded to t (bf16 or f32, the GEMM's result types).
void storeWide(void *p, DType t, int64_t i, float v) {
  if (t == DType::F32) {
    std::memcpy(static_cast<uint8_t *>(p) + 4 * i, &v, 4);
    return;
  }
  const uint16_t bits =
      t == DType::BF16 ? nm::floatToBF16(v) : nm::floatToF16(v);
  std::memcpy(static_cast<uint8_t *>(p) + 2 * i, &bits, 2);
}

int64_t scaleBytesOf(const Granularity &g) {
  return g.scale == ScaleFormat::UE8M0 ? 1 : 4;
}

/// Scale (i, j) of a scale tensor at `p` with element strides.
float scaleAt(const void *p, const Granularity &g, int64_t index) {
  if (g.scale == ScaleFormat::UE8M0)
    return nm::ue8m0ToFloat(static_cast<const uint8_t *>(p)[index]);
  float v;
  std::memcpy(&v, static_cast<const uint8_t *>(p) + 4 * index, 4);
  return v;
}

/// A quantized matrix as the oracle holds it, read from codes with row
/// pitch `ld` and scales of geometry `sg`.
nm::QuantizedTensor readQuantized(DType format, const Granularity &g,
                                  int64_t rows, int64_t cols, const void *codes,
                                  int64_t ld, const void *scales,
                                  const ScaleGeometry &sg) {
  nm::QuantizedTensor q;
  q.format = format;
  q.rows = rows;
  q.cols = cols;
  q.granularity = g;
  q.codes.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(q.codes.data() + r * cols,
                static_cast<const uint8_t *>(codes) + r * ld, size_t(cols));
  q.scaleRows = sg.rows;
  q.scaleCols = sg.cols;
  q.scales.resize(size_t(sg.rows * sg.cols));
  if (g.scale == ScaleFormat::UE8M0)
    q.scaleCodes.resize(q.scales.size());
  for (int64_t i = 0; i < sg.rows; ++i)
    for (int64_t j = 0; j < sg.cols; ++j) {
      const int64_t at = i * sg.ldOuter + j * sg.ldK;
      q.scales[size_t(i * sg.cols + j)] = scaleAt(scales, g, at);
      if (g.scale == ScaleFormat::UE8M0)
        q.scaleCodes[size_t(i * sg.cols + j)] =
            static_cast<const uint8_t *>(scales)[at];
    }
  return q;
}

/// C of a GEMM that accumulates, [rows, n] widened to FP32 (empty if it
/// does not).
std::vector<float> addendOf(const GemmRecipe &r, int64_t rows, int64_t n,
                            const GemmTensors &t, const Operands &o) {
  std::vector<float> c;
  if (!r.accumulate)
    return c;
  c.resize(size_t(rows * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[size_t(i * n + j)] = wideAt(t.c, r.out, i * o.ldc + j);
  return c;
}

/// Writes q's codes and scales (packed, row-major) to `codes` and `scales`.
void writeQuantized(const nm::QuantizedTensor &q, void *codes, void *scales) {
  std::memcpy(codes, q.codes.data(), q.codes.size());
  if (q.granularity.scale == ScaleFormat::UE8M0)
    std::memcpy(scales, q.scaleCodes.data(), q.scaleCodes.size());
  else
    std::memcpy(scales, q.scales.data(), q.scales.size() * sizeof(float));
}

} // namespace

Status checkHistoryState(const void *state, const DelayedScaling &d) {
  if (!state)
    return errorf("expected an amax history state, found none");
  fp8k::AmaxHistoryState hdr;
  std::memcpy(&hdr, state, sizeof(hdr));
  const int64_t length = d.historyLength;
  if (int64_t(hdr.count) > length || int64_t(hdr.head) >= length)
    return errorf("expected an amax history state of length ", length,
                  " (at most ", length, " amaxes, its head below ", length,
                  "), found ", hdr.count, " amaxes and head ", hdr.head,
                  ": zero the state before its first use");
  const auto *values = static_cast<const uint8_t *>(state) + sizeof(hdr);
  for (int64_t i = 0; i < length; ++i) {
    float v;
    std::memcpy(&v, values + 4 * i, sizeof(v));
    if (!std::isfinite(v) || v < 0)
      return errorf("expected finite non-negative amaxes in the history "
                    "state, found ",
                    v, " at position ", i);
  }
  return Status::ok();
}

Status quantizeOnHost(const QuantRecipe &r, int64_t rows, int64_t cols,
                      const QuantizeTensors &t, nm::QuantStats *stats) {
  FP8_RETURN_IF_ERROR(checkQuantizeArgs(r, rows, cols, t));
  if (stats && t.batch != 1)
    return errorf("expected one matrix when statistics are asked for, found "
                  "a batch of ",
                  t.batch);
  if (rows == 0 || cols == 0) // nothing to write (checkQuantizeArgs)
    return Status::ok();
  std::optional<nm::AmaxHistory> history;
  if (r.mode == ScalingMode::Delayed) {
    FP8_RETURN_IF_ERROR(checkHistoryState(t.history, r.delayed));
    history =
        historyFromState(static_cast<const uint8_t *>(t.history), r.delayed);
  }
  nm::QuantizeOptions options;
  options.nonFinite = nm::NonFinitePolicy::Propagate; // as the kernels do
  const int64_t n = rows * cols;
  const int64_t scaleCount =
      r.granularity.scaleRows(rows) * r.granularity.scaleCols(cols);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t b = 0; b < t.batch; ++b) {
    for (int64_t i = 0; i < n; ++i)
      x[size_t(i)] = wideAt(t.x, t.xType, b * n + i);
    if (t.amax)
      options.givenAmax = t.amax[b];
    Expected<nm::QuantizedTensor> q = nm::quantize(
        x.data(), rows, cols, r, stats, history ? &*history : nullptr, options);
    if (!q)
      return q.status();
    // Transposed: the oracle's FP8 transpose of the result, which is what
    // the kernels' fused store writes (same sizes, so the same offsets).
    writeQuantized(t.transposed ? nm::transpose(*q) : *q,
                   static_cast<uint8_t *>(t.codes) + b * n,
                   static_cast<uint8_t *>(t.scales) +
                       b * scaleCount * scaleBytesOf(r.granularity));
  }
  if (history)
    stateFromHistory(*history, static_cast<uint8_t *>(t.history),
                     size_t(amaxHistoryBytes(r.delayed.historyLength)));
  return Status::ok();
}

Status transposeOnHost(DType format, const Granularity &g, int64_t rows,
                       int64_t cols, const TransposeTensors &t) {
  FP8_RETURN_IF_ERROR(checkTransposeArgs(format, g, rows, cols, t));
  const int64_t n = rows * cols;
  ScaleGeometry sg;
  sg.rows = g.scaleRows(rows);
  sg.cols = g.scaleCols(cols);
  sg.ldOuter = sg.cols;
  sg.ldK = 1;
  const int64_t scaleBytes = sg.rows * sg.cols * scaleBytesOf(g);
  for (int64_t b = 0; b < t.batch; ++b) {
    const nm::QuantizedTensor q = readQuantized(
        format, g, rows, cols, static_cast<const uint8_t *>(t.codes) + b * n,
        cols, static_cast<const uint8_t *>(t.scales) + b * scaleBytes, sg);
    writeQuantized(nm::transpose(q), static_cast<uint8_t *>(t.outCodes) + b * n,
                   static_cast<uint8_t *>(t.outScales) + b * scaleBytes);
  }
  return Status::ok();
}

Status gemmOnHost(const GemmRecipe &r, int64_t m, int64_t n, int64_t k,
                  const GemmTensors &t) {
  FP8_RETURN_IF_ERROR(checkGemmArgs(r, m, n, k, t));
  if (r.epilogue)
    return errorf("expected a GEMM without a quantizing epilogue: the CPU "
                  "oracle computes plain GEMMs");
  if (m == 0)
    return Status::ok();
  // The sm_90a kernels' rules, so that the CPU accepts what the GPU does.
  Expected<KernelSpec> spec =
      gemmKernelSpec(r, m, n, k, targetInfo(Arch::SM90a).smCount, std::nullopt);
  if (!spec)
    return spec.status();
  const Operands o = operandsOf(*spec, m, t);
  const nm::QuantizedTensor a = readQuantized(r.a.format, r.a.granularity, o.ar,
                                              o.ac, t.a, o.lda, t.scaleA, o.sa);
  const nm::QuantizedTensor b = readQuantized(r.b.format, r.b.granularity, o.br,
                                              o.bc, t.b, o.ldb, t.scaleB, o.sb);
  const std::vector<float> c = addendOf(r, m, n, t, o);
  nm::ReferenceGemmOptions options;
  options.promotionInterval = r.promotionInterval;
  Expected<std::vector<float>> d = nm::referenceGemm(
      a, r.a.layout, b, r.b.layout, r.accumulate ? c.data() : nullptr, options);
  if (!d)
    return d.status();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      storeWide(t.d, r.out, i * o.ldd + j, (*d)[size_t(i * n + j)]);
  return Status::ok();
}

Status groupedGemmOnHost(const GemmRecipe &r, const GroupedGemmShape &shape,
                         const GroupedGemmTensors &t) {
  Operands o;
  FP8_RETURN_IF_ERROR(checkGroupedGemmArgs(r, shape, t, o));
  if (r.epilogue)
    return errorf("expected a GEMM without a quantizing epilogue: the CPU "
                  "oracle computes plain GEMMs");
  // The kernel's rules, so that the CPU accepts what the GPU does.
  Expected<KernelSpec> spec = groupedGemmKernelSpec(
      r, shape, targetInfo(Arch::SM90a).smCount, std::nullopt);
  if (!spec)
    return spec.status();
  const bool masked = shape.kind == GemmKind::GroupedMasked;
  const bool alongK = shape.kind == GemmKind::GroupedK;
  const int64_t G = shape.groups, m = shape.m, n = shape.n, k = shape.k;
  const int64_t count = masked ? G : G + 1;
  FP8_RETURN_IF_ERROR(checkGroupValues(shape, t.groups, count));
  nm::GroupedRows rows;
  rows.kind = shape.kind;
  rows.groups.assign(t.groups, t.groups + count);
  // A: one tensor of every group's rows (contiguous, along K) or one slab
  // of max_m rows a group (masked); B: one [N, K] matrix a group (along K:
  // one for all). Group g's scales start g group strides in.
  const auto *a = static_cast<const uint8_t *>(t.a);
  const auto *sa = static_cast<const uint8_t *>(t.scaleA);
  const auto *b = static_cast<const uint8_t *>(t.b);
  const auto *sb = static_cast<const uint8_t *>(t.scaleB);
  const int64_t saBytes = scaleBytesOf(r.a.granularity);
  const int64_t sbBytes = scaleBytesOf(r.b.granularity);
  std::vector<nm::QuantizedTensor> as, bs;
  if (masked)
    for (int64_t g = 0; g < G; ++g)
      as.push_back(readQuantized(r.a.format, r.a.granularity, m, k,
                                 a + g * m * o.lda, o.lda,
                                 sa + g * o.groups.saStride * saBytes, o.sa));
  else
    as.push_back(readQuantized(r.a.format, r.a.granularity, o.ar, o.ac, a,
                               o.lda, sa, o.sa));
  for (int64_t g = 0; g < (alongK ? 1 : G); ++g)
    bs.push_back(readQuantized(r.b.format, r.b.granularity, n, k,
                               b + g * n * o.ldb, o.ldb,
                               sb + g * o.groups.sbStride * sbBytes, o.sb));
  const int64_t dRows = o.dRows;
  const std::vector<float> c = addendOf(r, dRows, n, t, o);
  nm::ReferenceGemmOptions options;
  options.promotionInterval = r.promotionInterval;
  Expected<std::vector<float>> d = nm::groupedReferenceGemm(
      rows, as, bs, 0.0f, options, r.accumulate ? c.data() : nullptr);
  if (!d)
    return d.status();
  // The rows the kernel writes: every group's (contiguous: up to the last
  // offset; masked: each slab's valid rows; along K: all of D).
  auto store = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j)
        storeWide(t.d, r.out, i * o.ldd + j, (*d)[size_t(i * n + j)]);
  };
  if (masked)
    for (int64_t g = 0; g < G; ++g)
      store(g * m, g * m + rows.groups[size_t(g)]);
  else
    store(0, alongK ? dRows : rows.groups.back());
  return Status::ok();
}

} // namespace fp8
