//===- ElementwiseJson.cpp - JSON forms of programs and specs -------------===//

#include "codegen/Elementwise.h"

#include "codegen/kernels/elementwise_params.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace fp8 {

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
  json j{{"inputs", inputs}, {"ops", ops}, {"result", argToJSON(p.result)}};
  if (p.broadcasts()) {
    json b = json::array();
    for (size_t i = 0; i < p.inputs.size(); ++i)
      b.push_back(std::string(toString(p.broadcastOf(i))));
    j["broadcast"] = b;
  }
  return j;
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
  const bool hasOut = s.kind == AuxKind::Elementwise ||
                      s.kind == AuxKind::Unpermute || s.kind == AuxKind::Reduce;
  if (hasOut)
    j["out"] = std::string(toString(s.out));
  else {
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
    return errorf("expected 'kind' (elementwise, quantize, transpose, "
                  "permute, unpermute or reduce) in the kernel spec, found ",
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
  if (s.kind == AuxKind::Elementwise || s.kind == AuxKind::Unpermute ||
      s.kind == AuxKind::Reduce) {
    auto out = str("out");
    if (!out || !parseDType(*out))
      return errorf("expected an 'out' element type in the ", *kind,
                    " kernel spec");
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

} // namespace fp8
