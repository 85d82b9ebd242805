//===- DeepSeekPlan.h - A small DeepSeek-recipe plan for tests --*- C++ -*-===//
//
// The plan tests' fixture: x [M, k] quantized per 1x128 (run phase), w
// [n, k] per 128x128 (prepare phase), D = x w^T with promotion every 128,
// and its reference; plus the helpers that build such plans.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TEST_RUNTIME_DEEPSEEKPLAN_H
#define FP8_TEST_RUNTIME_DEEPSEEKPLAN_H

#include "runtime/plan/Plan.h"

#include <string>

namespace fp8::testplans {

inline PlanBuffer buffer(std::string name, DType t, ShapeExpr shape,
                         BufferRole r) {
  PlanBuffer b;
  b.name = std::move(name);
  b.dtype = t;
  b.shape = std::move(shape);
  b.role = r;
  return b;
}

inline DimExpr M(int64_t div = 1) { return DimExpr::symbol("M", div); }
inline DimExpr C(int64_t v) { return DimExpr::constant(v); }

inline ElementwiseSpec quantizeSpec(Granularity g) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = EwProgram::identity(DType::BF16);
  s.quant.granularity = g;
  return s;
}

/// Steps quantize_x (0), quantize_w (1, prepare) and gemm (2); n and k are
/// multiples of 128.
inline Plan deepseekPlan(const std::string &function, int64_t n, int64_t k) {
  Plan p;
  p.function = function;
  p.dims = {"M"};
  p.buffers = {
      buffer("x", DType::BF16, {M(), C(k)}, BufferRole::Input),
      buffer("w", DType::BF16, {C(n), C(k)}, BufferRole::Weight),
      buffer("xq", DType::E4M3FN, {M(), C(k)}, BufferRole::Temp),
      buffer("xs", DType::F32, {M(), C(k / 128)}, BufferRole::Temp),
      buffer("wq", DType::E4M3FN, {C(n), C(k)}, BufferRole::Temp),
      buffer("ws", DType::F32, {C(n / 128), C(k / 128)}, BufferRole::Temp),
      buffer("d", DType::BF16, {M(), C(n)}, BufferRole::Output),
  };
  PlanStep qx;
  qx.name = "quantize_x";
  qx.kind = StepKind::Quantize;
  qx.inputs = {"x"};
  qx.outputs = {"xq", "xs"};
  qx.aux = quantizeSpec(Granularity::block(1, 128));
  PlanStep qw = qx;
  qw.name = "quantize_w";
  qw.phase = Phase::Prepare;
  qw.inputs = {"w"};
  qw.outputs = {"wq", "ws"};
  qw.aux = quantizeSpec(Granularity::block(128, 128));
  PlanStep g;
  g.name = "gemm";
  g.kind = StepKind::Gemm;
  g.inputs = {"xq", "xs", "wq", "ws"};
  g.outputs = {"d"};
  g.gemm.n = n;
  g.gemm.k = k;
  g.gemm.a.granularity = Granularity::block(1, 128);
  g.gemm.b.granularity = Granularity::block(128, 128);
  g.gemm.promotionInterval = 128;
  p.steps = {qx, qw, g};
  p.outputs = {"d"};
  RefOp r;
  r.kind = RefOp::Kind::Matmul;
  r.inputs = {"x", "w"};
  r.out = "d";
  r.shape = {M(), C(n)};
  p.reference = {r};
  return p;
}

} // namespace fp8::testplans

#endif // FP8_TEST_RUNTIME_DEEPSEEKPLAN_H
