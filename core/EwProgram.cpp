//===- EwProgram.cpp - Elementwise programs: ops, rules, JSON -------------===//

#include "core/EwProgram.h"
#include "core/EwProgramJson.h"

#include "core/JsonInput.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

EwProgram swigluProgram() {
  using A = EwArg;
  EwProgram p;
  p.inputs = {DType::BF16, DType::BF16};
  p.instrs = {{EwOp::Convert, {A::input(0)}, DType::F32},
              {EwOp::Convert, {A::input(1)}, DType::F32},
              {EwOp::Neg, {A::result(0)}, DType::F32},
              {EwOp::Exp, {A::result(2)}, DType::F32},
              {EwOp::Add, {A::result(3), A::constant(1.0f)}, DType::F32},
              {EwOp::Div, {A::result(0), A::result(4)}, DType::F32},
              {EwOp::Mul, {A::result(5), A::result(1)}, DType::F32},
              {EwOp::Convert, {A::result(6)}, DType::BF16}};
  p.result = A::result(7);
  return p;
}

EwProgram rmsnormProgram(float invCols, float eps) {
  using A = EwArg;
  EwProgram p;
  p.inputs = {DType::BF16, DType::BF16, DType::F32};
  p.broadcast = {EwBroadcast::None, EwBroadcast::Col, EwBroadcast::Row};
  p.instrs = {{EwOp::Convert, {A::input(0)}, DType::F32},
              {EwOp::Mul, {A::input(2), A::constant(invCols)}, DType::F32},
              {EwOp::Add, {A::result(1), A::constant(eps)}, DType::F32},
              {EwOp::Rsqrt, {A::result(2)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::result(3)}, DType::F32},
              {EwOp::Convert, {A::result(4)}, DType::BF16},
              {EwOp::Mul, {A::input(1), A::result(5)}, DType::BF16}};
  p.result = A::result(6);
  return p;
}

