//===- JsonFields.cpp - Typed, range-checked fields of JSON objects -------===//

#include "core/JsonFields.h"

#include <cmath>

namespace fp8 {

using json = nlohmann::json;

namespace {
/// A value as a message shows it: its JSON text, cut after 64 characters.
std::string excerpt(const json &v) {
  std::string s = v.dump();
  return s.size() > 64 ? s.substr(0, 64) + "..." : s;
}
} // namespace

Status integerFieldError(std::string_view key, std::string_view where,
                         IntRange range, std::string_view found) {
  const IntRange all;
  if (range.min == all.min && range.max == all.max)
    return errorf("expected '", key, "' in ", where,
                  " to be a 64-bit integer, found ", found);
  return errorf("expected '", key, "' in ", where, " to be an integer in [",
                range.min, ", ", range.max, "], found ", found);
}

Status JsonFields::missing(const char *key) const {
  return errorf("expected key '", key, "' in ", where_);
}

Status JsonFields::wrongType(const char *key, std::string_view expected) const {
  return errorf("expected '", key, "' in ", where_, " to be ", expected,
                ", found ", excerpt(j_.at(key)));
}

Status JsonFields::readInteger(const char *key, IntRange range,
                               Presence presence,
                               std::optional<int64_t> &out) const {
  auto it = j_.find(key);
  if (it == j_.end())
    return presence == Presence::Required ? missing(key) : Status::ok();
  const json &v = *it;
  // is_number_integer() is false for booleans and floats: 128.5, 128.0 and
  // true are refused, not converted.
  if (!v.is_number_integer())
    return integerFieldError(key, where_, range, excerpt(v));
  if (v.is_number_unsigned()) {
    // Above INT64_MAX a conversion to int64_t would wrap.
    const uint64_t u = v.get<uint64_t>();
    if (range.max < 0 || u > uint64_t(range.max))
      return integerFieldError(key, where_, range, excerpt(v));
    if (!range.contains(int64_t(u)))
      return integerFieldError(key, where_, range, excerpt(v));
    out = int64_t(u);
    return Status::ok();
  }
  const int64_t s = v.get<int64_t>();
  if (!range.contains(s))
    return integerFieldError(key, where_, range, excerpt(v));
  out = s;
  return Status::ok();
}

Status JsonFields::boolean(const char *key, bool &out,
                           Presence presence) const {
  auto it = j_.find(key);
  if (it == j_.end())
    return presence == Presence::Required ? missing(key) : Status::ok();
  if (!it->is_boolean())
    return wrongType(key, "a boolean");
  out = it->get<bool>();
  return Status::ok();
}

Status JsonFields::number(const char *key, double &out,
                          Presence presence) const {
  auto it = j_.find(key);
  if (it == j_.end())
    return presence == Presence::Required ? missing(key) : Status::ok();
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    return wrongType(key, "a finite number");
  out = it->get<double>();
  return Status::ok();
}

Status JsonFields::string(const char *key, std::string &out,
                          Presence presence) const {
  auto it = j_.find(key);
  if (it == j_.end())
    return presence == Presence::Required ? missing(key) : Status::ok();
  if (!it->is_string())
    return wrongType(key, "a string");
  out = it->get<std::string>();
  return Status::ok();
}

Status JsonFields::strings(const char *key, std::vector<std::string> &out,
                           Presence presence) const {
  auto it = j_.find(key);
  if (it == j_.end())
    return presence == Presence::Required ? missing(key) : Status::ok();
  if (!it->is_array())
    return wrongType(key, "an array of strings");
  std::vector<std::string> values;
  for (const json &e : *it) {
    if (!e.is_string())
      return errorf("expected '", key, "' in ", where_,
                    " to be an array of strings, found the element ",
                    excerpt(e));
    values.push_back(e.get<std::string>());
  }
  out = std::move(values);
  return Status::ok();
}

Status JsonFields::object(const char *key, const json *&out,
                          Presence presence) const {
  out = nullptr;
  auto it = j_.find(key);
  if (it == j_.end())
    return presence == Presence::Required ? missing(key) : Status::ok();
  if (!it->is_object())
    return wrongType(key, "an object");
  out = &*it;
  return Status::ok();
}

} // namespace fp8
