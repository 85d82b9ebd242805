//===- RecipeSpelling.cpp - The recipe as the fp8 dialect prints it -------===//

#include "core/RecipeSpelling.h"

namespace fp8 {

namespace {
std::string wrap(std::string_view name, const std::string &body, Spelling s) {
  std::string prefix =
      s == Spelling::Attribute ? "#fp8." + std::string(name) : "";
  return prefix + "<" + body + ">";
}
} // namespace

std::string dialectSpelling(const Granularity &g, Spelling s) {
  return wrap("granularity", toString(g), s);
}

std::string dialectSpelling(ScalingMode mode, const DelayedScaling &d,
                            Spelling s) {
  std::string body(toString(mode));
  if (mode == ScalingMode::Delayed) {
    // The dialect's defaults (FP8Attrs.td, ScalingAttr) are DelayedScaling's.
    const DelayedScaling def;
    std::string params;
    auto add = [&](std::string_view key, const std::string &value) {
      params += (params.empty() ? "" : ", ") + std::string(key) + " = " + value;
    };
    if (d.historyLength != def.historyLength)
      add("history", std::to_string(d.historyLength));
    if (d.updateInterval != def.updateInterval)
      add("interval", std::to_string(d.updateInterval));
    if (d.margin != def.margin)
      add("margin", std::to_string(d.margin));
    if (d.algo != def.algo)
      add("algo", std::string(toString(d.algo)));
    if (!params.empty())
      body += ", " + params;
  }
  return wrap("scaling", body, s);
}

std::string dialectSpelling(const QuantRecipe &q, Spelling s) {
  std::string body = std::string(mlirNameOf(q.format)) + ", " +
                     dialectSpelling(q.granularity, Spelling::Nested);
  if (q.mode != ScalingMode::Current)
    body += ", " + dialectSpelling(q.mode, q.delayed, Spelling::Nested);
  return wrap("quant", body, s);
}

std::string dialectSpelling(const MatmulRecipe &r, Spelling s) {
  std::string body = "a = " + dialectSpelling(r.a, Spelling::Nested) +
                     ", b = " + dialectSpelling(r.b, Spelling::Nested);
  if (r.promotionInterval)
    body += ", promotion_interval = " + std::to_string(*r.promotionInterval);
  if (r.out != DType::BF16)
    body += ", out = " + std::string(mlirNameOf(r.out));
  return wrap("recipe", body, s);
}

} // namespace fp8
