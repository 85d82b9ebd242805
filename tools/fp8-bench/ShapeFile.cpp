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
  return out;
}

} // namespace fp8::bench