EwProgram sumOfSquaresProgram() {
  using A = EwArg;
  EwProgram p;
  p.inputs = {DType::BF16, DType::BF16};
  p.broadcast = {EwBroadcast::None, EwBroadcast::Col};
  p.instrs = {{EwOp::Convert, {A::input(0)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::result(0)}, DType::F32}};
  p.result = A::result(1);
  return p;
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
  if (p.inputs.empty() || p.inputs.size() > size_t(kMaxProgramInputs))
    return errorf("expected 1 to ", int(kMaxProgramInputs),
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

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

using json = nlohmann::json;

namespace {
json argToJSON(const EwArg &a) {
  switch (a.kind) {
  case EwArg::Kind::Input:
    return "in" + std::to_string(a.index);
  case EwArg::Kind::Value:
    return "%" + std::to_string(a.index);
  case EwArg::Kind::Constant:
    if (std::isfinite(a.value))
      return double(a.value);
    return std::isnan(a.value) ? "nan" : (a.value > 0 ? "inf" : "-inf");
  }
  return nullptr;
}

Expected<EwArg> argFromJSON(const json &j) {
  if (j.is_number())
    return EwArg::constant(float(j.get<double>()));
  if (!j.is_string())
    return errorf("expected a program operand (\"in<i>\", \"%<i>\" or a "
                  "number), found ",
                  j.dump());
  const std::string s = j.get<std::string>();
  if (s == "nan")
    return EwArg::constant(std::numeric_limits<float>::quiet_NaN());
  if (s == "inf" || s == "-inf")
    return EwArg::constant(s[0] == '-'
                               ? -std::numeric_limits<float>::infinity()
                               : std::numeric_limits<float>::infinity());
  auto number = [&](size_t from) -> std::optional<int> {
    if (s.size() <= from || s.size() > from + 6)
      return std::nullopt;
    int v = 0;
    for (size_t i = from; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9')
        return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s.rfind("in", 0) == 0)
    if (auto n = number(2))
      return EwArg::input(*n);
  if (s.rfind("%", 0) == 0)
    if (auto n = number(1))
      return EwArg::result(*n);
  return errorf("expected a program operand (\"in<i>\", \"%<i>\" or a number), "
                "found \"",
                s, "\"");
}

} // namespace

json ewProgramToJson(const EwProgram &p) {
  json inputs = json::array();
  for (DType t : p.inputs)
    inputs.push_back(std::string(toString(t)));
  json ops = json::array();
  for (const EwInstr &i : p.instrs) {
    json args = json::array();
    for (const EwArg &a : i.args)
      args.push_back(argToJSON(a));
    ops.push_back(json{{"op", std::string(toString(i.op))},
                       {"args", args},
                       {"type", std::string(toString(i.type))}});
  }
  json j{{"inputs", inputs}, {"ops", ops}, {"result", argToJSON(p.result)}};
  if (p.broadcasts()) {
    json b = json::array();
    for (size_t i = 0; i < p.inputs.size(); ++i)
      b.push_back(std::string(toString(p.broadcastOf(i))));
    j["broadcast"] = b;
  }
  return j;
}

Expected<EwProgram> ewProgramFromJson(const json &j) {
  if (!j.is_object())
    return errorf("expected a program object, found ", j.type_name());
  EwProgram p;
  p.inputs.clear();
  if (!j.contains("inputs") || !j["inputs"].is_array())
    return errorf("expected an 'inputs' array in the program");
  for (const json &t : j["inputs"]) {
    auto d = t.is_string() ? parseDType(t.get<std::string>()) : std::nullopt;
    if (!d)
      return errorf("expected an element type in the program's inputs, found ",
                    t.dump());
    p.inputs.push_back(*d);
  }
  if (j.contains("ops")) {
    if (!j["ops"].is_array())
      return errorf("expected 'ops' to be an array in the program");
    for (const json &o : j["ops"]) {
      if (!o.is_object() || !o.contains("op") || !o["op"].is_string())
        return errorf("expected an instruction object with an 'op', found ",
                      o.dump());
      EwInstr in;
      auto op = parseEwOp(o["op"].get<std::string>());
      if (!op)
        return errorf("unknown program operation '", o["op"].get<std::string>(),
                      "'");
      in.op = *op;
      if (o.contains("type")) {
        auto t = o["type"].is_string()
                     ? parseDType(o["type"].get<std::string>())
                     : std::nullopt;
        if (!t)
          return errorf("expected an element type for '", toString(in.op),
                        "', found ", o["type"].dump());
        in.type = *t;
      }
      if (!o.contains("args") || !o["args"].is_array())
        return errorf("expected an 'args' array for '", toString(in.op), "'");
      for (const json &a : o["args"]) {
        auto arg = argFromJSON(a);
        if (!arg)
          return arg.status();
        in.args.push_back(*arg);
      }
      p.instrs.push_back(std::move(in));
    }
  }
  if (j.contains("broadcast")) {
    if (!j["broadcast"].is_array())
      return errorf("expected 'broadcast' to be an array in the program, "
                    "found ",
                    j["broadcast"].dump());
    for (const json &b : j["broadcast"]) {
      auto k =
          b.is_string() ? parseEwBroadcast(b.get<std::string>()) : std::nullopt;
      if (!k)
        return errorf("expected a broadcast (none, row or col) in the "
                      "program, found ",
                      b.dump());
      p.broadcast.push_back(*k);
    }
  }
  if (!j.contains("result"))
    return errorf("expected a 'result' in the program");
  auto r = argFromJSON(j["result"]);
  if (!r)
    return r.status();
  p.result = *r;
  FP8_RETURN_IF_ERROR(checkProgram(p));
  return p;
}

std::string toJSON(const EwProgram &p, int indent) {
  return ewProgramToJson(p).dump(indent);
}

Expected<EwProgram> ewProgramFromJSON(const std::string &text) {
  auto parsed = parseJsonInput(text, "program");
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  return ewProgramFromJson(j);
}

} // namespace fp8
