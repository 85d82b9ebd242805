//===- KernelSpec.cpp - Kernel naming and JSON form -----------------------===//

#include "core/KernelSpec.h"

#include "core/EwProgramJson.h"
#include "core/InputFile.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <cstdio>

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

bool GemmEpilogue::operator==(const GemmEpilogue &o) const {
  return program == o.program && pairBlock == o.pairBlock &&
         format == o.format && granularity == o.granularity;
}

bool KernelSpec::operator==(const KernelSpec &o) const {
  return arch == o.arch && kind == o.kind && m == o.m && n == o.n && k == o.k &&
         groups == o.groups && a == o.a && b == o.b &&
         promotionInterval == o.promotionInterval && out == o.out &&
         accumulate == o.accumulate && amaxOut == o.amaxOut &&
         epilogue == o.epilogue && tile == o.tile;
}

std::string_view toString(GemmKind k) {
  switch (k) {
  case GemmKind::Dense:
    return "dense";
  case GemmKind::GroupedContiguous:
    return "grouped_contiguous";
  case GemmKind::GroupedMasked:
    return "grouped_masked";
  case GemmKind::GroupedK:
    return "grouped_k";
  }
  return "?";
}

std::optional<GemmKind> parseGemmKind(std::string_view s) {
  for (GemmKind k : {GemmKind::Dense, GemmKind::GroupedContiguous,
                     GemmKind::GroupedMasked, GemmKind::GroupedK})
    if (toString(k) == s)
      return k;
  return std::nullopt;
}

std::string granularityTag(const Granularity &g) {
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

std::string nameHash8(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08llx",
                static_cast<unsigned long long>(h & 0xFFFFFFFFull));
  return buf;
}

namespace {

/// The part of a spec's identity that is the problem: every field but M, the
/// group count (the dense generators take none), a K-grouped GEMM's K (both
/// launch values) and the tile; `withK` adds that K.
std::string problemPart(const KernelSpec &s, bool withK) {
  std::string p = "fp8_gemm_";
  p += s.arch == Arch::SM90a ? "sm90a" : "sm100a";
  switch (s.kind) {
  case GemmKind::Dense:
    break;
  case GemmKind::GroupedContiguous:
    p += "_gc";
    break;
  case GemmKind::GroupedMasked:
    p += "_gm";
    break;
  case GemmKind::GroupedK:
    p += "_gk";
    break;
  }
  p += "_n" + std::to_string(s.n);
  if (s.kind != GemmKind::GroupedK || withK)
    p += "_k" + std::to_string(s.k);
  p += "_";
  p += tagOf(s.a.format);
  p += s.a.layout == Layout::KMajor ? "t" : "n";
  p += granularityTag(s.a.granularity);
  p += "_";
  p += tagOf(s.b.format);
  p += s.b.layout == Layout::KMajor ? "t" : "n";
  p += granularityTag(s.b.granularity);
  p += "_p" + std::to_string(promotionToInt(s.promotionInterval));
  p += "_";
  p += tagOf(s.out);
  if (s.accumulate)
    p += "acc";
  if (s.amaxOut)
    p += "amax";
  if (const std::optional<GemmEpilogue> &e = s.epilogue) {
    // The quantized output, its pairing, and the program by a hash.
    p += "_q";
    p += tagOf(e->format);
    p += granularityTag(e->granularity);
    if (e->pairBlock > 0)
      p += "pb" + std::to_string(e->pairBlock);
    p += "_" + nameHash8(toJSON(e->program));
  }
  return p;
}

} // namespace

std::string TileConfig::name() const {
  const TileConfig &t = *this;
  std::string p = std::to_string(t.blockM) + "x" + std::to_string(t.blockN) +
                  "x" + std::to_string(t.blockK);
  p += "s" + std::to_string(t.stages) + "w" + std::to_string(t.mathWarpgroups);
  p += "c" + std::to_string(t.clusterM) + "x" + std::to_string(t.clusterN);
  p += t.raster == Raster::AlongN ? "rn" : "rm";
  p += std::to_string(t.swizzleGroup);
  if (!t.persistent)
    p += "np";
  if (t.splitK > 1)
    p += "sk" + std::to_string(t.splitK);
  if (t.tailSplit > 1)
    p += "ts" + std::to_string(t.tailSplit);
  if (t.ctaGroup > 1)
    p += "cg" + std::to_string(t.ctaGroup);
  if (t.overlap != PromotionOverlap::None)
    p += t.overlap == PromotionOverlap::AlternateK ? "ovk" : "ovn";
  return p;
}

std::string KernelSpec::kernelName() const {
  return problemPart(*this, false) + "_" + tile.name();
}

