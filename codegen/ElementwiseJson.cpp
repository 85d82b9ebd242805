//===- ElementwiseJson.cpp - JSON forms of the kernel specs -------------===//

#include "codegen/Elementwise.h"

#include "core/EwProgramJson.h"
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

std::string toJSON(const ElementwiseSpec &s, int indent) {
  json j{{"kind", std::string(toString(s.kind))},
         {"arch", std::string(toString(s.arch))}};
  if (s.kind != AuxKind::Transpose)
    j["program"] = ewProgramToJson(s.program);
  const bool hasOut =
      s.kind == AuxKind::Elementwise || s.kind == AuxKind::Unpermute ||
      s.kind == AuxKind::Reduce || s.kind == AuxKind::Interleave;
  if (hasOut)
    j["out"] = std::string(toString(s.out));
  else {
    j["format"] = std::string(toString(s.quant.format));
    j["granularity"] = toString(s.quant.granularity);
  }
  if (s.kind == AuxKind::Quantize)
    j["scaling"] = scalingToJSON(s.quant);
  if (s.rowSum)
    j["row_sum"] = ewProgramToJson(*s.rowSum);
  if (s.transposed) // (absent when false: the names of other specs stay)
    j["transposed"] = true;
  if (s.amaxIn) // (likewise)
    j["amax_in"] = true;
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
                  "permute, unpermute, reduce or interleave) in the kernel "
                  "spec, found ",
                  j.contains("kind") ? j["kind"].dump() : "none");
  s.kind = *parseAuxKind(*kind);
  auto arch = str("arch");
  if (!arch || !parseArch(*arch))
    return errorf("expected 'arch' (sm_90a or sm_100a) in the kernel spec");
  s.arch = *parseArch(*arch);
  if (s.kind != AuxKind::Transpose) {
    if (!j.contains("program"))
      return errorf("expected a 'program' in the ", *kind, " kernel spec");
    auto p = ewProgramFromJson(j["program"]);
    if (!p)
      return p.status();
    s.program = *p;
  }
  if (s.kind == AuxKind::Elementwise || s.kind == AuxKind::Unpermute ||
      s.kind == AuxKind::Reduce || s.kind == AuxKind::Interleave) {
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
  if (j.contains("row_sum")) {
    if (s.kind != AuxKind::Quantize)
      return errorf("expected 'row_sum' only in a quantize kernel spec, found "
                    "it in a ",
                    *kind, " one");
    auto p = ewProgramFromJson(j["row_sum"]);
    if (!p) {
      Status st = p.status();
      return st.withContext("'row_sum'");
    }
    s.rowSum = *p;
  }
  if (j.contains("transposed")) {
    if (!j["transposed"].is_boolean())
      return errorf("expected 'transposed' to be true or false, found ",
                    j["transposed"].dump());
    s.transposed = j["transposed"].get<bool>();
  }
  if (j.contains("amax_in")) {
    if (!j["amax_in"].is_boolean())
      return errorf("expected 'amax_in' to be true or false, found ",
                    j["amax_in"].dump());
    s.amaxIn = j["amax_in"].get<bool>();
  }
  FP8_RETURN_IF_ERROR(checkElementwiseSpec(s));
  return s;
}

} // namespace fp8
