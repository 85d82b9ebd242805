//===- TuningDb.cpp - Measured tile configurations, by recipe and shape ---===//

#include "codegen/TuningDb.h"

#include "core/InputFile.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace fp8 {

using json = nlohmann::json;

Expected<TuningDb> TuningDb::parse(const std::string &text,
                                   const std::string &where) {
  auto parsed = parseJsonInput(text, "tuning database " + where);
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  if (!j.is_object() || !j.contains("format"))
    return errorf("expected tuning database ", where,
                  " to be an object with a 'format' key");
  JsonFields top(j, "tuning database " + where);
  int64_t format = 0;
  FP8_RETURN_IF_ERROR(top.integer("format", format, IntRange{}));
  if (format != kTuningDbFormat)
    return errorf("tuning database ", where, " has format ", format,
                  "; this build reads format ", kTuningDbFormat);
  if (!j.contains("entries") || !j["entries"].is_array())
    return errorf("expected an 'entries' array in tuning database ", where);
  TuningDb db;
  size_t index = 0;
  for (const json &e : j["entries"]) {
    const std::string at = where + ", entry " + std::to_string(index++);
    if (!e.is_object() || !e.contains("spec"))
      return errorf("expected an object with a 'spec' in ", at);
    auto spec = kernelSpecFromJSON(e["spec"].dump());
    if (!spec)
      return errorf(at, ": ", spec.message());
    if (spec->m <= 0)
      return errorf("expected a static positive shape in ", at, ", found ",
                    spec->m, "x", spec->n, "x", spec->k);
    TuningEntry entry;
    entry.spec = *spec;
    JsonFields f(e, at);
    FP8_RETURN_IF_ERROR(f.number("tflops", entry.tflops, Presence::Optional));
    FP8_RETURN_IF_ERROR(f.string("note", entry.note, Presence::Optional));
    db.entries_.push_back(std::move(entry));
  }
  return db;
}

Expected<TuningDb> TuningDb::load(const std::string &path) {
  Expected<std::string> text =
      readInputFile(path, kMaxTuningDbBytes, "tuning database");
  if (!text)
    return text.status();
  return parse(*text, "'" + path + "'");
}

namespace {
/// Same recipe: everything but the shape and the tile.
bool sameRecipe(const KernelSpec &a, const KernelSpec &b) {
  return a.arch == b.arch && a.kind == b.kind && a.groups == b.groups &&
         a.a == b.a && a.b == b.b &&
         a.promotionInterval == b.promotionInterval && a.out == b.out &&
         a.accumulate == b.accumulate;
}

double logDist(int64_t x, int64_t y) {
  return std::fabs(std::log2(double(std::max<int64_t>(x, 1))) -
                   std::log2(double(std::max<int64_t>(y, 1))));
}
} // namespace

std::optional<TuningDb::Match> TuningDb::lookup(const KernelSpec &spec,
                                                int64_t m) const {
  const TuningEntry *best = nullptr;
  double bestCost = std::numeric_limits<double>::infinity();
  for (const TuningEntry &e : entries_) {
    if (!sameRecipe(e.spec, spec))
      continue;
    // Same N and K first (the kernel's code depends on them), then M.
    const bool sameNK = e.spec.n == spec.n && e.spec.k == spec.k;
    const double cost = (sameNK ? 0.0
                                : 1000.0 + logDist(e.spec.n, spec.n) +
                                      logDist(e.spec.k, spec.k)) +
                        logDist(e.spec.m, m);
    if (cost < bestCost) {
      bestCost = cost;
      best = &e;
    }
  }
  if (!best)
    return std::nullopt;
  Match match;
  match.tile = best->spec.tile;
  match.m = best->spec.m;
  match.n = best->spec.n;
  match.k = best->spec.k;
  match.exact =
      best->spec.m == m && best->spec.n == spec.n && best->spec.k == spec.k;
  match.tflops = best->tflops;
  return match;
}

std::string TuningDb::toJSON(int indent) const {
  json entries = json::array();
  for (const TuningEntry &e : entries_) {
    json j{{"spec", json::parse(fp8::toJSON(e.spec))}};
    if (e.tflops > 0)
      j["tflops"] = e.tflops;
    if (!e.note.empty())
      j["note"] = e.note;
    entries.push_back(j);
  }
  return json{{"format", kTuningDbFormat}, {"entries", entries}}.dump(indent);
}

} // namespace fp8
