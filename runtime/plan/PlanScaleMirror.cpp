//===- PlanScaleMirror.cpp - GEMM scales in their TMA layout --------------===//

#include "runtime/plan/PlanScaleMirror.h"

#include <cstdint>

namespace fp8 {

namespace {
int64_t pad4(int64_t n) { return (n + 3) / 4 * 4; }

/// EwParams carries the mirror's strides as 32-bit ints.
bool fitsAStride(int64_t n) { return pad4(n) <= INT32_MAX; }

/// One scale per row and 128-element K block, stored as f32.
bool isRowKBlockF32(const Granularity &g) {
  return g.rows == 1 && g.cols == 128 && g.scale != ScaleFormat::UE8M0;
}

/// Blocks of several rows and whole 128-element K blocks, stored as f32:
/// the B scales the sm_90a kernel can take by TMA (sm90ScaleBlocksB).
bool isBlockKBlockF32(const Granularity &g) {
  return g.rows > 1 && g.cols > 0 && g.cols % 128 == 0 &&
         g.scale != ScaleFormat::UE8M0;
}

/// True when step `w` has run whenever step `g` runs.
bool runsBefore(const Plan &plan, size_t w, size_t g) {
  const Phase pw = plan.steps[w].phase, pg = plan.steps[g].phase;
  if (pw == pg)
    return w < g;
  return pw == Phase::Prepare && pg == Phase::Run;
}

std::optional<Geometry> geometryOf(const ResolvedPlan &shapes,
                                   const std::string &name) {
  auto it = shapes.shapes.find(name);
  if (it == shapes.shapes.end() || it->second.size() < 2 ||
      it->second.size() > 3)
    return std::nullopt;
  return geometry(it->second);
}

/// The GEMM step `gemm` when it is a batch-1 sm_90a GEMM whose operand
/// (`isA`: A, else B) is K-major with scales of granularity `accepts`.
const PlanStep *mirrorableGemm(const Plan &plan, size_t gemm, bool isA,
                               bool (*accepts)(const Granularity &)) {
  if (gemm >= plan.steps.size())
    return nullptr;
  const PlanStep &g = plan.steps[gemm];
  const OperandSpec &o = isA ? g.gemm.a : g.gemm.b;
  // NOTE: grouped GEMMs read their scales as written (their A scales come
  // from a permute step, which writes no mirror).
  if (g.kind != StepKind::Gemm || g.batch != 1 ||
      g.gemm.kind != GemmKind::Dense || g.inputs.size() < (isA ? 2u : 4u) ||
      g.gemm.arch != Arch::SM90a || o.layout != Layout::KMajor ||
      !accepts(o.granularity))
    return nullptr;
  return &g;
}

/// The step that alone writes buffer `name`, if one does.
std::optional<size_t> soleWriter(const Plan &plan, const std::string &name) {
  std::optional<size_t> writer;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    bool writes = s.state == name;
    for (const std::string &o : s.outputs)
      writes |= o == name;
    if (!writes)
      continue;
    if (writer)
      return std::nullopt;
    writer = i;
  }
  return writer;
}

/// True when step `s` quantizes: a quantize step, or a GEMM whose epilogue
/// quantizes its result (both write codes, then scales).
bool quantizes(const PlanStep &s) {
  return (s.kind == StepKind::Quantize && s.aux.kind == AuxKind::Quantize) ||
         (s.kind == StepKind::Gemm && s.gemm.epilogue);
}

/// The granularity of the scales a quantizing step writes (over its codes:
/// a transposed quantize's R x 1 blocks are 1 x R there).
Granularity writtenGranularity(const PlanStep &s) {
  if (s.kind == StepKind::Gemm)
    return s.gemm.epilogue->granularity;
  const Granularity &g = s.aux.quant.granularity;
  return s.aux.transposed ? Granularity::block(g.cols, g.rows, g.scale) : g;
}

/// The quantizing step (a quantize step, or a GEMM with a quantizing
/// epilogue) that alone writes the f32 scales `scales` (a temp or output
/// buffer) of one [operand.rows, operand.cols] matrix, per granularity
/// `gr`, before step `gemm` runs.
std::optional<size_t> soleQuantizeWriter(const Plan &plan,
                                         const ResolvedPlan &shapes,
                                         size_t gemm, const std::string &scales,
                                         const Granularity &gr,
                                         const Geometry &operand) {
  const PlanBuffer *b = plan.buffer(scales);
  if (!b || (b->role != BufferRole::Temp && b->role != BufferRole::Output) ||
      b->dtype != DType::F32)
    return std::nullopt;
  const std::optional<size_t> writer = soleWriter(plan, scales);
  if (!writer)
    return std::nullopt;
  const PlanStep &q = plan.steps[*writer];
  if (!quantizes(q) || q.outputs.size() != 2 || q.outputs[1] != scales ||
      q.inputs.empty() || !(writtenGranularity(q) == gr) ||
      !runsBefore(plan, *writer, gemm))
    return std::nullopt;
  const std::optional<Geometry> x = geometryOf(shapes, q.outputs[0]);
  if (!x || x->batch != 1 || x->rows != operand.rows || x->cols != operand.cols)
    return std::nullopt;
  return writer;
}

/// The K-major operand `name` as one non-empty [rows, cols] matrix.
std::optional<Geometry> singleMatrix(const ResolvedPlan &shapes,
                                     const std::string &name) {
  const std::optional<Geometry> x = geometryOf(shapes, name);
  if (!x || x->batch != 1 || x->rows <= 0 || x->cols <= 0)
    return std::nullopt;
  return x;
}

/// A GEMM step's operand with 1 x 128 f32 scales along K: the step, its
/// operand spec, the indices of its codes and scales among the step's
/// inputs, and the codes as one [rows, K] matrix.
struct RowKBlockOperand {
  const PlanStep &gemm;
  const OperandSpec &spec;
  size_t data, scales;
  Geometry matrix;
};

/// The operand (`isA`: A, else B) of GEMM step `gemm` when the step is an
/// sm_90a GEMM of one [M, K] A and one [N, K] B (a batch-1 dense GEMM or a
/// K-grouped one) and the operand is K-major with 1 x 128 f32 scales.
std::optional<RowKBlockOperand> rowKBlockOperand(const Plan &plan,
                                                 const ResolvedPlan &shapes,
                                                 size_t gemm, bool isA) {
  if (gemm >= plan.steps.size())
    return std::nullopt;
  const PlanStep &g = plan.steps[gemm];
  const OperandSpec &o = isA ? g.gemm.a : g.gemm.b;
  const size_t data = isA ? 0 : 2, scales = data + 1;
  if (g.kind != StepKind::Gemm || g.batch != 1 ||
      (g.gemm.kind != GemmKind::Dense && g.gemm.kind != GemmKind::GroupedK) ||
      g.inputs.size() <= scales || g.gemm.arch != Arch::SM90a ||
      o.layout != Layout::KMajor || !isRowKBlockF32(o.granularity))
    return std::nullopt;
  const std::optional<Geometry> m = singleMatrix(shapes, g.inputs[data]);
  if (!m)
    return std::nullopt;
  return RowKBlockOperand{g, o, data, scales, *m};
}
} // namespace

