//===- Elementwise.cpp - Quantize, transpose and elementwise kernels ------===//

#include "codegen/Elementwise.h"

#include "codegen/kernels/elementwise_params.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"
#include "core/RecipeRules.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>

namespace fp8 {

using json = nlohmann::json;

static_assert(sizeof(fp8k::EwParams) == 128,
              "must match codegen/kernels/elementwise.cuh");

//===----------------------------------------------------------------------===//
// Names
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

/// The fp8_math.h constant of an element type.
const char *typeConst(DType t) {
  switch (t) {
  case DType::E4M3FN:
    return "kE4M3";
  case DType::E5M2:
    return "kE5M2";
  case DType::BF16:
    return "kBF16";
  case DType::F16:
    return "kF16";
  case DType::F32:
    return "kF32";
  case DType::UE8M0:
    return "kUE8M0";
  }
  return "kF32";
}

const char *scaleConst(ScaleFormat f) {
  switch (f) {
  case ScaleFormat::F32:
    return "kScaleF32";
  case ScaleFormat::F32Pow2:
    return "kScaleF32Pow2";
  case ScaleFormat::UE8M0:
    return "kScaleUE8M0";
  }
  return "kScaleF32";
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex8(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%08llx",
                static_cast<unsigned long long>(h & 0xFFFFFFFFull));
  return buf;
}

/// "1x128", "wx1", "wxw": the granularity in a C identifier.
std::string granTag(const Granularity &g) {
  auto dim = [](int64_t v) {
    return v == Granularity::kWhole ? std::string("w") : std::to_string(v);
  };
  std::string s = dim(g.rows) + "x" + dim(g.cols);
  if (g.scale == ScaleFormat::F32Pow2)
    s += "p2";
  else if (g.scale == ScaleFormat::UE8M0)
    s += "e8";
  return s;
}

/// A float as an exact C++ expression.
std::string floatLiteral(float v) {
  if (!std::isfinite(v)) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof(u));
    char buf[32];
    std::snprintf(buf, sizeof(buf), "fp8k::u2f(0x%08Xu)", u);
    return buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%af", static_cast<double>(v));
  return buf;
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

std::string_view toString(AuxKind k) {
  switch (k) {
  case AuxKind::Elementwise:
    return "elementwise";
  case AuxKind::Quantize:
    return "quantize";
  case AuxKind::Transpose:
    return "transpose";
  }
  return "?";
}

std::optional<AuxKind> parseAuxKind(std::string_view s) {
  for (AuxKind k :
       {AuxKind::Elementwise, AuxKind::Quantize, AuxKind::Transpose})
    if (toString(k) == s)
      return k;
  return std::nullopt;
}

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
  return inputs == o.inputs && instrs == o.instrs && result == o.result;
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

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

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
    return EwArg::constant(fp8k::quiet_nan());
  if (s == "inf" || s == "-inf")
    return EwArg::constant(s[0] == '-' ? -fp8k::infinity() : fp8k::infinity());
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

json programToJSON(const EwProgram &p) {
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
  return json{
      {"inputs", inputs}, {"ops", ops}, {"result", argToJSON(p.result)}};
}

Expected<EwProgram> programFromJSON(const json &j) {
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
  if (!j.contains("result"))
    return errorf("expected a 'result' in the program");
  auto r = argFromJSON(j["result"]);
  if (!r)
    return r.status();
  p.result = *r;
  FP8_RETURN_IF_ERROR(checkProgram(p));
  return p;
}

json scalingToJSON(const QuantRecipe &q) {
  if (q.mode == ScalingMode::Current)
    return json{{"mode", "current"}};
  return json{{"mode", "delayed"},
              {"history", q.delayed.historyLength},
              {"interval", q.delayed.updateInterval},
              {"margin", q.delayed.margin},
              {"algo", std::string(toString(q.delayed.algo))}};
}

Status scalingFromJSON(const json &j, QuantRecipe &q) {
  if (!j.is_object() || !j.contains("mode") || !j["mode"].is_string())
    return errorf("expected 'scaling' to be an object with a 'mode'");
  auto mode = parseScalingMode(j["mode"].get<std::string>());
  if (!mode)
    return errorf("unknown scaling mode '", j["mode"].get<std::string>(), "'");
  q.mode = *mode;
  // The kernels take the history, interval and margin as 32-bit integers;
  // checkDelayedScaling narrows them further.
  JsonFields f(j, "'scaling'");
  const IntRange int32{std::numeric_limits<int32_t>::min(),
                       std::numeric_limits<int32_t>::max()};
  FP8_RETURN_IF_ERROR(
      f.integer("history", q.delayed.historyLength, int32, Presence::Optional));
  FP8_RETURN_IF_ERROR(f.integer("interval", q.delayed.updateInterval, int32,
                                Presence::Optional));
  FP8_RETURN_IF_ERROR(
      f.integer("margin", q.delayed.margin, int32, Presence::Optional));
  if (j.contains("algo")) {
    auto a = j["algo"].is_string() ? parseAmaxAlgo(j["algo"].get<std::string>())
                                   : std::nullopt;
    if (!a)
      return errorf("unknown amax algorithm ", j["algo"].dump());
    q.delayed.algo = *a;
  }
  return Status::ok();
}
} // namespace