std::string KernelSpec::problemKey() const {
  return problemPart(*this, true) + "_m" + std::to_string(m);
}

Status checkGemmShape(const KernelSpec &s) {
  if (s.n <= 0 || s.k <= 0)
    return errorf("expected positive N and K, found N = ", s.n, ", K = ", s.k);
  if (s.n > (int64_t(1) << 31) - 1 || s.k > (int64_t(1) << 31) - 1)
    return errorf("expected N and K below 2^31, found N = ", s.n,
                  ", K = ", s.k);
  if (s.k % 16 != 0)
    return errorf("expected K (", s.k,
                  ") to be a multiple of 16: TMA needs 16-byte aligned row "
                  "strides for the FP8 operands");
  if (s.kind == GemmKind::Dense && s.groups != 1)
    return errorf("expected groups 1 for a dense GEMM, found ", s.groups);
  return Status::ok();
}

Status checkDenseGemmShape(const KernelSpec &s) {
  if (s.kind != GemmKind::Dense)
    return errorf("the ", toString(s.arch),
                  " generator supports dense GEMMs only; grouped GEMMs are "
                  "generated for sm_90a");
  return checkGemmShape(s);
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

static json epilogueToJSON(const GemmEpilogue &e) {
  return json{{"program", ewProgramToJson(e.program)},
              {"pair_block", e.pairBlock},
              {"format", std::string(toString(e.format))},
              {"granularity", granToJSON(e.granularity)}};
}

std::string toJSON(const KernelSpec &s, int indent) {
  json j{{"arch", std::string(toString(s.arch))},
         {"kind", std::string(toString(s.kind))},
         {"m", s.m},
         {"n", s.n},
         {"k", s.k},
         {"groups", s.groups},
         {"a", operandToJSON(s.a)},
         {"b", operandToJSON(s.b)},
         {"promotion_interval", promotionToInt(s.promotionInterval)},
         {"out", std::string(toString(s.out))},
         {"accumulate", s.accumulate},
         {"tile", tileToJSON(s.tile)}};
  // Written only when set: the specs without it keep their bytes.
  if (s.amaxOut)
    j["amax_out"] = true;
  if (s.epilogue)
    j["epilogue"] = epilogueToJSON(*s.epilogue);
  return j.dump(indent);
}

namespace {
/// An integer field of TileConfig: its JSON key, its member and its range.
/// The ranges hold what any generator emits (the union over the archs;
/// codegen's arch checks narrow them): the JSON reader and checkTileConfig
/// both use this one table, so that no value outside it reaches the
/// generators' arithmetic (a block of 0 divides by zero).
struct TileIntField {
  const char *key;
  int TileConfig::*member;
  IntRange range;
  Presence presence;
};

constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

const TileIntField kTileIntFields[] = {
    {"block_m", &TileConfig::blockM, {1, 256}, Presence::Required},
    {"block_n", &TileConfig::blockN, {1, 256}, Presence::Required},
    {"block_k", &TileConfig::blockK, {1, 256}, Presence::Required},
    // At least double buffering; 32 stages of the smallest tile (64 x 8)
    // already exceed shared memory on both archs.
    {"stages", &TileConfig::stages, {2, 32}, Presence::Required},
    {"math_warpgroups",
     &TileConfig::mathWarpgroups,
     {1, 4},
     Presence::Optional},
    {"cluster_m", &TileConfig::clusterM, {1, 2}, Presence::Optional},
    {"cluster_n", &TileConfig::clusterN, {1, 2}, Presence::Optional},
    {"swizzle_group", &TileConfig::swizzleGroup, {1, 64}, Presence::Optional},
    // One slice per 128-element k-block at most: K < 2^31.
    {"split_k", &TileConfig::splitK, {1, int64_t(1) << 24}, Presence::Optional},
    {"tail_split", &TileConfig::tailSplit, {1, 8}, Presence::Optional},
    {"cta_group", &TileConfig::ctaGroup, {1, 2}, Presence::Optional},
};

/// An integer field of KernelSpec (see TileIntField).
struct SpecIntField {
  const char *key;
  int64_t KernelSpec::*member;
  IntRange range;
  Presence presence;
};

const SpecIntField kSpecIntFields[] = {
    // kDynamic (-1): M known only at launch.
    {"m", &KernelSpec::m, {kDynamic, kMaxDim}, Presence::Optional},
    {"n", &KernelSpec::n, {1, kMaxDim}, Presence::Required},
    // kDynamic: a K-grouped GEMM's K (every group's tokens), known only at
    // launch (checked below: no other kind takes it).
    {"k", &KernelSpec::k, {kDynamic, kMaxDim}, Presence::Required},
    {"groups", &KernelSpec::groups, {1, kMaxDim}, Presence::Optional},
};

/// promotion_interval: 0 (written for nullopt) or a positive interval.
constexpr IntRange kPromotionRange{0, kMaxDim};

std::optional<Raster> parseRaster(std::string_view s) {
  if (s == "along_n")
    return Raster::AlongN;
  if (s == "along_m")
    return Raster::AlongM;
  return std::nullopt;
}
} // namespace

Status checkTileConfig(const TileConfig &t) {
  for (const TileIntField &f : kTileIntFields)
    if (!f.range.contains(t.*f.member))
      return integerFieldError(f.key, "tile", f.range,
                               std::to_string(t.*f.member));
  return Status::ok();
}

namespace {
Status checkGemmEpilogue(const KernelSpec &s) {
  const GemmEpilogue &e = *s.epilogue;
  FP8_RETURN_IF_ERROR(checkProgram(e.program));
  const size_t want = e.pairBlock > 0 ? 2 : 1;
  if (e.program.inputs.size() != want)
    return errorf("expected the epilogue's program to read ", want,
                  want == 1 ? " input (the GEMM's result)"
                            : " inputs (the two halves of each block pair)",
                  ", found ", e.program.inputs.size());
  for (size_t i = 0; i < want; ++i)
    if (e.program.inputs[i] != s.out)
      return errorf("expected the epilogue's program input ", i,
                    " to have the GEMM's result type ", toString(s.out),
                    ", found ", toString(e.program.inputs[i]));
  if (e.program.broadcasts())
    return errorf("expected no broadcast input in the epilogue's program");
  if (!isFP8(e.format))
    return errorf("expected the epilogue to quantize to an FP8 format "
                  "(e4m3fn or e5m2), found ",
                  toString(e.format));
  const Granularity &g = e.granularity;
  if (g.rows != 1 || g.cols < 0)
    return errorf("expected the epilogue's scale blocks to lie along the "
                  "rows (1 x C or per_row), found ",
                  toString(g));
  if (e.pairBlock < 0 || e.pairBlock % 8 != 0 ||
      (e.pairBlock > 0 && s.n % (2 * e.pairBlock) != 0))
    return errorf("expected the epilogue's pair block to be 0 or a multiple "
                  "of 8 whose pairs tile N (",
                  s.n, "), found ", e.pairBlock);
  return Status::ok();
}
} // namespace

Status checkKernelSpec(const KernelSpec &s) {
  for (const SpecIntField &f : kSpecIntFields)
    if (!f.range.contains(s.*f.member))
      return integerFieldError(f.key, "kernel spec", f.range,
                               std::to_string(s.*f.member));
  if (s.k == 0 || (s.k == kDynamic && s.kind != GemmKind::GroupedK))
    return errorf("expected 'k' in kernel spec to be an integer in [1, ",
                  kMaxDim, "] (or ", kDynamic,
                  " for a grouped_k GEMM, whose K is known at launch), found ",
                  s.k);
  if (s.promotionInterval && (*s.promotionInterval == 0 ||
                              !kPromotionRange.contains(*s.promotionInterval)))
    return integerFieldError("promotion_interval", "kernel spec", {1, kMaxDim},
                             std::to_string(*s.promotionInterval));
  if (s.epilogue)
    FP8_RETURN_IF_ERROR(checkGemmEpilogue(s));
  if (s.amaxOut && s.epilogue)
    return errorf("expected no 'amax_out' in a kernel spec with a quantizing "
                  "epilogue (its D is FP8 codes with scales), found both");
  return checkTileConfig(s.tile);
}

static Status readTile(const json &j, TileConfig &t) {
  if (!j.is_object())
    return errorf("expected 'tile' to be an object, found ", j.type_name());
  JsonFields f(j, "tile");
  for (const TileIntField &field : kTileIntFields)
    FP8_RETURN_IF_ERROR(
        f.integer(field.key, t.*field.member, field.range, field.presence));
  FP8_RETURN_IF_ERROR(f.enumeration("raster", t.raster, parseRaster,
                                    "one of along_n, along_m",
                                    Presence::Optional));
  FP8_RETURN_IF_ERROR(
      f.boolean("persistent", t.persistent, Presence::Optional));
  FP8_RETURN_IF_ERROR(f.enumeration("overlap", t.overlap, parsePromotionOverlap,
                                    "one of none, k, n", Presence::Optional));
  return Status::ok();
}

static Status readOperand(const json &j, const char *name, OperandSpec &o) {
  if (!j.is_object())
    return errorf("expected operand '", name, "' to be an object, found ",
                  j.type_name());
  JsonFields f(j, std::string("operand '") + name + "'");
  FP8_RETURN_IF_ERROR(f.enumeration(
      "format", o.format, [](const std::string &s) { return parseDType(s); },
      "an element type"));
  FP8_RETURN_IF_ERROR(f.enumeration(
      "layout", o.layout, [](const std::string &s) { return parseLayout(s); },
      "one of k_major, mn_major", Presence::Optional));
  std::string g;
  FP8_RETURN_IF_ERROR(f.string("granularity", g));
  auto gran = parseGranularity(g);
  if (!gran)
    return gran.status();
  o.granularity = *gran;
  return Status::ok();
}

static Status readEpilogue(const json &j, GemmEpilogue &e) {
  JsonFields f(j, "epilogue");
  const json *program = nullptr;
  FP8_RETURN_IF_ERROR(f.object("program", program));
  Expected<EwProgram> p = ewProgramFromJson(*program);
  if (!p)
    return p.status().withContext("the epilogue's program");
  e.program = std::move(*p);
  FP8_RETURN_IF_ERROR(
      f.integer("pair_block", e.pairBlock, {0, 1 << 16}, Presence::Optional));
  FP8_RETURN_IF_ERROR(f.enumeration(
      "format", e.format, [](const std::string &t) { return parseDType(t); },
      "an element type"));
  std::string g;
  FP8_RETURN_IF_ERROR(f.string("granularity", g));
  auto gran = parseGranularity(g);
  if (!gran)
    return gran.status();
  e.granularity = *gran;
  return Status::ok();
}

Expected<TileConfig> tileConfigFromJSON(const std::string &text) {
  auto parsed = parseJsonInput(text, "tile config");
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  TileConfig t;
  FP8_RETURN_IF_ERROR(readTile(j, t));
  return t;
}

Expected<KernelSpec> kernelSpecFromJSON(const std::string &text) {
  auto parsed = parseJsonInput(text, "kernel spec");
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  if (!j.is_object())
    return errorf("expected a kernel spec object, found ", j.type_name());
  KernelSpec s;
  JsonFields f(j, "kernel spec");
  FP8_RETURN_IF_ERROR(f.enumeration(
      "arch", s.arch, [](const std::string &a) { return parseArch(a); },
      "one of sm_90a, sm_100a"));
  FP8_RETURN_IF_ERROR(f.enumeration(
      "kind", s.kind, parseGemmKind,
      "one of dense, grouped_contiguous, grouped_masked", Presence::Optional));
  for (const SpecIntField &field : kSpecIntFields)
    FP8_RETURN_IF_ERROR(
        f.integer(field.key, s.*field.member, field.range, field.presence));
  int64_t promotion = 0;
  FP8_RETURN_IF_ERROR(
      f.integer("promotion_interval", promotion, kPromotionRange));
  s.promotionInterval = promotionFromInt(promotion);
  FP8_RETURN_IF_ERROR(f.enumeration(
      "out", s.out, [](const std::string &t) { return parseDType(t); },
      "an element type"));
  FP8_RETURN_IF_ERROR(
      f.boolean("accumulate", s.accumulate, Presence::Optional));
  FP8_RETURN_IF_ERROR(f.boolean("amax_out", s.amaxOut, Presence::Optional));
  const json *a = nullptr, *b = nullptr, *tile = nullptr;
  FP8_RETURN_IF_ERROR(f.object("a", a));
  FP8_RETURN_IF_ERROR(f.object("b", b));
  FP8_RETURN_IF_ERROR(f.object("tile", tile));
  FP8_RETURN_IF_ERROR(readOperand(*a, "a", s.a));
  FP8_RETURN_IF_ERROR(readOperand(*b, "b", s.b));
  FP8_RETURN_IF_ERROR(readTile(*tile, s.tile));
  if (j.contains("epilogue")) {
    const json *e = nullptr;
    FP8_RETURN_IF_ERROR(f.object("epilogue", e));
    GemmEpilogue epi;
    FP8_RETURN_IF_ERROR(readEpilogue(*e, epi));
    s.epilogue = std::move(epi);
  }
  FP8_RETURN_IF_ERROR(checkKernelSpec(s));
  return s;
}

Expected<KernelSpec> loadKernelSpec(const std::string &path) {
  Expected<std::string> text =
      readInputFile(path, kMaxKernelSpecBytes, "kernel spec");
  if (!text)
    return text.status();
  Expected<KernelSpec> spec = kernelSpecFromJSON(*text);
  if (!spec)
    return spec.status().withContext("kernel spec '" + path + "'");
  return spec;
}

} // namespace fp8
