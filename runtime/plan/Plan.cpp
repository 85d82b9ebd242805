//===- Plan.cpp - A compiled model graph: names and lookups ---------------===//

#include "runtime/plan/Plan.h"

namespace fp8 {

std::string DimExpr::toString() const {
  if (isStatic())
    return std::to_string(value);
  std::string affine = scale == 1 ? dim : std::to_string(scale) + "*" + dim;
  if (value != 0)
    affine += "+" + std::to_string(value);
  if (divisor == 1)
    return affine;
  return "ceildiv(" + affine + "," + std::to_string(divisor) + ")";
}

std::string_view toString(BufferRole r) {
  switch (r) {
  case BufferRole::Input:
    return "input";
  case BufferRole::Weight:
    return "weight";
  case BufferRole::Constant:
    return "constant";
  case BufferRole::State:
    return "state";
  case BufferRole::Temp:
    return "temp";
  case BufferRole::Output:
    return "output";
  }
  return "?";
}

std::string_view toString(StepKind k) {
  switch (k) {
  case StepKind::Quantize:
    return "quantize";
  case StepKind::Transpose:
    return "transpose";
  case StepKind::Elementwise:
    return "elementwise";
  case StepKind::Gemm:
    return "gemm";
  case StepKind::Permute:
    return "permute";
  case StepKind::Unpermute:
    return "unpermute";
  case StepKind::Reduce:
    return "reduce";
  case StepKind::Interleave:
    return "interleave";
  }
  return "?";
}

std::string_view toString(RefOp::Kind k) {
  switch (k) {
  case RefOp::Kind::Matmul:
    return "matmul";
  case RefOp::Kind::Elementwise:
    return "elementwise";
  case RefOp::Kind::Permute:
    return "permute";
  case RefOp::Kind::GroupedMatmul:
    return "grouped_matmul";
  case RefOp::Kind::Unpermute:
    return "unpermute";
  case RefOp::Kind::Reduce:
    return "reduce";
  }
  return "?";
}

AuxKind auxKindOf(StepKind k) {
  switch (k) {
  case StepKind::Quantize:
    return AuxKind::Quantize;
  case StepKind::Transpose:
    return AuxKind::Transpose;
  case StepKind::Permute:
    return AuxKind::Permute;
  case StepKind::Unpermute:
    return AuxKind::Unpermute;
  case StepKind::Reduce:
    return AuxKind::Reduce;
  case StepKind::Interleave:
    return AuxKind::Interleave;
  default:
    return AuxKind::Elementwise;
  }
}

std::string_view toString(Phase p) {
  return p == Phase::Prepare ? "prepare" : "run";
}

std::string PlanStep::kernelName() const {
  return kind == StepKind::Gemm ? gemm.kernelName() : aux.kernelName();
}

const PlanBuffer *Plan::buffer(const std::string &name) const {
  for (const PlanBuffer &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

std::vector<size_t> Plan::stepsOf(Phase p) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].phase == p)
      out.push_back(i);
  return out;
}

const RefOp *Plan::referenceOp(const std::string &name) const {
  for (const RefOp &r : reference)
    if (r.out == name)
      return &r;
  return nullptr;
}

} // namespace fp8