std::string toJSON(const EwProgram &p, int indent) {
  return programToJSON(p).dump(indent);
}

Expected<EwProgram> ewProgramFromJSON(const std::string &text) {
  auto parsed = parseJsonInput(text, "program");
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  return programFromJSON(j);
}

std::string toJSON(const ElementwiseSpec &s, int indent) {
  json j{{"kind", std::string(toString(s.kind))},
         {"arch", std::string(toString(s.arch))}};
  if (s.kind != AuxKind::Transpose)
    j["program"] = programToJSON(s.program);
  if (s.kind == AuxKind::Elementwise)
    j["out"] = std::string(toString(s.out));
  if (s.kind != AuxKind::Elementwise) {
    j["format"] = std::string(toString(s.quant.format));
    j["granularity"] = toString(s.quant.granularity);
  }
  if (s.kind == AuxKind::Quantize)
    j["scaling"] = scalingToJSON(s.quant);
  return j.dump(indent);
}

Expected<ElementwiseSpec> elementwiseSpecFromJSON(const std::string &text) {
  auto parsed = parseJsonInput(text, "elementwise kernel spec");
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  if (!j.is_object())
    return errorf("expected an elementwise kernel spec object, found ",
                  j.type_name());
  ElementwiseSpec s;
  auto str = [&](const char *key) -> std::optional<std::string> {
    if (!j.contains(key) || !j[key].is_string())
      return std::nullopt;
    return j[key].get<std::string>();
  };
  auto kind = str("kind");
  if (!kind || !parseAuxKind(*kind))
    return errorf("expected 'kind' (elementwise, quantize or transpose) in the "
                  "kernel spec, found ",
                  j.contains("kind") ? j["kind"].dump() : "none");
  s.kind = *parseAuxKind(*kind);
  auto arch = str("arch");
  if (!arch || !parseArch(*arch))
    return errorf("expected 'arch' (sm_90a or sm_100a) in the kernel spec");
  s.arch = *parseArch(*arch);
  if (s.kind != AuxKind::Transpose) {
    if (!j.contains("program"))
      return errorf("expected a 'program' in the ", *kind, " kernel spec");
    auto p = programFromJSON(j["program"]);
    if (!p)
      return p.status();
    s.program = *p;
  }
  if (s.kind == AuxKind::Elementwise) {
    auto out = str("out");
    if (!out || !parseDType(*out))
      return errorf("expected an 'out' element type in the elementwise kernel "
                    "spec");
    s.out = *parseDType(*out);
  } else {
    auto f = str("format");
    if (!f || !parseDType(*f))
      return errorf("expected an FP8 'format' in the ", *kind, " kernel spec");
    s.quant.format = *parseDType(*f);
    auto g = str("granularity");
    if (!g)
      return errorf("expected a 'granularity' in the ", *kind, " kernel spec");
    auto gran = parseGranularity(*g);
    if (!gran)
      return gran.status();
    s.quant.granularity = *gran;
  }
  if (s.kind == AuxKind::Quantize && j.contains("scaling"))
    FP8_RETURN_IF_ERROR(scalingFromJSON(j["scaling"], s.quant));
  FP8_RETURN_IF_ERROR(checkElementwiseSpec(s));
  return s;
}

//===----------------------------------------------------------------------===//
// Specs
//===----------------------------------------------------------------------===//

bool ElementwiseSpec::operator==(const ElementwiseSpec &o) const {
  return toJSON(*this) == toJSON(o);
}

std::string ElementwiseSpec::kernelName() const {
  const std::string h = hex8(fnv1a(toJSON(*this)));
  switch (kind) {
  case AuxKind::Elementwise:
    return "fp8_ew_" + std::string(toString(out)) + "_" + h;
  case AuxKind::Quantize:
    return "fp8_quant_" + std::string(tagOf(quant.format)) + "_" +
           granTag(quant.granularity) +
           (quant.mode == ScalingMode::Delayed ? "_delayed" : "") +
           (program.instrs.empty() ? "" : "_fused") + "_" + h;
  case AuxKind::Transpose:
    return "fp8_transpose_" + std::string(tagOf(quant.format)) + "_" +
           granTag(quant.granularity) + "_" + h;
  }
  return "fp8_aux_" + h;
}

