//===- PlanShapes.cpp - Concrete shapes and sizes of a plan ---------------===//

#include "runtime/plan/Plan.h"

#include <algorithm>
#include <limits>

namespace fp8 {

namespace {
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

/// a * b for non-negative a and b, saturating at INT64_MAX.
int64_t mulSaturating(int64_t a, int64_t b) {
  int64_t p;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p))
    return kSaturated;
  return p;
}

/// The shape of the amax of each matrix of `x` (a GEMM's D, a quantize's
/// input): one f32 a matrix, shaped as per-tensor scales are ([1, 1], or
/// [batch, 1, 1] for a stack).
Shape amaxShapeOf(const Shape &x) {
  return scaleShapeFor(x, Granularity::perTensor());
}
} // namespace

std::string formatDims(const DimValues &dims) {
  std::string s;
  for (const auto &[k, v] : dims)
    s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s.empty() ? "none" : s;
}

int64_t bytesOf(DType t, int64_t count) {
  return mulSaturating(sizeOf(t), count);
}

int64_t elementCount(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n = mulSaturating(n, d);
  return n;
}

int64_t addBytes(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return kSaturated;
  return sum;
}

Status checkBufferSize(const std::string &what, DType t, const Shape &s) {
  // The empty dimensions count as 1 here: a [2^32, 2^32, 0] buffer holds
  // nothing, but loops over its other dimensions would not end.
  Shape span;
  for (int64_t d : s)
    span.push_back(d == 0 ? 1 : d);
  const int64_t bytes = bytesOf(t, elementCount(span));
  if (bytes <= kMaxBufferBytes)
    return Status::ok();
  const bool empty = std::find(s.begin(), s.end(), 0) != s.end();
  return errorf("expected ", what, " (", toString(t), " ", formatShape(s),
                ") to hold at most 2^47 bytes (", kMaxBufferBytes, "), found ",
                bytes == kSaturated ? std::string("more than 2^63")
                                    : std::to_string(bytes),
                empty ? " (its empty dimensions counted as 1)" : "");
}

Expected<DimValues>
resolveDims(const Plan &plan,
            const std::vector<std::pair<std::string, int64_t>> &given) {
  DimValues out;
  for (const auto &[name, value] : given) {
    if (std::find(plan.dims.begin(), plan.dims.end(), name) ==
        plan.dims.end()) {
      std::string known;
      for (const std::string &d : plan.dims)
        known += (known.empty() ? "" : ", ") + d;
      return errorf("the plan has no dynamic dimension '", name, "' (it has ",
                    known.empty() ? std::string("none") : known, ")");
    }
    if (value < 0 || value >= kMaxDimSize)
      return errorf("expected the size of ", name,
                    " to be non-negative and below 2^40, found ", value);
    out[name] = value;
  }
  for (const std::string &d : plan.dims)
    if (!out.count(d))
      return errorf("the plan has a dynamic dimension ", d,
                    ": give its size with --dim ", d, "=<size>");
  return out;
}

Expected<Shape> resolveShape(const ShapeExpr &shape, const DimValues &dims) {
  Shape out;
  for (const DimExpr &d : shape) {
    if (d.isStatic()) {
      if (d.value < 0)
        return errorf("expected non-negative sizes, found ", d.value);
      out.push_back(d.value);
      continue;
    }
    auto it = dims.find(d.dim);
    if (it == dims.end())
      return errorf("no size for dimension '", d.dim, "'");
    const bool affine = d.scale != 1 || d.value != 0;
    if (it->second < 0 || d.divisor < 1 ||
        (affine && (it->second >= kMaxDimSize || d.scale < 1 ||
                    d.scale > DimExpr::kMaxScale || d.value < 0 ||
                    d.value > DimExpr::kMaxOffset)))
      return errorf("expected a non-negative size (below 2^40 when scaled "
                    "or offset), a positive divisor and scale and a "
                    "non-negative offset for ",
                    d.toString(), ", found ", d.dim, "=", it->second);
    // Below 2^61 by the limits above; ceil(size / divisor) without forming
    // size + divisor - 1.
    const int64_t size = affine ? d.scale * it->second + d.value : it->second;
    out.push_back(size / d.divisor + (size % d.divisor != 0));
  }
  return out;
}

