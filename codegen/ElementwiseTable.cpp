//===- ElementwiseTable.cpp - Which value a kernel looks up ---------------===//
//
// A program's value that depends on one bf16 input alone is one of 2^16
// values; when it goes through an exp, tanh or erf (tens of instructions an
// element: SwiGLU's silu, a GELU), the kernel computes it once per CTA into
// a table and looks it up (codegen/kernels/elementwise_table.cuh). This
// picks that value.
//
//===----------------------------------------------------------------------===//

#include "codegen/ElementwiseSource.h"

namespace fp8 {

namespace {
/// Issue slots an operation costs beyond a plain FP instruction, roughly
/// (fp8_math.h): the transcendentals' polynomials, the divisions' and
/// square roots' refinements and slow-path checks.
int extraCost(EwOp op) {
  switch (op) {
  case EwOp::Exp:
    return 24;
  case EwOp::Tanh:
    return 34;
  case EwOp::Erf:
    return 48;
  case EwOp::Div:
  case EwOp::Sqrt:
    return 10;
  case EwOp::Rsqrt:
    return 20;
  default:
    return 0;
  }
}

bool isTranscendental(EwOp op) {
  return op == EwOp::Exp || op == EwOp::Tanh || op == EwOp::Erf;
}
} // namespace

int tabulatedValue(const EwProgram &p, int param) {
  const size_t n = p.instrs.size();
  // Per instruction: the inputs it depends on (a bit each), whether its
  // cone holds a transcendental, and the cone's cost (an upper bound: a
  // shared operand counts once per use).
  std::vector<unsigned> deps(n, 0);
  std::vector<bool> costly(n, false);
  std::vector<int> cost(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const EwInstr &in = p.instrs[i];
    costly[i] = isTranscendental(in.op);
    cost[i] = 1 + extraCost(in.op);
    for (const EwArg &a : in.args) {
      if (a.kind == EwArg::Kind::Input) {
        deps[i] |= 1u << a.index;
      } else if (a.kind == EwArg::Kind::Value) {
        deps[i] |= deps[size_t(a.index)];
        costly[i] = costly[i] || costly[size_t(a.index)];
        cost[i] += cost[size_t(a.index)];
      }
    }
  }
  // The inputs a table can key on: bf16 (so 2^16 values), one per element
  // (not a broadcast: a row's value would repeat, not vary), read from
  // memory (not the row sum a row-sum quantize passes in).
  auto keyable = [&](unsigned mask) {
    if (mask == 0 || (mask & (mask - 1)) != 0)
      return false;
    int i = 0;
    while (!(mask & (1u << i)))
      ++i;
    return size_t(i) < p.inputs.size() && p.inputs[size_t(i)] == DType::BF16 &&
           p.broadcastOf(size_t(i)) == EwBroadcast::None && i != param;
  };
  // A candidate is maximal: the result, or read by an instruction that
  // depends on more than its input.
  std::vector<bool> escapes(n, false);
  if (p.result.kind == EwArg::Kind::Value)
    escapes[size_t(p.result.index)] = true;
  for (size_t i = 0; i < n; ++i)
    for (const EwArg &a : p.instrs[i].args)
      if (a.kind == EwArg::Kind::Value && deps[i] != deps[size_t(a.index)])
        escapes[size_t(a.index)] = true;
  int best = -1;
  for (size_t i = 0; i < n; ++i)
    if (costly[i] && escapes[i] && keyable(deps[i]) &&
        (best < 0 || cost[i] > cost[size_t(best)]))
      best = int(i);
  return best;
}

int tabulatedValue(const ElementwiseSpec &s) {
  // Only kernels whose CTAs stride over the tensor: their grid holds few
  // enough CTAs (Elementwise.cpp's launch rule) that each fills its table
  // once for many elements. The column path strides over block rows when
  // it has a table (its grid's rows capped). The others (a CTA per row or
  // per block) would fill it for a few dozen elements a thread, or not at
  // all and still hold its shared memory: the 128x1 SwiGLU quantize with a
  // CTA per 64 columns of each block row ran 0.0700 ms against 0.0591 with a
  // table (H200, 4096x4096, docs/results/h200-2026-12-01-silu-table/run1).
  const Granularity &g = s.quant.granularity;
  const bool perTensor = s.kind == AuxKind::Quantize &&
                         g.rows == Granularity::kWhole &&
                         g.cols == Granularity::kWhole;
  const bool strides = s.kind == AuxKind::Elementwise || perTensor ||
                       (quantizeUsesRowPath(s) && !s.rowSum) ||
                       quantizeUsesColumnPath(s);
  return strides ? tabulatedValue(s.program) : -1;
}

int tabulatedInput(const EwProgram &p, int value) {
  // (The first input the value's cone reads: its only one.)
  std::vector<int> input(p.instrs.size(), -1);
  for (size_t i = 0; i <= size_t(value); ++i)
    for (const EwArg &a : p.instrs[i].args)
      if (input[i] < 0 && a.kind == EwArg::Kind::Input)
        input[i] = a.index;
      else if (input[i] < 0 && a.kind == EwArg::Kind::Value)
        input[i] = input[size_t(a.index)];
  return input[size_t(value)];
}

} // namespace fp8