Status checkElementwiseSpec(const ElementwiseSpec &s) {
  if (s.kind != AuxKind::Transpose)
    FP8_RETURN_IF_ERROR(checkProgram(s.program));
  if (s.kind == AuxKind::Elementwise) {
    if (!isWide(s.out))
      return errorf("expected the elementwise output to be bf16, f16 or f32, "
                    "found ",
                    toString(s.out));
    return Status::ok();
  }
  if (!isFP8(s.quant.format))
    return errorf("expected an FP8 format (e4m3fn or e5m2), found ",
                  toString(s.quant.format));
  if (s.kind == AuxKind::Transpose)
    return checkGranularity(s.quant.granularity, "the transposed granularity");
  return checkQuantRecipe(s.quant, "the quantized tensor");
}

bool quantizeUsesRowPath(const ElementwiseSpec &s) {
  return s.kind == AuxKind::Quantize && s.quant.granularity.rows == 1 &&
         s.quant.mode == ScalingMode::Current;
}

std::vector<std::string> elementwiseEntries(const ElementwiseSpec &s) {
  switch (s.kind) {
  case AuxKind::Elementwise:
    return {"elementwise"};
  case AuxKind::Quantize:
    if (quantizeUsesRowPath(s))
      return {"quantize"};
    return {"amax", "scales", "quantize"};
  case AuxKind::Transpose:
    return {"codes", "scales"};
  }
  return {};
}

namespace {
void emitProgram(std::ostringstream &os, const EwProgram &p) {
  os << "struct Prog {\n"
     << "  static __device__ __forceinline__ float eval(const EwParams &p, "
        "i64 i) {\n";
  std::vector<bool> used(p.inputs.size(), false);
  auto mark = [&](const EwArg &a) {
    if (a.kind == EwArg::Kind::Input)
      used[size_t(a.index)] = true;
  };
  for (const EwInstr &in : p.instrs)
    for (const EwArg &a : in.args)
      mark(a);
  mark(p.result);
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (used[i])
      os << "    const float in" << i << " = load_elem<"
         << typeConst(p.inputs[i]) << ">(p.in[" << i << "], i);\n";
  auto arg = [](const EwArg &a) -> std::string {
    switch (a.kind) {
    case EwArg::Kind::Input:
      return "in" + std::to_string(a.index);
    case EwArg::Kind::Value:
      return "v" + std::to_string(a.index);
    case EwArg::Kind::Constant:
      return floatLiteral(a.value);
    }
    return "0.0f";
  };
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const EwInstr &in = p.instrs[i];
    std::string call;
    if (in.op == EwOp::Convert) {
      call = arg(in.args[0]);
    } else {
      call = std::string(toString(in.op)) + "(";
      for (size_t j = 0; j < in.args.size(); ++j)
        call += (j ? ", " : "") + arg(in.args[j]);
      call += ")";
    }
    os << "    const float v" << i << " = ";
    if (in.type == DType::F32)
      os << call;
    else
      os << "round_to(" << call << ", " << typeConst(in.type) << ")";
    os << ";\n";
  }
  os << "    return " << arg(p.result) << ";\n  }\n};\n\n";
}
} // namespace

