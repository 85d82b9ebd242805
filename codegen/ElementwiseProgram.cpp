//===- ElementwiseProgram.cpp - Programs: ops, checks, evaluation ---------===//

#include "codegen/Elementwise.h"

#include "codegen/kernels/elementwise_params.h"

#include <cstdint>
#include <cstring>
#include <optional>

namespace fp8 {

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

namespace {
struct OpName {
  EwOp op;
  const char *name;
  int arity;
};
constexpr OpName kOps[] = {
    {EwOp::Add, "add", 2},         {EwOp::Sub, "sub", 2},
    {EwOp::Mul, "mul", 2},         {EwOp::Div, "div", 2},
    {EwOp::Fma, "fma", 3},         {EwOp::Neg, "neg", 1},
    {EwOp::Abs, "abs", 1},         {EwOp::Maximum, "maximum", 2},
    {EwOp::Minimum, "minimum", 2}, {EwOp::MaxNum, "maxnum", 2},
    {EwOp::MinNum, "minnum", 2},   {EwOp::Exp, "exp", 1},
    {EwOp::Tanh, "tanh", 1},       {EwOp::Erf, "erf", 1},
    {EwOp::Sqrt, "sqrt", 1},       {EwOp::Rsqrt, "rsqrt", 1},
    {EwOp::Convert, "convert", 1},
};

const OpName &opInfo(EwOp op) {
  for (const OpName &o : kOps)
    if (o.op == op)
      return o;
  return kOps[0];
}
} // namespace

std::string_view toString(EwOp op) { return opInfo(op).name; }

std::optional<EwOp> parseEwOp(std::string_view s) {
  for (const OpName &o : kOps)
    if (s == o.name)
      return o.op;
  return std::nullopt;
}

int ewArity(EwOp op) { return opInfo(op).arity; }

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

bool EwArg::operator==(const EwArg &o) const {
  if (kind != o.kind)
    return false;
  if (kind == Kind::Constant) {
    uint32_t a, b;
    std::memcpy(&a, &value, 4);
    std::memcpy(&b, &o.value, 4);
    return a == b;
  }
  return index == o.index;
}

bool EwInstr::operator==(const EwInstr &o) const {
  return op == o.op && args == o.args && type == o.type;
}

bool EwProgram::operator==(const EwProgram &o) const {
  if (!(inputs == o.inputs && instrs == o.instrs && result == o.result))
    return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (broadcastOf(i) != o.broadcastOf(i))
      return false;
  return true;
}

bool EwProgram::broadcasts() const {
  for (EwBroadcast b : broadcast)
    if (b != EwBroadcast::None)
      return true;
  return false;
}

std::string_view toString(EwBroadcast b) {
  switch (b) {
  case EwBroadcast::None:
    return "none";
  case EwBroadcast::Row:
    return "row";
  case EwBroadcast::Col:
    return "col";
  }
  return "?";
}

std::optional<EwBroadcast> parseEwBroadcast(std::string_view s) {
  for (EwBroadcast b : {EwBroadcast::None, EwBroadcast::Row, EwBroadcast::Col})
    if (s == toString(b))
      return b;
  return std::nullopt;
}

EwProgram EwProgram::identity(DType t) {
  EwProgram p;
  p.inputs = {t};
  p.result = EwArg::input(0);
  return p;
}

DType EwProgram::resultType() const {
  if (result.kind == EwArg::Kind::Value && result.index >= 0 &&
      result.index < int(instrs.size()))
    return instrs[size_t(result.index)].type;
  if (result.kind == EwArg::Kind::Input && result.index >= 0 &&
      result.index < int(inputs.size()))
    return inputs[size_t(result.index)];
  return DType::F32;
}

static Status checkArg(const EwArg &a, size_t inputs, size_t before,
                       const std::string &where) {
  if (a.kind == EwArg::Kind::Input &&
      (a.index < 0 || size_t(a.index) >= inputs))
    return errorf("expected input operands in0..in", inputs - 1, " in ", where,
                  ", found in", a.index);
  if (a.kind == EwArg::Kind::Value &&
      (a.index < 0 || size_t(a.index) >= before))
    return errorf("expected ", where,
                  " to use results of earlier "
                  "instructions (%0..%",
                  int(before) - 1, "), found %", a.index);
  return Status::ok();
}

Status checkProgram(const EwProgram &p) {
  if (p.inputs.empty() || p.inputs.size() > size_t(fp8k::kMaxEwInputs))
    return errorf("expected 1 to ", int(fp8k::kMaxEwInputs),
                  " program inputs, found ", p.inputs.size());
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (!isWide(p.inputs[i]))
      return errorf("expected program input ", i,
                    " to be bf16, f16 or f32, "
                    "found ",
                    toString(p.inputs[i]));
  if (!p.broadcast.empty() && p.broadcast.size() != p.inputs.size())
    return errorf("expected a broadcast per program input (", p.inputs.size(),
                  "), found ", p.broadcast.size());
  if (p.broadcastOf(0) != EwBroadcast::None)
    return errorf("expected program input 0 to have the shape the program "
                  "runs over, found it broadcast per ",
                  toString(p.broadcastOf(0)));
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const EwInstr &in = p.instrs[i];
    const std::string where = "instruction %" + std::to_string(i);
    if (int(in.args.size()) != ewArity(in.op))
      return errorf("expected ", ewArity(in.op), " operands for '",
                    toString(in.op), "' in ", where, ", found ",
                    in.args.size());
    if (!isWide(in.type))
      return errorf("expected ", where, " to round to bf16, f16 or f32, found ",
                    toString(in.type));
    for (const EwArg &a : in.args)
      FP8_RETURN_IF_ERROR(checkArg(a, p.inputs.size(), i, where));
  }
  if (p.result.kind == EwArg::Kind::Constant)
    return errorf("expected the program's result to be an input or a result, "
                  "found a constant");
  return checkArg(p.result, p.inputs.size(), p.instrs.size(),
                  "the program's result");
}

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