std::optional<size_t> mirroredAScaleWriter(const Plan &plan,
                                           const ResolvedPlan &shapes,
                                           size_t gemm) {
  const PlanStep *g = mirrorableGemm(plan, gemm, true, isRowKBlockF32);
  if (!g)
    return std::nullopt;
  const std::optional<Geometry> a = singleMatrix(shapes, g->inputs[0]);
  if (!a || !fitsAStride(a->rows))
    return std::nullopt;
  return soleQuantizeWriter(plan, shapes, gemm, g->inputs[1],
                            g->gemm.a.granularity, *a);
}

std::optional<size_t> mirroredBScaleWriter(const Plan &plan,
                                           const ResolvedPlan &shapes,
                                           size_t gemm) {
  const PlanStep *g = mirrorableGemm(plan, gemm, false, isBlockKBlockF32);
  if (!g)
    return std::nullopt;
  const std::optional<Geometry> b = singleMatrix(shapes, g->inputs[2]);
  const Granularity &gr = g->gemm.b.granularity;
  // NOTE: the TMA's global strides must be multiples of 16 bytes (PTX ISA,
  // "Tensor Map"); one row of scales has no stride that matters.
  if (!b || gr.scaleRows(b->rows) < 2 || gr.scaleCols(b->cols) % 4 == 0 ||
      !fitsAStride(gr.scaleCols(b->cols)))
    return std::nullopt;
  return soleQuantizeWriter(plan, shapes, gemm, g->inputs[3], gr, *b);
}

std::optional<size_t> transposedQuantizeWriter(const Plan &plan,
                                               const ResolvedPlan &shapes,
                                               size_t gemm, bool isA) {
  const std::optional<RowKBlockOperand> op =
      rowKBlockOperand(plan, shapes, gemm, isA);
  if (!op || !fitsAStride(op->matrix.rows))
    return std::nullopt;
  const std::optional<size_t> w =
      soleQuantizeWriter(plan, shapes, gemm, op->gemm.inputs[op->scales],
                         op->spec.granularity, op->matrix);
  if (!w || plan.steps[*w].kind != StepKind::Quantize ||
      !plan.steps[*w].aux.transposed)
    return std::nullopt;
  return w;
}

