//===- JsonFields.h - Typed, range-checked fields of JSON objects ---------===//
//
// Plans, kernel specs and the tuning database are input, not trusted output:
// every field of them is read through JsonFields, which checks the JSON type
// exactly (an integer is a JSON integer: never a float, a boolean or a
// string) and the range before a value is narrowed to its C++ type, and
// whose messages name the field, the object it is in, what was expected and
// what was found. A present optional field of the wrong type is an error,
// never ignored.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_JSONFIELDS_H
#define FP8_CODEGEN_JSONFIELDS_H

#include "core/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fp8 {

/// An inclusive range of integers.
struct IntRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();

  bool contains(int64_t v) const { return v >= min && v <= max; }
};

/// Whether a field must be present.
enum class Presence : uint8_t { Required, Optional };

/// "expected 'key' in where to be an integer in [min, max], found found":
/// the one message for an integer field of the wrong type or out of range,
/// for JSON text and for values checked after parsing alike.
Status integerFieldError(std::string_view key, std::string_view where,
                         IntRange range, std::string_view found);

/// Reads the fields of one JSON object. Absent optional fields leave their
/// output untouched.
class JsonFields {
public:
  /// `object` must outlive the reader; `where` names it in messages
  /// ("tile", "step 'gemm_0'").
  JsonFields(const nlohmann::json &object, std::string where)
      : j_(object), where_(std::move(where)) {}

  const std::string &where() const { return where_; }
  bool has(const char *key) const { return j_.contains(key); }
  /// The raw value of a present key.
  const nlohmann::json &at(const char *key) const { return j_.at(key); }

  /// A JSON integer in `range` (checked before narrowing to Int, whose own
  /// limits `range` must respect).
  template <typename Int>
  Status integer(const char *key, Int &out, IntRange range,
                 Presence presence = Presence::Required) const {
    static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool>);
    std::optional<int64_t> v;
    FP8_RETURN_IF_ERROR(readInteger(key, range, presence, v));
    if (v)
      out = static_cast<Int>(*v);
    return Status::ok();
  }
  Status boolean(const char *key, bool &out,
                 Presence presence = Presence::Required) const;
  /// A finite JSON number (integer or not).
  Status number(const char *key, double &out,
                Presence presence = Presence::Required) const;
  Status string(const char *key, std::string &out,
                Presence presence = Presence::Required) const;
  /// An array of strings.
  Status strings(const char *key, std::vector<std::string> &out,
                 Presence presence = Presence::Required) const;
  /// An object; `out` points into the reader's JSON (nullptr when an
  /// optional object is absent).
  Status object(const char *key, const nlohmann::json *&out,
                Presence presence = Presence::Required) const;
  /// A string that `parse` maps to an enumerator (nullopt: unknown);
  /// `expected` describes the accepted spellings for the message ("one of
  /// along_n, along_m").
  template <typename E, typename Parse>
  Status enumeration(const char *key, E &out, Parse parse,
                     std::string_view expected,
                     Presence presence = Presence::Required) const {
    std::string s;
    if (presence == Presence::Optional && !has(key))
      return Status::ok();
    FP8_RETURN_IF_ERROR(string(key, s, presence));
    std::optional<E> v = parse(s);
    if (!v)
      return errorf("expected '", key, "' in ", where_, " to be ", expected,
                    ", found '", s, "'");
    out = *v;
    return Status::ok();
  }

private:
  Status readInteger(const char *key, IntRange range, Presence presence,
                     std::optional<int64_t> &out) const;
  /// The error for a present key of the wrong type.
  Status wrongType(const char *key, std::string_view expected) const;
  /// The error for an absent required key.
  Status missing(const char *key) const;

  const nlohmann::json &j_;
  std::string where_;
};

} // namespace fp8

#endif // FP8_CODEGEN_JSONFIELDS_H
