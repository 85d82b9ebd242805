//===- PlanKernels.cpp - How a plan's elementwise steps are launched ------===//

#include "runtime/plan/PlanKernels.h"

#include <algorithm>
#include <cstdint>

namespace fp8 {

static_assert(fp8k::kMaxMoeExperts == kMaxMoeExperts,
              "the routing kernel's shared counters hold every expert");

bool auxParamsAligned(const ElementwiseSpec &spec, const fp8k::EwParams &p) {
  auto at = [](const void *q, uintptr_t bytes) {
    return reinterpret_cast<uintptr_t>(q) % bytes == 0;
  };
  const std::vector<bool> vectors = vectorInputs(spec);
  for (size_t i = 0; i < vectors.size() && i < size_t(fp8k::kMaxEwInputs); ++i)
    if (vectors[i] && !at(p.in[i], 16))
      return false;
  return at(p.out, 8);
}

std::vector<ElementwiseEntryLaunch> auxStepLaunches(const PlanStep &s,
                                                    const StepShapes &shapes,
                                                    int smCount,
                                                    const fp8k::EwParams &p) {
  const bool aligned = auxParamsAligned(s.aux, p);
  Geometry g = geometry(shapes.at(s.inputs[0]));
  const bool permute = s.kind == StepKind::Permute;
  if (s.kind == StepKind::Unpermute) // [T, H], the output's
    g = geometry(shapes.at(s.outputs[0]));
  const std::vector<std::string> entries = elementwiseEntries(s.aux);
  const std::string base = s.aux.kernelName();
  std::vector<ElementwiseEntryLaunch> out;
  for (size_t e = 0; e < entries.size(); ++e) {
    ElementwiseEntryLaunch l;
    l.kernel = entries.size() == 1 ? base : base + "_" + entries[e];
    l.entry = e;
    if (permute) { // the routing: per slot; the quantize: per token
      const Shape &ids = shapes.at(s.inputs[1]);
      g.batch = entries[e] == "quantize" ? ids[0] : ids[0] * ids[1];
    }
    l.launch =
        elementwiseLaunch(s.aux, e, g.batch, g.rows, g.cols, smCount, aligned);
    if (l.launch.grid[0] > 0) // (an entry for other shapes)
      out.push_back(l);
  }
  return out;
}

int64_t auxScratchBytes(const PlanStep &s, const StepShapes &shapes) {
  if (s.kind == StepKind::Permute) {
    const Shape &ids = shapes.at(s.inputs[1]);
    const int64_t experts = shapes.at(s.outputs[2])[0] - 1;
    return bytesOf(DType::I32,
                   fp8k::moe_route_chunks(ids[0] * ids[1]) * experts);
  }
  if (s.kind == StepKind::Quantize && !quantizeIsOnePass(s.aux))
    return bytesOf(DType::F32,
                   fp8k::amax_scratch_words(
                       elementCount(scaleShapeFor(shapes.at(s.inputs[0]),
                                                  s.aux.quant.granularity)),
                       quantizeScalesInCodesPass(s.aux)));
  return 0;
}

fp8k::EwParams
auxStepParams(const PlanStep &s, const StepShapes &shapes,
              const std::function<void *(const std::string &)> &address,
              void *scratch, void *scaleMirror, int64_t mirrorStrideRows,
              int64_t mirrorStrideCols) {
  const Geometry g = geometry(shapes.at(s.inputs[0]));
  fp8k::EwParams p{};
  if (s.kind == StepKind::Permute) {
    const Shape &ids = shapes.at(s.inputs[1]);
    p.in[0] = address(s.inputs[0]);
    p.in[1] = address(s.inputs[1]);
    p.in[2] = scratch;
    p.out = address(s.outputs[0]);
    p.scale = address(s.outputs[1]);
    p.amax = static_cast<fp8k::u32 *>(address(s.outputs[2]));
    p.history = address(s.outputs[3]);
    p.scaleMirror = address(s.outputs[4]);
    p.batch = ids[0];
    p.rows = shapes.at(s.outputs[0])[0];
    p.cols = g.cols;
    p.scaleRows = shapes.at(s.outputs[2])[0] - 1;
    p.scaleCols = s.aux.quant.granularity.scaleCols(g.cols);
    p.mirrorStrideRows = int(ids[1]);
    p.mirrorStrideCols = int(s.align);
    return p;
  }
  if (s.kind == StepKind::Unpermute) {
    const Shape &pos = shapes.at(s.inputs[1]);
    for (size_t i = 0; i < 3; ++i)
      p.in[i] = address(s.inputs[i]);
    p.out = address(s.outputs[0]);
    p.batch = 1;
    p.rows = pos[0];
    p.cols = g.cols;
    p.scaleRows = g.rows;
    p.mirrorStrideRows = int(pos[1]);
    return p;
  }
  p.batch = g.batch;
  p.rows = g.rows;
  p.cols = g.cols;
  if (s.kind == StepKind::Transpose) {
    p.in[0] = address(s.inputs[0]);
    p.scaleIn = address(s.inputs[1]);
    p.out = address(s.outputs[0]);
    p.scale = address(s.outputs[1]);
  } else {
    // (a quantize's given amax follows its program's inputs: not one)
    const size_t tensors =
        std::min(s.kind == StepKind::Quantize ? programTensorInputs(s.aux)
                                              : s.inputs.size(),
                 size_t(fp8k::kMaxEwInputs));
    for (size_t i = 0; i < s.inputs.size() && i < tensors; ++i)
      p.in[i] = address(s.inputs[i]);
    p.out = address(s.outputs[0]);
    if (s.kind == StepKind::Quantize) {
      p.scale = address(s.outputs[1]);
      if (s.aux.amaxIn) // (the input after the program's)
        p.scaleIn = address(s.inputs[programTensorInputs(s.aux)]);
      p.amax = static_cast<fp8k::u32 *>(scratch);
      if (!s.state.empty())
        p.history = address(s.state);
      p.scaleMirror = scaleMirror;
      p.mirrorStrideRows = scaleMirror ? int(mirrorStrideRows) : 0;
      p.mirrorStrideCols = scaleMirror ? int(mirrorStrideCols) : 0;
    }
  }
  // The scale grid of one input matrix (for a transpose, the input's); an
  // interleave's block of rows.
  p.scaleRows = s.aux.quant.granularity.scaleRows(g.rows);
  p.scaleCols = s.kind == StepKind::Interleave
                    ? s.block
                    : s.aux.quant.granularity.scaleCols(g.cols);
  return p;
}

} // namespace fp8
