//===- PlanKernels.cpp - How a plan's elementwise steps are launched ------===//

#include "runtime/plan/PlanKernels.h"

namespace fp8 {

std::vector<AuxStepLaunch> auxStepLaunches(const PlanStep &s,
                                           const Shape &input, int smCount) {
  const Geometry g = geometry(input);
  const std::vector<std::string> entries = elementwiseEntries(s.aux);
  const std::string base = s.aux.kernelName();
  std::vector<AuxStepLaunch> out;
  for (size_t e = 0; e < entries.size(); ++e) {
    AuxStepLaunch l;
    l.kernel = entries.size() == 1 ? base : base + "_" + entries[e];
    l.entry = e;
    l.launch = elementwiseLaunch(s.aux, e, g.batch, g.rows, g.cols, smCount);
    out.push_back(l);
  }
  return out;
}

fp8k::EwParams
auxStepParams(const PlanStep &s, const Shape &input,
              const std::function<void *(const std::string &)> &address,
              void *amax, void *scaleMirror, int64_t mirrorStrideRows,
              int64_t mirrorStrideCols) {
  const Geometry g = geometry(input);
  fp8k::EwParams p{};
  p.batch = g.batch;
  p.rows = g.rows;
  p.cols = g.cols;
  if (s.kind == StepKind::Transpose) {
    p.in[0] = address(s.inputs[0]);
    p.scaleIn = address(s.inputs[1]);
    p.out = address(s.outputs[0]);
    p.scale = address(s.outputs[1]);
  } else {
    for (size_t i = 0; i < s.inputs.size() && i < size_t(fp8k::kMaxEwInputs);
         ++i)
      p.in[i] = address(s.inputs[i]);
    p.out = address(s.outputs[0]);
    if (s.kind == StepKind::Quantize) {
      p.scale = address(s.outputs[1]);
      p.amax = static_cast<fp8k::u32 *>(amax);
      if (!s.state.empty())
        p.history = address(s.state);
      p.scaleMirror = scaleMirror;
      p.mirrorStrideRows = scaleMirror ? int(mirrorStrideRows) : 0;
      p.mirrorStrideCols = scaleMirror ? int(mirrorStrideCols) : 0;
    }
  }
  // The scale grid of one input matrix (for a transpose, the input's).
  p.scaleRows = s.aux.quant.granularity.scaleRows(g.rows);
  p.scaleCols = s.aux.quant.granularity.scaleCols(g.cols);
  return p;
}

} // namespace fp8
