//===- PlanScaleMirror.cpp - 1x128 scales in the GEMM's TMA layout --------===//

#include "runtime/PlanScaleMirror.h"

namespace fp8 {

namespace {
/// One scale per row and 128-element K block, stored as f32.
bool isRowKBlockF32(const Granularity &g) {
  return g.rows == 1 && g.cols == 128 && g.scale != ScaleFormat::UE8M0;
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
} // namespace

std::optional<size_t> mirroredAScaleWriter(const Plan &plan,
                                           const ResolvedPlan &shapes,
                                           size_t gemm) {
  if (gemm >= plan.steps.size())
    return std::nullopt;
  const PlanStep &g = plan.steps[gemm];
  if (g.kind != StepKind::Gemm || g.batch != 1 || g.inputs.size() < 2 ||
      g.gemm.arch != Arch::SM90a || g.gemm.a.layout != Layout::KMajor ||
      !isRowKBlockF32(g.gemm.a.granularity))
    return std::nullopt;
  const std::optional<Geometry> a = geometryOf(shapes, g.inputs[0]);
  if (!a || a->batch != 1 || a->rows <= 0 || a->cols <= 0)
    return std::nullopt;
  const std::string &scales = g.inputs[1];
  const PlanBuffer *b = plan.buffer(scales);
  if (!b || (b->role != BufferRole::Temp && b->role != BufferRole::Output) ||
      b->dtype != DType::F32)
    return std::nullopt;

  // Exactly one writer, and it is a quantize step producing these scales.
  std::optional<size_t> writer;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    bool writes = s.state == scales;
    for (const std::string &o : s.outputs)
      writes |= o == scales;
    if (!writes)
      continue;
    if (writer)
      return std::nullopt;
    writer = i;
  }
  if (!writer)
    return std::nullopt;
  const PlanStep &q = plan.steps[*writer];
  if (q.kind != StepKind::Quantize || q.outputs.size() != 2 ||
      q.outputs[1] != scales || q.inputs.empty() ||
      q.aux.kind != AuxKind::Quantize ||
      !(q.aux.quant.granularity == g.gemm.a.granularity) ||
      !runsBefore(plan, *writer, gemm))
    return std::nullopt;
  const std::optional<Geometry> x = geometryOf(shapes, q.inputs[0]);
  if (!x || x->batch != 1 || x->rows != a->rows || x->cols != a->cols)
    return std::nullopt;
  return writer;
}

ScaleMirrorPlan planScaleMirrors(const Plan &plan, const ResolvedPlan &shapes) {
  ScaleMirrorPlan out;
  out.mirrorOf.assign(plan.steps.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const std::optional<size_t> w = mirroredAScaleWriter(plan, shapes, i);
    if (!w)
      continue;
    if (out.mirrorOf[*w] < 0) {
      const PlanStep &q = plan.steps[*w];
      const Geometry x = geometry(shapes.shapes.at(q.inputs[0]));
      const Granularity &gr = q.aux.quant.granularity;
      ScaleMirror m;
      m.writer = *w;
      m.scales = q.outputs[1];
      m.rows = gr.scaleRows(x.rows);
      m.kBlocks = gr.scaleCols(x.cols);
      m.pitch = (m.rows + 3) / 4 * 4;
      out.mirrorOf[*w] = int(out.mirrors.size());
      out.mirrors.push_back(m);
    }
    out.mirrorOf[i] = out.mirrorOf[*w];
  }
  return out;
}

AScaleSource aScaleSource(const ScaleMirrorPlan &mirrors, size_t gemm) {
  AScaleSource src;
  if (gemm >= mirrors.mirrorOf.size() || mirrors.mirrorOf[gemm] < 0 ||
      mirrors.mirrors[size_t(mirrors.mirrorOf[gemm])].writer == gemm)
    return src;
  src.mirror = mirrors.mirrorOf[gemm];
  src.ldOuter = 1;
  src.ldK = mirrors.mirrors[size_t(src.mirror)].pitch;
  return src;
}

} // namespace fp8
