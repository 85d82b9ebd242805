//===- ParseNumber.h - Strict numbers from text -----------------*- C++ -*-===//
//
// One reading of an integer argument, environment variable or field written
// as text: optional '-', then decimal digits only (no spaces, no '+', no
// trailing characters), no overflow, within [lo, hi]. atoi and strtoll
// accept "12abc", " 12" and clamp 99999999999999999999; this does not.
// Floating-point numbers are read whole and finite (parseFinite).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_PARSENUMBER_H
#define FP8_CODEGEN_PARSENUMBER_H

#include "core/Status.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace fp8 {

/// The unsigned integer `text` spells (digits only), if within [lo, hi].
inline std::optional<uint64_t> parseUnsigned(std::string_view text, uint64_t lo,
                                             uint64_t hi) {
  if (text.empty())
    return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    const uint64_t digit = uint64_t(c - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    v = v * 10 + digit;
  }
  if (v < lo || v > hi)
    return std::nullopt;
  return v;
}

/// The integer `text` spells (an optional '-', then digits), if within
/// [lo, hi].
inline std::optional<int64_t> parseInteger(std::string_view text, int64_t lo,
                                           int64_t hi) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::optional<uint64_t> magnitude =
      parseUnsigned(negative ? text.substr(1) : text, 0,
                    negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX));
  if (!magnitude)
    return std::nullopt;
  const int64_t v = negative ? int64_t(0 - *magnitude) : int64_t(*magnitude);
  if (v < lo || v > hi)
    return std::nullopt;
  return v;
}

/// parseInteger, or an error naming `what` (an argument or variable), the
/// range and the text: "expected --iters to be an integer in [1, 100000],
/// found 'x'".
inline Expected<int64_t> parseInteger(std::string_view text, int64_t lo,
                                      int64_t hi, std::string_view what) {
  if (auto v = parseInteger(text, lo, hi))
    return *v;
  return errorf("expected ", what, " to be an integer in [", lo, ", ", hi,
                "], found '", text, "'");
}

/// The finite number `text` spells whole (strtod's syntax, no leading
/// space, no trailing text), if it does not overflow.
inline std::optional<double> parseFinite(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front())))
    return std::nullopt;
  const std::string s(text);
  char *end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    return std::nullopt;
  return v;
}

} // namespace fp8

#endif // FP8_CODEGEN_PARSENUMBER_H
