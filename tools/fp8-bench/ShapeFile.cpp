//===- ShapeFile.cpp - fp8-bench's shapes and roofline --------------------===//

#include "tools/fp8-bench/ShapeFile.h"

#include "core/InputFile.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace fp8::bench {

using json = nlohmann::json;

namespace {

[[noreturn]] void refuse(const std::string &message) {
  std::fprintf(stderr, "fp8-bench: %s\n", message.c_str());
  std::exit(2);
}

/// The roofline of "roofline_h100_sxm", where the file states it.
void readRoofline(const json &file, const std::string &path, ShapeFile &out) {
  if (!file.contains("roofline_h100_sxm"))
    return;
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
    refuse("expected positive numbers 'fp8_dense_tflops' and 'hbm_tb_per_s' "
           "in 'roofline_h100_sxm' of '" +
           path + "'");
}

/// One entry of "dense".
Shape readShape(const json &s, const std::string &path) {
  auto dim = [&](const char *key, int64_t hi) -> int64_t {
    if (!s.is_object() || !s.contains(key) || !s[key].is_number_integer())
      return 0;
    const int64_t v = s[key].get<int64_t>();
    return v >= 1 && v <= hi ? v : 0;
  };
  Shape sh{dim("M", kMaxBenchM), dim("N", kMaxBenchNK), dim("K", kMaxBenchNK)};
  if (sh.m == 0 || sh.n == 0 || sh.k == 0)
    refuse("expected each entry of 'dense' in '" + path +
           "' to have integers M in [1, " + std::to_string(kMaxBenchM) +
           "], N and K in [1, " + std::to_string(kMaxBenchNK) + "], found " +
           s.dump().substr(0, 200));
  return sh;
}

/// One entry of a grouped list.
GroupedShape readEntry(const json &e, const std::string &list,
                       const std::string &path) {
  auto dim = [&](const char *key, int64_t hi) -> int64_t {
    if (!e.is_object() || !e.contains(key) || !e[key].is_number_integer())
      return 0;
    const int64_t v = e[key].get<int64_t>();
    return v >= 1 && v <= hi ? v : 0;
  };
  GroupedShape s;
  s.list = list;
  s.kind = list == "grouped_contiguous" ? GemmKind::GroupedContiguous
           : list == "grouped_k"        ? GemmKind::GroupedK
                                        : GemmKind::GroupedMasked;
  s.decode = list == "grouped_masked_decode";
  s.groups = dim("groups", 1024);
  if (s.kind == GemmKind::GroupedK) {
    s.mPerGroup = dim("M", kMaxBenchNK);
    s.n = dim("N", kMaxBenchNK);
    s.kMin = dim("K_min", kMaxBenchNK);
    s.kMax = dim("K_max", kMaxBenchNK);
    if (!s.groups || !s.mPerGroup || !s.n || s.kMin < 128 || s.kMax < s.kMin)
      refuse("expected each entry of 'grouped_k' in '" + path +
             "' to have integers groups in [1, 1024], M and N in [1, " +
             std::to_string(kMaxBenchNK) +
             "], 128 <= K_min <= K_max <= " + std::to_string(kMaxBenchNK) +
             ", found " + e.dump().substr(0, 200));
    return s;
  }
  s.mPerGroup = dim("M_per_group", 1 << 16);
  s.n = dim("N", kMaxBenchNK);
  s.k = dim("K", kMaxBenchNK);
  if (!s.groups || !s.mPerGroup || !s.n || !s.k)
    refuse("expected each entry of '" + list + "' in '" + path +
           "' to have integers groups in [1, 1024], M_per_group in [1, "
           "65536], N and K in [1, " +
           std::to_string(kMaxBenchNK) + "], found " + e.dump().substr(0, 200));
  return s;
}

/// Whether --m and --only keep `sh`.
bool selected(const Options &opt, const Shape &sh) {
  if (!opt.ms.empty() &&
      std::find(opt.ms.begin(), opt.ms.end(), sh.m) == opt.ms.end())
    return false;
  if (!opt.only.empty()) {
    std::ostringstream os;
    os << sh.m << "x" << sh.n << "x" << sh.k;
    if (os.str() != opt.only)
      return false;
  }
  return true;
}

} // namespace

ShapeFile readShapeFile(const Options &opt) {
  auto text = readInputFile(opt.shapes, 1 << 20, "shape file");
  if (!text)
    refuse(text.message());
  auto parsed = parseJsonInput(*text, "the shape file '" + opt.shapes + "'");
  if (!parsed)
    refuse(parsed.message());
  const json &file = *parsed;
  if (!file.is_object() || !file.contains("dense") || !file["dense"].is_array())
    refuse("expected a JSON object with a 'dense' list in '" + opt.shapes +
           "'");
  ShapeFile out;
  readRoofline(file, opt.shapes, out);
  for (const json &s : file["dense"]) {
    const Shape sh = readShape(s, opt.shapes);
    if (selected(opt, sh))
      out.shapes.push_back(sh);
  }
  for (const char *list : {"grouped_contiguous", "grouped_masked",
                           "grouped_masked_decode", "grouped_k"}) {
    if (!file.contains(list))
      continue;
    if (!file[list].is_array())
      refuse(std::string("expected '") + list + "' in '" + opt.shapes +
             "' to be a list");
    for (const json &e : file[list])
      out.grouped.push_back(readEntry(e, list, opt.shapes));
  }
  return out;
}

} // namespace fp8::bench