namespace {
Status sameShape(const std::string &step, const std::string &what,
                 const std::string &name, const Shape &want,
                 const Shape &found) {
  if (want != found)
    return errorf("step '", step, "': expected ", what, " '", name,
                  "' to have shape ", formatShape(want), ", found ",
                  formatShape(found));
  return Status::ok();
}

/// The concrete shapes by name: a step's operands and a reference op's
/// values are among them (validatePlan checked that they exist).
using Shapes = std::map<std::string, Shape>;

/// The grid `x` without its last dimension: a row broadcast's shape, and a
/// reduce's row sums.
Shape rowsOf(const Shape &x) { return Shape(x.begin(), x.end() - 1); }

/// The shape program input `i` must have over the grid `x`.
Shape programInputShape(const EwProgram &p, size_t i, const Shape &x) {
  switch (p.broadcastOf(i)) {
  case EwBroadcast::Row:
    return rowsOf(x);
  case EwBroadcast::Col:
    return Shape{x.back()};
  case EwBroadcast::None:
    break;
  }
  return x;
}

/// The concrete shape of every buffer and reference value, each checked
/// against kMaxBufferBytes.
Status resolveValues(const Plan &plan, const DimValues &dims, ResolvedPlan &r) {
  // Every value's size is checked before any product of its dimensions is
  // used: a shape whose element count overflows int64_t (a static
  // [2^32, 2^32], or M = 2^52 rows) is refused here, naming the dims.
  for (const PlanBuffer &b : plan.buffers) {
    auto s = resolveShape(b.shape, dims);
    if (!s)
      return errorf("buffer '", b.name, "': ", s.message());
    if (Status st = checkBufferSize("buffer '" + b.name + "'", b.dtype, *s);
        !st)
      return errorf(st.message(), " (dims ", formatDims(dims), ")");
    r.shapes[b.name] = *s;
  }
  for (const RefOp &op : plan.reference) {
    auto s = resolveShape(op.shape, dims);
    if (!s)
      return errorf("reference value '", op.out, "': ", s.message());
    if (Status st =
            checkBufferSize("reference value '" + op.out + "'", op.dtype, *s);
        !st)
      return errorf(st.message(), " (dims ", formatDims(dims), ")");
    r.shapes[op.out] = *s;
  }
  return Status::ok();
}

/// The shapes of a quantize, elementwise or reduce step: the inputs alike
/// (or broadcast along input 0), the output (codes) like them (a reduce's
/// row sums: without the last dimension), and the scales of the
/// granularity.
Status checkProgramStep(const PlanStep &s, Shapes &shape) {
  const Shape &x = shape[s.inputs[0]];
  // An elementwise step may run over a vector (a norm's per-row values).
  const size_t minRank = s.kind == StepKind::Elementwise ? 1 : 2;
  if (x.size() < minRank || x.size() > 3)
    return errorf("step '", s.name, "': expected a rank-",
                  minRank == 1 ? "1, 2" : "2",
                  " or rank-3 "
                  "input, found ",
                  formatShape(x));
  const size_t tensors = programTensorInputs(s.aux);
  for (size_t i = 1; i < s.inputs.size() && i < tensors; ++i)
    FP8_RETURN_IF_ERROR(sameShape(s.name, "program input", s.inputs[i],
                                  programInputShape(s.aux.program, i, x),
                                  shape[s.inputs[i]]));
  if (s.kind == StepKind::Quantize && s.aux.amaxIn)
    FP8_RETURN_IF_ERROR(sameShape(s.name, "amax", s.inputs[tensors],
                                  amaxShapeOf(x), shape[s.inputs[tensors]]));
  if (s.kind == StepKind::Reduce)
    return sameShape(s.name, "row sums", s.outputs[0], rowsOf(x),
                     shape[s.outputs[0]]);
  if (s.kind != StepKind::Quantize)
    return sameShape(s.name, "output", s.outputs[0], x, shape[s.outputs[0]]);
  // (transposed: the codes and scales of the transpose fused in)
  const auto [codes, scales] = quantizeOutputShapes(s.aux, x);
  const bool t = s.aux.transposed;
  FP8_RETURN_IF_ERROR(sameShape(s.name, t ? "transposed codes" : "codes",
                                s.outputs[0], codes, shape[s.outputs[0]]));
  return sameShape(s.name, t ? "transposed scales" : "scales", s.outputs[1],
                   scales, shape[s.outputs[1]]);
}

/// The shapes of a transpose step: codes and scales in, the transposed
/// codes and scales out.
Status checkTransposeStep(const PlanStep &s, Shapes &shape) {
  const Shape &x = shape[s.inputs[0]];
  if (x.size() < 2 || x.size() > 3)
    return errorf("step '", s.name,
                  "': expected rank-2 or rank-3 codes, "
                  "found ",
                  formatShape(x));
  const Granularity &g = s.aux.quant.granularity;
  FP8_RETURN_IF_ERROR(sameShape(s.name, "scales", s.inputs[1],
                                scaleShapeFor(x, g), shape[s.inputs[1]]));
  Shape t = x;
  std::swap(t[t.size() - 1], t[t.size() - 2]);
  FP8_RETURN_IF_ERROR(sameShape(s.name, "transposed codes", s.outputs[0], t,
                                shape[s.outputs[0]]));
  FP8_RETURN_IF_ERROR(
      sameShape(s.name, "transposed scales", s.outputs[1],
                scaleShapeFor(t, Granularity::block(g.cols, g.rows, g.scale)),
                shape[s.outputs[1]]));
  return Status::ok();
}

/// The shapes of a GEMM step against its kernel spec: M, N and K, the
/// batch, the scales of both operands, C and D.
Status checkGemmStep(const PlanStep &s, Shapes &shape) {
  const KernelSpec &k = s.gemm;
  if (k.a.layout != Layout::KMajor || k.b.layout != Layout::KMajor)
    return errorf("step '", s.name,
                  "': expected K-major A and B (the "
                  "runtime's kernels read both K-major; fp8-verify-target "
                  "inserts the transposes), found A ",
                  toString(k.a.layout), " and B ", toString(k.b.layout));
  const Shape &a = shape[s.inputs[0]], &b = shape[s.inputs[2]];
  const size_t lead = s.batch > 1 ? 1 : 0;
  if (lead && (a[0] != s.batch || b[0] != s.batch))
    return errorf("step '", s.name, "': expected ", s.batch,
                  " stacked matrices in A and B, found ", formatShape(a),
                  " and ", formatShape(b));
  const int64_t m = a[lead], kk = a[lead + 1], n = b[lead];
  if (kk != k.k || b[lead + 1] != k.k || n != k.n)
    return errorf("step '", s.name, "': expected A [M, ", k.k, "] and B [", k.n,
                  ", ", k.k, "] for the kernel spec, found A ", formatShape(a),
                  " and B ", formatShape(b));
  if (k.m != kDynamic && m != k.m)
    return errorf("step '", s.name, "': expected M = ", k.m,
                  " (the kernel spec's), found ", m);
  Shape d = lead ? Shape{s.batch, m, n} : Shape{m, n};
  if (const std::optional<GemmEpilogue> &e = k.epilogue) {
    // The quantized result: codes [M, outCols] and their row blocks.
    const Shape q{m, e->outCols(n)};
    FP8_RETURN_IF_ERROR(
        sameShape(s.name, "codes", s.outputs[0], q, shape[s.outputs[0]]));
    FP8_RETURN_IF_ERROR(sameShape(s.name, "scales", s.outputs[1],
                                  scaleShapeFor(q, e->granularity),
                                  shape[s.outputs[1]]));
  } else {
    FP8_RETURN_IF_ERROR(
        sameShape(s.name, "D", s.outputs[0], d, shape[s.outputs[0]]));
    if (k.amaxOut)
      FP8_RETURN_IF_ERROR(sameShape(s.name, "D's amax", s.outputs[1],
                                    amaxShapeOf(d), shape[s.outputs[1]]));
  }
  FP8_RETURN_IF_ERROR(sameShape(s.name, "A's scales", s.inputs[1],
                                scaleShapeFor(a, k.a.granularity),
                                shape[s.inputs[1]]));
  FP8_RETURN_IF_ERROR(sameShape(s.name, "B's scales", s.inputs[3],
                                scaleShapeFor(b, k.b.granularity),
                                shape[s.inputs[3]]));
  if (k.accumulate)
    FP8_RETURN_IF_ERROR(
        sameShape(s.name, "C", s.inputs[4], d, shape[s.inputs[4]]));
  return Status::ok();
}

/// The shapes of a K-grouped GEMM: A [M, K], B [N, K] (K: every group's),
/// D [G, M, N]; offsets [G + 1] (PlanValidate checks their shape).
Status checkGroupedKStep(const PlanStep &s, Shapes &shape) {
  const KernelSpec &k = s.gemm;
  const Shape &a = shape[s.inputs[0]], &b = shape[s.inputs[2]];
  if (a.size() != 2 || b.size() != 2 || a[0] != k.m || b[0] != k.n ||
      a[1] != b[1])
    return errorf("step '", s.name, "': expected A [", k.m, ", K] and B [", k.n,
                  ", K] for the kernel spec, found A ", formatShape(a),
                  " and B ", formatShape(b));
  FP8_RETURN_IF_ERROR(sameShape(s.name, "D", s.outputs[0],
                                Shape{k.groups, k.m, k.n},
                                shape[s.outputs[0]]));
  FP8_RETURN_IF_ERROR(sameShape(s.name, "A's scales", s.inputs[1],
                                scaleShapeFor(a, k.a.granularity),
                                shape[s.inputs[1]]));
  return sameShape(s.name, "B's scales", s.inputs[3],
                   scaleShapeFor(b, k.b.granularity), shape[s.inputs[3]]);
}

/// The shapes of a grouped GEMM: contiguous, A [R, K] (every group's rows),
/// D [R, N]; masked, A [G, maxM, K], D [G, maxM, N]; B [G, N, K].
Status checkGroupedGemmStep(const PlanStep &s, Shapes &shape) {
  const KernelSpec &k = s.gemm;
  if (k.kind == GemmKind::GroupedK)
    return checkGroupedKStep(s, shape);
  const Shape &a = shape[s.inputs[0]], &b = shape[s.inputs[2]];
  const bool masked = k.kind == GemmKind::GroupedMasked;
  const size_t lead = masked ? 1 : 0;
  if (a.size() != 2 + lead || b.size() != 3 || a[lead + 1] != k.k ||
      (masked && a[0] != k.groups) || b[0] != k.groups || b[1] != k.n ||
      b[2] != k.k)
    return errorf("step '", s.name, "': expected A [",
                  masked ? std::to_string(k.groups) + ", maxM" : "M", ", ", k.k,
                  "] and B [", k.groups, ", ", k.n, ", ", k.k,
                  "] for the kernel spec, found A ", formatShape(a), " and B ",
                  formatShape(b));
  const Shape d = masked ? Shape{a[0], a[1], k.n} : Shape{a[0], k.n};
  FP8_RETURN_IF_ERROR(
      sameShape(s.name, "D", s.outputs[0], d, shape[s.outputs[0]]));
  FP8_RETURN_IF_ERROR(sameShape(s.name, "A's scales", s.inputs[1],
                                scaleShapeFor(a, k.a.granularity),
                                shape[s.inputs[1]]));
  return sameShape(s.name, "B's scales", s.inputs[3],
                   scaleShapeFor(b, k.b.granularity), shape[s.inputs[3]]);
}

/// The rows of an MoE layer's permuted tokens: every routing slot, and each
/// expert's group padded to a multiple of `align`.
int64_t permutedRows(const Shape &ids, int64_t experts, int64_t align) {
  return ids[0] * ids[1] + experts * (align - 1);
}

/// The shapes of a permute step: x [T, H] and ids [T, topK] in; the
/// permuted rows [R, H], their scales, offsets [E + 1], positions [T, topK]
/// and source [R] out.
Status checkPermuteStep(const PlanStep &s, Shapes &shape) {
  const Shape &x = shape[s.inputs[0]], &ids = shape[s.inputs[1]];
  if (x.size() != 2 || ids.size() != 2 || ids[0] != x[0])
    return errorf("step '", s.name,
                  "': expected x [T, H] and ids [T, topK], "
                  "found x ",
                  formatShape(x), " and ids ", formatShape(ids));
  const int64_t experts = shape[s.outputs[2]][0] - 1;
  const int64_t rows = permutedRows(ids, experts, s.align);
  const Shape codes{rows, x[1]};
  FP8_RETURN_IF_ERROR(sameShape(s.name, "permuted codes", s.outputs[0], codes,
                                shape[s.outputs[0]]));
  FP8_RETURN_IF_ERROR(sameShape(s.name, "scales", s.outputs[1],
                                scaleShapeFor(codes, s.aux.quant.granularity),
                                shape[s.outputs[1]]));
  FP8_RETURN_IF_ERROR(
      sameShape(s.name, "positions", s.outputs[3], ids, shape[s.outputs[3]]));
  return sameShape(s.name, "source rows", s.outputs[4], Shape{rows},
                   shape[s.outputs[4]]);
}

/// The shapes of an interleave step: a and b [R, C] (R a multiple of the
/// block) in, [2R, C] out.
Status checkInterleaveStep(const PlanStep &s, Shapes &shape) {
  const Shape &a = shape[s.inputs[0]];
  if (a.size() != 2 || a[0] % s.block != 0)
    return errorf("step '", s.name,
                  "': expected rows [R, C] with R a "
                  "multiple of the block (",
                  s.block, "), found ", formatShape(a));
  FP8_RETURN_IF_ERROR(
      sameShape(s.name, "second rows", s.inputs[1], a, shape[s.inputs[1]]));
  return sameShape(s.name, "interleaved rows", s.outputs[0],
                   Shape{2 * a[0], a[1]}, shape[s.outputs[0]]);
}

/// The shapes of an unpermute step: y [R, H], positions and weights
/// [T, topK] in, [T, H] out.
Status checkUnpermuteStep(const PlanStep &s, Shapes &shape) {
  const Shape &y = shape[s.inputs[0]], &pos = shape[s.inputs[1]];
  if (y.size() != 2 || pos.size() != 2)
    return errorf("step '", s.name,
                  "': expected y [R, H] and positions "
                  "[T, topK], found y ",
                  formatShape(y), " and positions ", formatShape(pos));
  FP8_RETURN_IF_ERROR(
      sameShape(s.name, "weights", s.inputs[2], pos, shape[s.inputs[2]]));
  return sameShape(s.name, "output", s.outputs[0], Shape{pos[0], y[1]},
                   shape[s.outputs[0]]);
}

/// The shapes of a masked reference grouped matmul: A [E, maxM, K], B
/// [E, N, K] (or [E, K, N]), valid rows [E], out [E, maxM, N].
Status checkMaskedReferenceOp(const RefOp &op, Shapes &shape) {
  const Shape &a = shape[op.inputs[0]], &b = shape[op.inputs[1]];
  const bool kMajor = op.bLayout == Layout::KMajor;
  if (a.size() != 3 || b.size() != 3 || a[0] != op.experts ||
      b[0] != op.experts || (kMajor ? b[2] : b[1]) != a[2] ||
      shape[op.inputs[2]] != Shape{op.experts})
    return errorf("reference grouped_matmul '", op.out, "': expected A [",
                  op.experts, ", maxM, K], B [", op.experts,
                  ", N, K] and valid rows [", op.experts, "], found ",
                  formatShape(a), ", ", formatShape(b), " and ",
                  formatShape(shape[op.inputs[2]]));
  const Shape want{a[0], a[1], kMajor ? b[1] : b[2]};
  if (want != shape[op.out])
    return errorf("reference grouped_matmul '", op.out, "': expected shape ",
                  formatShape(want), ", found ", formatShape(shape[op.out]));
  return Status::ok();
}

/// The shapes of a reference grouped matmul along K: A [R, M] and B [R, N]
/// as stored (or [M, R], [N, R] when k_major), offsets [E + 1], out
/// [E, M, N].
Status checkAlongKReferenceOp(const RefOp &op, Shapes &shape) {
  const Shape &a = shape[op.inputs[0]], &b = shape[op.inputs[1]];
  const bool aK = op.aLayout == Layout::KMajor;
  const bool bK = op.bLayout == Layout::KMajor;
  if (a.size() != 2 || b.size() != 2 ||
      (aK ? a[1] : a[0]) != (bK ? b[1] : b[0]) ||
      shape[op.inputs[2]] != Shape{op.experts + 1})
    return errorf("reference grouped_matmul '", op.out,
                  "': expected A [R, M], B [R, N] and offsets [",
                  op.experts + 1, "], found ", formatShape(a), ", ",
                  formatShape(b), " and ", formatShape(shape[op.inputs[2]]));
  const Shape want{op.experts, aK ? a[0] : a[1], bK ? b[0] : b[1]};
  if (want != shape[op.out])
    return errorf("reference grouped_matmul '", op.out, "': expected shape ",
                  formatShape(want), ", found ", formatShape(shape[op.out]));
  return Status::ok();
}

/// The shapes of an MoE reference op (RefOp's table).
Status checkMoeReferenceOp(const RefOp &op, Shapes &shape) {
  if (op.kind == RefOp::Kind::GroupedMatmul &&
      op.form == GemmKind::GroupedMasked)
    return checkMaskedReferenceOp(op, shape);
  if (op.kind == RefOp::Kind::GroupedMatmul && op.form == GemmKind::GroupedK)
    return checkAlongKReferenceOp(op, shape);
  const Shape &x = shape[op.inputs[0]];
  const Shape &ids =
      shape[op.inputs[op.kind == RefOp::Kind::GroupedMatmul ? 2 : 1]];
  if (ids.size() != 2 || x.size() != 2)
    return errorf("reference ", toString(op.kind), " '", op.out,
                  "': expected rank-2 rows and ids, found ", formatShape(x),
                  " and ", formatShape(ids));
  const int64_t rows = permutedRows(ids, op.experts, op.align);
  Shape want;
  if (op.kind == RefOp::Kind::Permute) {
    want = {rows, x[1]};
  } else if (op.kind == RefOp::Kind::Unpermute) {
    if (x[0] != rows || shape[op.inputs[2]] != ids)
      return errorf("reference unpermute '", op.out, "': expected y [", rows,
                    ", H] and weights shaped like ids ", formatShape(ids),
                    ", found ", formatShape(x), " and ",
                    formatShape(shape[op.inputs[2]]));
    want = {ids[0], x[1]};
  } else {
    const Shape &b = shape[op.inputs[1]];
    const bool kMajor = op.bLayout == Layout::KMajor;
    if (b.size() != 3 || b[0] != op.experts || x[0] != rows ||
        (kMajor ? b[2] : b[1]) != x[1])
      return errorf("reference grouped_matmul '", op.out, "': expected A [",
                    rows, ", K] and B [", op.experts, ", N, K], found ",
                    formatShape(x), " and ", formatShape(b));
    want = {rows, kMajor ? b[1] : b[2]};
  }
  if (want != shape[op.out])
    return errorf("reference ", toString(op.kind), " '", op.out,
                  "': expected shape ", formatShape(want), ", found ",
                  formatShape(shape[op.out]));
  return Status::ok();
}

/// The shapes of a reference op: an elementwise op's inputs have its
/// shape (or broadcast along it), a reduce's first input its shape with
/// the rows' length; a matmul's operands agree on K and give its shape.
Status checkReferenceOp(const RefOp &op, Shapes &shape) {
  if (op.kind != RefOp::Kind::Matmul && op.kind != RefOp::Kind::Elementwise &&
      op.kind != RefOp::Kind::Reduce)
    return checkMoeReferenceOp(op, shape);
  if (op.kind != RefOp::Kind::Matmul) {
    const Shape &x = shape[op.inputs[0]];
    if (x.size() < (op.kind == RefOp::Kind::Reduce ? 2u : 1u))
      return errorf("reference op '", op.out, "': expected input '",
                    op.inputs[0], "' to have rows, found shape ",
                    formatShape(x));
    const Shape want = op.kind == RefOp::Kind::Reduce ? rowsOf(x) : x;
    if (shape[op.out] != want)
      return errorf("reference op '", op.out, "': expected shape ",
                    formatShape(want), ", found ", formatShape(shape[op.out]));
    for (size_t i = 1; i < op.inputs.size(); ++i) {
      const Shape in = programInputShape(op.program, i, x);
      if (shape[op.inputs[i]] != in)
        return errorf("reference op '", op.out, "': expected input '",
                      op.inputs[i], "' to have shape ", formatShape(in),
                      ", found ", formatShape(shape[op.inputs[i]]));
    }
    return Status::ok();
  }
  const Shape &a = shape[op.inputs[0]], &b = shape[op.inputs[1]];
  const size_t lead = op.batched ? 1 : 0;
  if (a.size() != 2 + lead || b.size() != 2 + lead)
    return errorf("reference matmul '", op.out, "': expected rank-", 2 + lead,
                  " operands, found ", formatShape(a), " and ", formatShape(b));
  const int64_t m = op.aLayout == Layout::KMajor ? a[lead] : a[lead + 1];
  const int64_t ka = op.aLayout == Layout::KMajor ? a[lead + 1] : a[lead];
  const int64_t n = op.bLayout == Layout::KMajor ? b[lead] : b[lead + 1];
  const int64_t kb = op.bLayout == Layout::KMajor ? b[lead + 1] : b[lead];
  if (ka != kb)
    return errorf("reference matmul '", op.out, "': expected equal K, found ",
                  formatShape(a), " and ", formatShape(b));
  Shape d = lead ? Shape{a[0], m, n} : Shape{m, n};
  if (d != shape[op.out])
    return errorf("reference matmul '", op.out, "': expected shape ",
                  formatShape(d), ", found ", formatShape(shape[op.out]));
  return Status::ok();
}
} // namespace

