//===- ShapeFile.cpp - The GEMM shape files of bench/ ---------------------===//

#include "tools/shapes/ShapeFile.h"

#include "core/InputFile.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace fp8 {

using json = nlohmann::json;

namespace {

/// The roofline of "roofline_h100_sxm", where the file states it.
Status readRoofline(const json &file, const std::string &path, ShapeFile &out) {
  if (!file.contains("roofline_h100_sxm"))
    return Status::ok();
  const json &r = file["roofline_h100_sxm"];
  auto positive = [&](const char *key, double &value) {
    if (!r.is_object() || !r.contains(key))
      return true;
    if (!r[key].is_number() || !(r[key].get<double>() > 0))
      return false;
    value = r[key].get<double>();
    return true;
  };
  if (!positive("fp8_dense_tflops", out.peakTflops) ||
      !positive("hbm_tb_per_s", out.tbps))
    return errorf("expected positive numbers 'fp8_dense_tflops' and "
                  "'hbm_tb_per_s' in 'roofline_h100_sxm' of '",
                  path, "'");
  return Status::ok();
}

/// The integer `key` of `e` in [1, hi], or 0.
int64_t dim(const json &e, const char *key, int64_t hi) {
  if (!e.is_object() || !e.contains(key) || !e[key].is_number_integer())
    return 0;
  const int64_t v = e[key].get<int64_t>();
  return v >= 1 && v <= hi ? v : 0;
}

/// One entry of "dense".
Expected<DenseShape> readDense(const json &e, const std::string &path) {
  DenseShape s{dim(e, "M", kMaxShapeM), dim(e, "N", kMaxShapeNK),
               dim(e, "K", kMaxShapeNK)};
  if (s.m == 0 || s.n == 0 || s.k == 0)
    return errorf("expected each entry of 'dense' in '", path,
                  "' to have integers M in [1, ", kMaxShapeM,
                  "], N and K in [1, ", kMaxShapeNK, "], found ",
                  e.dump().substr(0, 200));
  return s;
}

/// One entry of a grouped list.
Expected<GroupedShape> readGrouped(const json &e, const std::string &list,
                                   const std::string &path) {
  GroupedShape s;
  s.list = list;
  s.kind = list == "grouped_contiguous" ? GemmKind::GroupedContiguous
           : list == "grouped_k"        ? GemmKind::GroupedK
                                        : GemmKind::GroupedMasked;
  s.decode = list == "grouped_masked_decode";
  s.groups = dim(e, "groups", 1024);
  if (s.kind == GemmKind::GroupedK) {
    s.mPerGroup = dim(e, "M", kMaxShapeNK);
    s.n = dim(e, "N", kMaxShapeNK);
    s.kMin = dim(e, "K_min", kMaxShapeNK);
    s.kMax = dim(e, "K_max", kMaxShapeNK);
    if (!s.groups || !s.mPerGroup || !s.n || s.kMin < 128 || s.kMax < s.kMin)
      return errorf("expected each entry of 'grouped_k' in '", path,
                    "' to have integers groups in [1, 1024], M and N in [1, ",
                    kMaxShapeNK, "], 128 <= K_min <= K_max <= ", kMaxShapeNK,
                    ", found ", e.dump().substr(0, 200));
    return s;
  }
  s.mPerGroup = dim(e, "M_per_group", 1 << 16);
  s.n = dim(e, "N", kMaxShapeNK);
  s.k = dim(e, "K", kMaxShapeNK);
  if (!s.groups || !s.mPerGroup || !s.n || !s.k)
    return errorf("expected each entry of '", list, "' in '", path,
                  "' to have integers groups in [1, 1024], M_per_group in [1, "
                  "65536], N and K in [1, ",
                  kMaxShapeNK, "], found ", e.dump().substr(0, 200));
  return s;
}

} // namespace

Expected<ShapeFile> readShapeFile(const std::string &path) {
  Expected<std::string> text = readInputFile(path, 1 << 20, "shape file");
  if (!text)
    return text.status();
  Expected<json> parsed =
      parseJsonInput(*text, "the shape file '" + path + "'");
  if (!parsed)
    return parsed.status();
  const json &file = *parsed;
  if (!file.is_object() || !file.contains("dense") || !file["dense"].is_array())
    return errorf("expected a JSON object with a 'dense' list in '", path, "'");
  ShapeFile out;
  FP8_RETURN_IF_ERROR(readRoofline(file, path, out));
  for (const json &e : file["dense"]) {
    Expected<DenseShape> s = readDense(e, path);
    if (!s)
      return s.status();
    out.dense.push_back(*s);
  }
  for (const char *list : {"grouped_contiguous", "grouped_masked",
                           "grouped_masked_decode", "grouped_k"}) {
    if (!file.contains(list))
      continue;
    if (!file[list].is_array())
      return errorf("expected '", list, "' in '", path, "' to be a list");
    for (const json &e : file[list]) {
      Expected<GroupedShape> s = readGrouped(e, list, path);
      if (!s)
        return s.status();
      out.grouped.push_back(*s);
    }
  }
  return out;
}

GroupedDraw drawGrouped(const GroupedShape &s, size_t index) {
  std::mt19937_64 rng(2026 + index);
  GroupedDraw d;
  if (s.kind == GemmKind::GroupedK) {
    std::uniform_int_distribution<int64_t> draw(s.kMin / 128, s.kMax / 128);
    for (int64_t g = 0; g < s.groups; ++g) {
      d.ks.push_back(int32_t(draw(rng) * 128));
      d.k += d.ks.back();
    }
    d.m = s.mPerGroup;
    return d;
  }
  std::uniform_real_distribution<double> u(0.7, 1.3);
  int64_t all = 0;
  for (int64_t g = 0; g < s.groups; ++g) {
    d.rows.push_back(
        std::max<int32_t>(1, int32_t(std::lround(s.mPerGroup * u(rng)))));
    all += d.rows.back();
  }
  d.k = s.k;
  if (s.kind == GemmKind::GroupedMasked) {
    const int64_t most = int64_t(std::ceil(1.3 * double(s.mPerGroup))) + 1;
    d.m = (most + 63) / 64 * 64;
    d.expectedM = s.mPerGroup;
  } else {
    d.m = all;
  }
  return d;
}

GroupedGemmShape launchShape(const GroupedShape &s, const GroupedDraw &d) {
  GroupedGemmShape shape;
  shape.kind = s.kind;
  shape.groups = s.groups;
  shape.m = d.m;
  shape.n = s.n;
  shape.k = d.k;
  shape.expectedM = d.expectedM;
  return shape;
}

} // namespace fp8
