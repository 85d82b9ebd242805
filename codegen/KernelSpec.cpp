//===- KernelSpec.cpp - Kernel naming and JSON form
//------------------------===//

#include "codegen/KernelSpec.h"

#include <nlohmann/json.hpp>

namespace fp8 {

using json = nlohmann::json;

bool TileConfig::operator==(const TileConfig &o) const {
  return blockM == o.blockM && blockN == o.blockN && blockK == o.blockK &&
         stages == o.stages && mathWarpgroups == o.mathWarpgroups &&
         clusterM == o.clusterM && clusterN == o.clusterN &&
         raster == o.raster && swizzleGroup == o.swizzleGroup &&
         persistent == o.persistent && splitK == o.splitK &&
         tailSplit == o.tailSplit && ctaGroup == o.ctaGroup &&
         overlap == o.overlap;
}

bool KernelSpec::operator==(const KernelSpec &o) const {
  return arch == o.arch && kind == o.kind && m == o.m && n == o.n && k == o.k &&
         groups == o.groups && a == o.a && b == o.b &&
         promotionInterval == o.promotionInterval && out == o.out &&
         accumulate == o.accumulate && tile == o.tile;
}

static std::string_view kindName(GemmKind k) {
  switch (k) {
  case GemmKind::Dense:
    return "dense";
  case GemmKind::GroupedContiguous:
    return "grouped_contiguous";
  case GemmKind::GroupedMasked:
    return "grouped_masked";
  }
  return "?";
}

static std::optional<GemmKind> parseKind(std::string_view s) {
  for (GemmKind k :
       {GemmKind::Dense, GemmKind::GroupedContiguous, GemmKind::GroupedMasked})
    if (kindName(k) == s)
      return k;
  return std::nullopt;
}

static std::string granTag(const Granularity &g) {
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

static std::string_view fmtTag(DType t) {
  switch (t) {
  case DType::E4M3FN:
    return "e4m3";
  case DType::E5M2:
    return "e5m2";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  case DType::UE8M0:
    return "e8m0";
  }
  return "x";
}

std::string KernelSpec::kernelName() const {
  // M is deliberately absent: one kernel serves every M (it is a launch
  // argument), so the cache shares it across token counts.
  std::string s = "fp8_gemm_";
  s += arch == Arch::SM90a ? "sm90a" : "sm100a";
  if (kind != GemmKind::Dense)
    s += kind == GemmKind::GroupedContiguous ? "_gc" : "_gm";
  s += "_n" + std::to_string(n) + "_k" + std::to_string(k);
  s += "_";
  s += fmtTag(a.format);
  s += a.layout == Layout::KMajor ? "t" : "n";
  s += granTag(a.granularity);
  s += "_";
  s += fmtTag(b.format);
  s += b.layout == Layout::KMajor ? "t" : "n";
  s += granTag(b.granularity);
  s += "_p" + std::to_string(promotionInterval);
  s += "_";
  s += fmtTag(out);
  if (accumulate)
    s += "acc";
  s += "_" + std::to_string(tile.blockM) + "x" + std::to_string(tile.blockN) +
       "x" + std::to_string(tile.blockK);
  s += "s" + std::to_string(tile.stages) + "w" +
       std::to_string(tile.mathWarpgroups);
  s +=
      "c" + std::to_string(tile.clusterM) + "x" + std::to_string(tile.clusterN);
  s += tile.raster == Raster::AlongN ? "rn" : "rm";
  s += std::to_string(tile.swizzleGroup);
  if (!tile.persistent)
    s += "np";
  if (tile.splitK > 1)
    s += "sk" + std::to_string(tile.splitK);
  if (tile.tailSplit > 1)
    s += "ts" + std::to_string(tile.tailSplit);
  if (tile.ctaGroup > 1)
    s += "cg" + std::to_string(tile.ctaGroup);
  if (tile.overlap != PromotionOverlap::None)
    s += tile.overlap == PromotionOverlap::AlternateK ? "ovk" : "ovn";
  return s;
}

Status checkDenseGemmShape(const KernelSpec &s) {
  if (s.kind != GemmKind::Dense)
    return errorf("the ", toString(s.arch),
                  " generator supports dense GEMMs only; grouped GEMMs are "
                  "not implemented yet");
  if (s.n <= 0 || s.k <= 0)
    return errorf("expected positive N and K, found N = ", s.n, ", K = ", s.k);
  if (s.n > (int64_t(1) << 31) - 1 || s.k > (int64_t(1) << 31) - 1)
    return errorf("expected N and K below 2^31, found N = ", s.n,
                  ", K = ", s.k);
  if (s.k % 16 != 0)
    return errorf("expected K (", s.k,
                  ") to be a multiple of 16: TMA needs 16-byte aligned row "
                  "strides for the FP8 operands");
  return Status::ok();
}

std::string_view toString(PromotionOverlap o) {
  switch (o) {
  case PromotionOverlap::None:
    return "none";
  case PromotionOverlap::AlternateK:
    return "k";
  case PromotionOverlap::AlternateN:
    return "n";
  }
  return "?";
}

std::optional<PromotionOverlap> parsePromotionOverlap(std::string_view s) {
  if (s == "none")
    return PromotionOverlap::None;
  if (s == "k")
    return PromotionOverlap::AlternateK;
  if (s == "n")
    return PromotionOverlap::AlternateN;
  return std::nullopt;
}

static json granToJSON(const Granularity &g) { return toString(g); }

static json operandToJSON(const OperandSpec &o) {
  return json{{"format", std::string(toString(o.format))},
              {"layout", std::string(toString(o.layout))},
              {"granularity", granToJSON(o.granularity)}};
}

static json tileToJSON(const TileConfig &t) {
  return json{{"block_m", t.blockM},
              {"block_n", t.blockN},
              {"block_k", t.blockK},
              {"stages", t.stages},
              {"math_warpgroups", t.mathWarpgroups},
              {"cluster_m", t.clusterM},
              {"cluster_n", t.clusterN},
              {"raster", t.raster == Raster::AlongN ? "along_n" : "along_m"},
              {"swizzle_group", t.swizzleGroup},
              {"persistent", t.persistent},
              {"split_k", t.splitK},
              {"tail_split", t.tailSplit},
              {"cta_group", t.ctaGroup},
              {"overlap", std::string(toString(t.overlap))}};
}

std::string toJSON(const TileConfig &tile, int indent) {
  return tileToJSON(tile).dump(indent);
}

std::string toJSON(const KernelSpec &s, int indent) {
  json j{{"arch", std::string(toString(s.arch))},
         {"kind", std::string(kindName(s.kind))},
         {"m", s.m},
         {"n", s.n},
         {"k", s.k},
         {"groups", s.groups},
         {"a", operandToJSON(s.a)},
         {"b", operandToJSON(s.b)},
         {"promotion_interval", s.promotionInterval},
         {"out", std::string(toString(s.out))},
         {"accumulate", s.accumulate},
         {"tile", tileToJSON(s.tile)}};
  return j.dump(indent);
}

namespace {
/// Reads typed fields out of a JSON object, remembering the first error.
class Reader {
public:
  Reader(const json &j, std::string where) : j_(j), where_(std::move(where)) {}

  template <typename T> void get(const char *key, T &out, bool required) {
    if (!status_.isOk())
      return;
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required)
        status_ = errorf("expected key '", key, "' in ", where_);
      return;
    }
    try {
      out = it->get<T>();
    } catch (const json::exception &) {
      status_ = errorf("key '", key, "' in ", where_, " has the wrong type (",
                       it->type_name(), ")");
    }
  }

  template <typename E, typename Parse>
  void getEnum(const char *key, E &out, Parse parse, bool required) {
    std::string s;
    bool present = j_.contains(key);
    get(key, s, required);
    if (!status_.isOk() || !present)
      return;
    auto v = parse(s);
    if (!v) {
      status_ =
          errorf("unknown value '", s, "' for key '", key, "' in ", where_);
      return;
    }
    out = *v;
  }

  Status &status() { return status_; }

private:
  const json &j_;
  std::string where_;
  Status status_;
};
} // namespace