Expected<ResolvedPlan> resolvePlan(const Plan &plan, const DimValues &dims) {
  ResolvedPlan r;
  r.dims = dims;
  FP8_RETURN_IF_ERROR(resolveValues(plan, dims, r));
  for (const PlanStep &s : plan.steps) {
    switch (s.kind) {
    case StepKind::Quantize:
    case StepKind::Elementwise:
    case StepKind::Reduce:
      FP8_RETURN_IF_ERROR(checkProgramStep(s, r.shapes));
      break;
    case StepKind::Transpose:
      FP8_RETURN_IF_ERROR(checkTransposeStep(s, r.shapes));
      break;
    case StepKind::Gemm:
      FP8_RETURN_IF_ERROR(s.gemm.kind != GemmKind::Dense
                              ? checkGroupedGemmStep(s, r.shapes)
                              : checkGemmStep(s, r.shapes));
      break;
    case StepKind::Permute:
      FP8_RETURN_IF_ERROR(checkPermuteStep(s, r.shapes));
      break;
    case StepKind::Unpermute:
      FP8_RETURN_IF_ERROR(checkUnpermuteStep(s, r.shapes));
      break;
    case StepKind::Interleave:
      FP8_RETURN_IF_ERROR(checkInterleaveStep(s, r.shapes));
      break;
    }
  }
  for (const RefOp &op : plan.reference)
    FP8_RETURN_IF_ERROR(checkReferenceOp(op, r.shapes));
  return r;
}

} // namespace fp8
