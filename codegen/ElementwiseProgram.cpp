//===- ElementwiseProgram.cpp - Programs: evaluation, the row-sum order --===//

#include "codegen/Elementwise.h"

#include "codegen/kernels/elementwise_params.h"
#include "codegen/kernels/fp8_functions.h"

#include <cstdint>
#include <cstring>
#include <optional>

namespace fp8 {

namespace {
float apply(EwOp op, const float *a) {
  switch (op) {
  case EwOp::Add:
    return fp8k::add(a[0], a[1]);
  case EwOp::Sub:
    return fp8k::sub(a[0], a[1]);
  case EwOp::Mul:
    return fp8k::mul(a[0], a[1]);
  case EwOp::Div:
    return fp8k::div(a[0], a[1]);
  case EwOp::Fma:
    return fp8k::fma(a[0], a[1], a[2]);
  case EwOp::Neg:
    return fp8k::neg(a[0]);
  case EwOp::Abs:
    return fp8k::abs(a[0]);
  case EwOp::Maximum:
    return fp8k::maximum(a[0], a[1]);
  case EwOp::Minimum:
    return fp8k::minimum(a[0], a[1]);
  case EwOp::MaxNum:
    return fp8k::maxnum(a[0], a[1]);
  case EwOp::MinNum:
    return fp8k::minnum(a[0], a[1]);
  case EwOp::Exp:
    return fp8k::exp(a[0]);
  case EwOp::Tanh:
    return fp8k::tanh(a[0]);
  case EwOp::Erf:
    return fp8k::erf(a[0]);
  case EwOp::Sqrt:
    return fp8k::sqrt(a[0]);
  case EwOp::Rsqrt:
    return fp8k::rsqrt(a[0]);
  case EwOp::Convert:
    return a[0];
  }
  return a[0];
}
} // namespace

float evalProgram(const EwProgram &p, const float *in) {
  // Programs are short: a small stack buffer covers them.
  float small[32];
  std::vector<float> big;
  float *v = small;
  if (p.instrs.size() > 32) {
    big.resize(p.instrs.size());
    v = big.data();
  }
  auto get = [&](const EwArg &a) {
    switch (a.kind) {
    case EwArg::Kind::Input:
      return in[a.index];
    case EwArg::Kind::Value:
      return v[a.index];
    case EwArg::Kind::Constant:
      return a.value;
    }
    return 0.0f;
  };
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const EwInstr &ins = p.instrs[i];
    float args[3] = {0, 0, 0};
    for (size_t j = 0; j < ins.args.size() && j < 3; ++j)
      args[j] = get(ins.args[j]);
    v[i] = fp8k::round_to(apply(ins.op, args), int(ins.type));
  }
  return get(p.result);
}

std::vector<float> evalEpilogue(const GemmEpilogue &e, DType gemmOut,
                                const float *d, int64_t rows, int64_t n) {
  const int64_t cols = e.outCols(n), pb = e.pairBlock;
  std::vector<float> out(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      // Column c of the result: column c, or the pair of block c / pb.
      const int64_t src = pb > 0 ? (c / pb) * 2 * pb + c % pb : c;
      float in[2] = {fp8k::round_to(d[r * n + src], int(gemmOut)), 0.0f};
      if (pb > 0)
        in[1] = fp8k::round_to(d[r * n + src + pb], int(gemmOut));
      out[size_t(r * cols + c)] = evalProgram(e.program, in);
    }
  return out;
}

float reduceRow(const float *v, int64_t n) {
  constexpr int kThreads = fp8k::kReduceThreads, kChunk = fp8k::kReduceChunk;
  float t[kThreads];
  for (int i = 0; i < kThreads; ++i)
    t[i] = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    float &acc = t[(j / kChunk) % kThreads];
    acc = fp8k::add(acc, v[j]);
  }
  float total = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) {
    float *lane = t + 32 * w;
    for (int k = 16; k >= 1; k /= 2) {
      float next[32];
      for (int l = 0; l < 32; ++l)
        next[l] = fp8k::add(lane[l], lane[l ^ k]);
      for (int l = 0; l < 32; ++l)
        lane[l] = next[l];
    }
    total = w == 0 ? lane[0] : fp8k::add(total, lane[0]);
  }
  return total;
}

} // namespace fp8
