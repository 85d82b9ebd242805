//===- Recipe.cpp - Names and parsing of the recipe vocabulary ------------===//

#include "core/Recipe.h"

#include <charconv>

namespace fp8 {

namespace {
/// Every spelling of each element type, in one place.
struct DTypeNames {
  DType type;
  std::string_view name, tag, mlir;
};
constexpr DTypeNames kDTypeNames[] = {
    {DType::E4M3FN, "e4m3fn", "e4m3", "f8E4M3FN"},
    {DType::E5M2, "e5m2", "e5m2", "f8E5M2"},
    {DType::BF16, "bf16", "bf16", "bf16"},
    {DType::F16, "f16", "f16", "f16"},
    {DType::F32, "f32", "f32", "f32"},
    {DType::UE8M0, "ue8m0", "e8m0", "f8E8M0FNU"},
    {DType::I32, "i32", "i32", "i32"},
};
const DTypeNames &namesOf(DType t) {
  for (const DTypeNames &n : kDTypeNames)
    if (n.type == t)
      return n;
  return kDTypeNames[0]; // unreachable: every DType has a row
}
} // namespace

std::string_view toString(DType t) { return namesOf(t).name; }
std::string_view tagOf(DType t) { return namesOf(t).tag; }
std::string_view mlirNameOf(DType t) { return namesOf(t).mlir; }

std::string_view toString(ScaleFormat f) {
  switch (f) {
  case ScaleFormat::F32:
    return "f32";
  case ScaleFormat::F32Pow2:
    return "f32_pow2";
  case ScaleFormat::UE8M0:
    return "ue8m0";
  }
  return "?";
}

std::string_view toString(ScalingMode m) {
  return m == ScalingMode::Current ? "current" : "delayed";
}

std::string_view toString(AmaxAlgo a) {
  return a == AmaxAlgo::Max ? "max" : "most_recent";
}

std::string_view toString(Layout l) {
  return l == Layout::KMajor ? "k_major" : "mn_major";
}

std::string_view toString(Arch a) {
  return a == Arch::SM90a ? "sm_90a" : "sm_100a";
}

std::string toString(const Granularity &g) {
  std::string s;
  if (g.rows == Granularity::kWhole && g.cols == Granularity::kWhole)
    s = "per_tensor";
  else if (g.rows == 1 && g.cols == Granularity::kWhole)
    s = "per_row";
  else if (g.rows == Granularity::kWhole && g.cols == 1)
    s = "per_column";
  else {
    auto dim = [](int64_t v) {
      return v == Granularity::kWhole ? std::string("whole")
                                      : std::to_string(v);
    };
    s = dim(g.rows) + "x" + dim(g.cols);
  }
  if (g.scale != ScaleFormat::F32)
    s += ":" + std::string(toString(g.scale));
  return s;
}

template <typename E, size_t N>
static std::optional<E> lookup(std::string_view s, const E (&values)[N]) {
  for (E v : values)
    if (toString(v) == s)
      return v;
  return std::nullopt;
}

std::optional<DType> parseDType(std::string_view s) {
  for (const DTypeNames &n : kDTypeNames)
    if (s == n.name || s == n.tag || s == n.mlir)
      return n.type;
  return std::nullopt;
}

std::optional<ScaleFormat> parseScaleFormat(std::string_view s) {
  const ScaleFormat all[] = {ScaleFormat::F32, ScaleFormat::F32Pow2,
                             ScaleFormat::UE8M0};
  return lookup(s, all);
}

std::optional<ScalingMode> parseScalingMode(std::string_view s) {
  const ScalingMode all[] = {ScalingMode::Current, ScalingMode::Delayed};
  return lookup(s, all);
}

std::optional<AmaxAlgo> parseAmaxAlgo(std::string_view s) {
  const AmaxAlgo all[] = {AmaxAlgo::Max, AmaxAlgo::MostRecent};
  return lookup(s, all);
}

std::optional<Layout> parseLayout(std::string_view s) {
  const Layout all[] = {Layout::KMajor, Layout::MNMajor};
  return lookup(s, all);
}

std::optional<Arch> parseArch(std::string_view s) {
  const Arch all[] = {Arch::SM90a, Arch::SM100a};
  return lookup(s, all);
}

static std::optional<int64_t> parseBlockDim(std::string_view s) {
  if (s == "whole")
    return Granularity::kWhole;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v <= 0)
    return std::nullopt;
  return v;
}

Expected<Granularity> parseGranularity(std::string_view s) {
  Granularity g;
  std::string_view shape = s;
  if (size_t colon = s.find(':'); colon != std::string_view::npos) {
    shape = s.substr(0, colon);
    std::string_view fmt = s.substr(colon + 1);
    auto f = parseScaleFormat(fmt);
    if (!f)
      return errorf("expected a scale format (f32, f32_pow2, ue8m0) after ':'"
                    " in granularity '",
                    s, "', found '", fmt, "'");
    g.scale = *f;
  }
  if (shape == "per_tensor")
    g.rows = g.cols = Granularity::kWhole;
  else if (shape == "per_row")
    g.rows = 1, g.cols = Granularity::kWhole;
  else if (shape == "per_column")
    g.rows = Granularity::kWhole, g.cols = 1;
  else if (shape == "mx") {
    if (s.find(':') != std::string_view::npos)
      return errorf("granularity 'mx' implies ue8m0 scales; found '", s, "'");
    return Granularity::mx();
  } else {
    size_t x = shape.find('x');
    auto r = x == std::string_view::npos ? std::nullopt
                                         : parseBlockDim(shape.substr(0, x));
    auto c = x == std::string_view::npos ? std::nullopt
                                         : parseBlockDim(shape.substr(x + 1));
    if (!r || !c)
      return errorf("expected a granularity (per_tensor, per_row, per_column, "
                    "mx or <rows>x<cols>), found '",
                    s, "'");
    g.rows = *r;
    g.cols = *c;
  }
  return g;
}

int64_t sizeOf(DType t) {
  switch (t) {
  case DType::E4M3FN:
  case DType::E5M2:
  case DType::UE8M0:
    return 1;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  }
  return 0;
}

float fp8MaxFinite(DType t) { return t == DType::E5M2 ? 57344.0f : 448.0f; }

} // namespace fp8