std::optional<UntransposedScales> untransposedScales(const Plan &plan,
                                                     const ResolvedPlan &shapes,
                                                     size_t gemm, bool isA) {
  const std::optional<RowKBlockOperand> op =
      rowKBlockOperand(plan, shapes, gemm, isA);
  if (!op)
    return std::nullopt;
  const PlanStep &g = op->gemm;
  const OperandSpec &o = op->spec;
  const size_t scales = op->scales;
  const Geometry &m = op->matrix;
  if ((isA && m.rows % 4 != 0) || !plan.buffer(g.inputs[scales]) ||
      plan.buffer(g.inputs[scales])->dtype != DType::F32)
    return std::nullopt;
  const std::optional<size_t> t = soleWriter(plan, g.inputs[scales]);
  if (!t || !runsBefore(plan, *t, gemm))
    return std::nullopt;
  const PlanStep &tr = plan.steps[*t];
  if (tr.kind != StepKind::Transpose || tr.inputs.size() != 2 ||
      tr.outputs.size() != 2 || tr.outputs[1] != g.inputs[scales] ||
      !(tr.aux.quant.granularity ==
        Granularity::block(128, 1, o.granularity.scale)))
    return std::nullopt;
  const std::optional<Geometry> x = singleMatrix(shapes, tr.inputs[0]);
  if (!x || x->rows != m.cols || x->cols != m.rows)
    return std::nullopt;
  const std::optional<size_t> w = soleWriter(plan, tr.inputs[1]);
  if (!w || !runsBefore(plan, *w, *t))
    return std::nullopt;
  return UntransposedScales{tr.inputs[1], m.rows};
}

ScaleMirrorPlan planScaleMirrors(const Plan &plan, const ResolvedPlan &shapes) {
  ScaleMirrorPlan out;
  out.writes.assign(plan.steps.size(), -1);
  out.readsA.assign(plan.steps.size(), -1);
  out.readsB.assign(plan.steps.size(), -1);
  out.untransposedA.assign(plan.steps.size(), UntransposedScales{});
  out.untransposedB.assign(plan.steps.size(), UntransposedScales{});
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (bool isA : {true, false})
      if (std::optional<UntransposedScales> u =
              untransposedScales(plan, shapes, i, isA))
        (isA ? out.untransposedA : out.untransposedB)[i] = *u;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (bool isA : {true, false}) {
      // The layout the GEMM takes: [K blocks][rows] (A's 1 x 128 scales,
      // and any operand's from a transposed quantize), or B's [rows][K
      // blocks] with a 16-byte pitch.
      std::optional<size_t> w = transposedQuantizeWriter(plan, shapes, i, isA);
      const bool kBlocksOuter = isA || w.has_value();
      if (!w)
        w = isA ? mirroredAScaleWriter(plan, shapes, i)
                : mirroredBScaleWriter(plan, shapes, i);
      if (!w)
        continue;
      if (out.writes[*w] < 0) {
        const PlanStep &q = plan.steps[*w];
        const Geometry x = geometry(shapes.shapes.at(q.outputs[0]));
        const Granularity &gr = writtenGranularity(q);
        ScaleMirror m;
        m.writer = *w;
        m.scales = q.outputs[1];
        m.rows = gr.scaleRows(x.rows);
        m.kBlocks = gr.scaleCols(x.cols);
        m.strideRows = kBlocksOuter ? 1 : pad4(m.kBlocks);
        m.strideCols = kBlocksOuter ? pad4(m.rows) : 1;
        out.writes[*w] = int(out.mirrors.size());
        out.mirrors.push_back(m);
      }
      // One step's scales cannot feed both rules (A's are 1 x K-block, B's
      // several rows per block, and the writer's granularity must match),
      // but a mirror of the other layout is never handed out.
      if (out.mirrors[size_t(out.writes[*w])].transposed() != kBlocksOuter)
        continue;
      (isA ? out.readsA : out.readsB)[i] = out.writes[*w];
    }
  return out;
}

ScaleSource scaleSource(const ScaleMirrorPlan &mirrors, size_t gemm, bool isA) {
  ScaleSource src;
  const std::vector<UntransposedScales> &before =
      isA ? mirrors.untransposedA : mirrors.untransposedB;
  if (gemm < before.size() && !before[gemm].buffer.empty()) {
    src.buffer = before[gemm].buffer;
    src.ldOuter = 1;
    src.ldK = before[gemm].pitch;
    return src;
  }
  const std::vector<int> &reads = isA ? mirrors.readsA : mirrors.readsB;
  if (gemm >= reads.size() || reads[gemm] < 0)
    return src;
  const ScaleMirror &m = mirrors.mirrors[size_t(reads[gemm])];
  src.mirror = reads[gemm];
  src.ldOuter = m.strideRows;
  src.ldK = m.strideCols;
  return src;
}

} // namespace fp8