static Status readTile(const json &j, TileConfig &t) {
  if (!j.is_object())
    return errorf("expected 'tile' to be an object, found ", j.type_name());
  Reader r(j, "tile");
  r.get("block_m", t.blockM, true);
  r.get("block_n", t.blockN, true);
  r.get("block_k", t.blockK, true);
  r.get("stages", t.stages, true);
  r.get("math_warpgroups", t.mathWarpgroups, false);
  r.get("cluster_m", t.clusterM, false);
  r.get("cluster_n", t.clusterN, false);
  r.getEnum(
      "raster", t.raster,
      [](const std::string &s) -> std::optional<Raster> {
        if (s == "along_n")
          return Raster::AlongN;
        if (s == "along_m")
          return Raster::AlongM;
        return std::nullopt;
      },
      false);
  r.get("swizzle_group", t.swizzleGroup, false);
  r.get("persistent", t.persistent, false);
  r.get("split_k", t.splitK, false);
  r.get("tail_split", t.tailSplit, false);
  r.get("cta_group", t.ctaGroup, false);
  r.getEnum("overlap", t.overlap, parsePromotionOverlap, false);
  return r.status();
}

static Status readOperand(const json &j, const char *name, OperandSpec &o) {
  if (!j.is_object())
    return errorf("expected operand '", name, "' to be an object, found ",
                  j.type_name());
  Reader r(j, std::string("operand '") + name + "'");
  r.getEnum("format", o.format, parseDType, true);
  r.getEnum("layout", o.layout, parseLayout, false);
  std::string g;
  r.get("granularity", g, true);
  FP8_RETURN_IF_ERROR(r.status());
  auto gran = parseGranularity(g);
  if (!gran)
    return gran.status();
  o.granularity = *gran;
  return Status::ok();
}

Expected<TileConfig> tileConfigFromJSON(const std::string &text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return errorf("tile config is not valid JSON");
  TileConfig t;
  FP8_RETURN_IF_ERROR(readTile(j, t));
  return t;
}

Expected<KernelSpec> kernelSpecFromJSON(const std::string &text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return errorf("kernel spec is not valid JSON");
  if (!j.is_object())
    return errorf("expected a kernel spec object, found ", j.type_name());
  KernelSpec s;
  Reader r(j, "kernel spec");
  r.getEnum("arch", s.arch, parseArch, true);
  r.getEnum("kind", s.kind, parseKind, false);
  r.get("m", s.m, false);
  r.get("n", s.n, true);
  r.get("k", s.k, true);
  r.get("groups", s.groups, false);
  r.get("promotion_interval", s.promotionInterval, true);
  r.getEnum("out", s.out, parseDType, true);
  r.get("accumulate", s.accumulate, false);
  FP8_RETURN_IF_ERROR(r.status());
  if (!j.contains("a") || !j.contains("b") || !j.contains("tile"))
    return errorf("expected keys 'a', 'b' and 'tile' in kernel spec");
  FP8_RETURN_IF_ERROR(readOperand(j["a"], "a", s.a));
  FP8_RETURN_IF_ERROR(readOperand(j["b"], "b", s.b));
  FP8_RETURN_IF_ERROR(readTile(j["tile"], s.tile));
  return s;
}

} // namespace fp8