Expected<std::vector<GeneratedKernel>>
emitElementwise(const ElementwiseSpec &s) {
  FP8_RETURN_IF_ERROR(checkElementwiseSpec(s));
  const std::string name = s.kernelName();
  const std::vector<std::string> roles = elementwiseEntries(s);
  std::vector<std::string> names;
  for (const std::string &r : roles)
    names.push_back(roles.size() == 1 ? name : name + "_" + r);

  std::ostringstream os;
  os << "// Generated by the fp8 toolkit (codegen/Elementwise.cpp): do not "
        "edit.\n"
     << "// ElementwiseSpec: " << toJSON(s) << "\n"
     << "#include \"fp8/elementwise.cuh\"\n\n"
     << "namespace fp8k {\n\n";
  if (s.kind != AuxKind::Transpose)
    emitProgram(os, s.program);
  if (s.kind != AuxKind::Elementwise) {
    const Granularity &g = s.quant.granularity;
    const bool delayed = s.quant.mode == ScalingMode::Delayed;
    os << "struct Q {\n"
       << "  static constexpr int kFormat = " << typeConst(s.quant.format)
       << ";\n"
       << "  static constexpr int kScaleFmt = " << scaleConst(g.scale) << ";\n"
       << "  static constexpr i64 kBlockRows = " << g.rows << "; // 0 = whole\n"
       << "  static constexpr i64 kBlockCols = " << g.cols << ";\n"
       << "  static constexpr bool kDelayed = " << (delayed ? "true" : "false")
       << ";\n"
       << "  static constexpr int kHistory = " << s.quant.delayed.historyLength
       << ";\n"
       << "  static constexpr int kInterval = "
       << s.quant.delayed.updateInterval << ";\n"
       << "  static constexpr int kMargin = " << s.quant.delayed.margin << ";\n"
       << "  static constexpr int kAlgo = "
       << (s.quant.delayed.algo == AmaxAlgo::MostRecent ? 1 : 0) << ";\n"
       << "};\n\n";
  }
  os << "} // namespace fp8k\n\n";
  auto entry = [&](size_t i, const std::string &threads,
                   const std::string &body) {
    os << "extern \"C\" __global__ void __launch_bounds__(" << threads << ")\n"
       << names[i] << "(const fp8k::EwParams p) {\n  " << body << "\n}\n\n";
  };
  switch (s.kind) {
  case AuxKind::Elementwise:
    entry(0, "256",
          std::string("fp8k::elementwise_body<fp8k::Prog, fp8k::") +
              typeConst(s.out) + ">(p);");
    break;
  case AuxKind::Quantize:
    if (quantizeUsesRowPath(s)) {
      entry(0, "256", "fp8k::quantize_rows_body<fp8k::Prog, fp8k::Q>(p);");
    } else {
      entry(0, "256", "fp8k::quantize_amax_body<fp8k::Prog, fp8k::Q>(p);");
      entry(1, "128", "fp8k::quantize_scales_body<fp8k::Q>(p);");
      entry(2, "256", "fp8k::quantize_apply_body<fp8k::Prog, fp8k::Q>(p);");
    }
    break;
  case AuxKind::Transpose:
    entry(0, "256", "fp8k::transpose_codes_body(p);");
    entry(1, "256",
          std::string("fp8k::transpose_scales_body<") +
              (s.quant.granularity.scale == ScaleFormat::UE8M0 ? "1" : "4") +
              ">(p);");
    break;
  }
  const std::string source = os.str();

  std::vector<GeneratedKernel> out;
  for (size_t i = 0; i < names.size(); ++i) {
    GeneratedKernel g;
    g.name = names[i];
    g.source = source;
    g.arch = s.arch;
    g.launch.threads = 256;
    g.launch.sharedBytes = 0;
    g.launch.persistent = false;
    g.launch.tmaStore = false;
    out.push_back(std::move(g));
  }
  return out;
}

AuxLaunch elementwiseLaunch(const ElementwiseSpec &s, size_t entry,
                            int64_t batch, int64_t rows, int64_t cols,
                            int smCount) {
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  auto clamp = [](int64_t v, int64_t hi) {
    return unsigned(std::max<int64_t>(1, std::min(v, hi)));
  };
  const int64_t waves = std::max(1, smCount) * int64_t(32);
  const std::vector<std::string> roles = elementwiseEntries(s);
  const std::string role = entry < roles.size() ? roles[entry] : "";
  const Granularity &g = s.quant.granularity;
  AuxLaunch l;
  l.block[0] = 256;
  if (s.kind == AuxKind::Elementwise) {
    l.grid[0] = clamp(ceilDiv(batch * rows * cols, 256), waves);
  } else if (s.kind == AuxKind::Quantize && role == "quantize" &&
             quantizeUsesRowPath(s)) {
    const int64_t units = batch * rows * g.scaleCols(cols);
    l.grid[0] = clamp(ceilDiv(units, 8), waves * 8);
  } else if (role == "amax" ||
             (s.kind == AuxKind::Quantize && role == "quantize")) {
    l.grid[0] = clamp(ceilDiv(cols, fp8k::kColsPerCta), INT32_MAX);
    l.grid[1] = clamp(ceilDiv(batch * rows, fp8k::kRowChunk), 65535);
  } else if (role == "scales" && s.kind == AuxKind::Quantize) {
    l.block[0] = 128;
    const int64_t n = batch * g.scaleRows(rows) * g.scaleCols(cols);
    l.grid[0] = clamp(ceilDiv(n, 128), waves);
  } else if (role == "codes") {
    l.block[0] = 32;
    l.block[1] = 8;
    l.grid[0] = clamp(ceilDiv(cols, 32), INT32_MAX);
    l.grid[1] = clamp(ceilDiv(rows, 32), 65535);
    l.grid[2] = clamp(batch, 65535);
  } else { // transpose scales
    const int64_t n = batch * g.scaleRows(rows) * g.scaleCols(cols);
    l.grid[0] = clamp(ceilDiv(n, 256), waves);
  }
  return l;
}

} // namespace fp8
