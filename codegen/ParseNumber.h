//===- ParseNumber.h - Strict integers from text ----------------*- C++ -*-===//
//
// One reading of an integer argument, environment variable or field written
// as text: optional '-', then decimal digits only (no spaces, no '+', no
// trailing characters), no overflow, within [lo, hi]. atoi and strtoll
// accept "12abc", " 12" and clamp 99999999999999999999; this does not.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_PARSENUMBER_H
#define FP8_CODEGEN_PARSENUMBER_H

#include "codegen/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8 {

/// The integer `text` spells, if it spells one within [lo, hi].
inline std::optional<int64_t> parseInteger(std::string_view text, int64_t lo,
                                           int64_t hi) {
  const bool negative = !text.empty() && text.front() == '-';
  std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty())
    return std::nullopt;
  uint64_t magnitude = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    if (magnitude > (UINT64_MAX - 9) / 10)
      return std::nullopt;
    magnitude = magnitude * 10 + uint64_t(c - '0');
  }
  if (magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
    return std::nullopt;
  const int64_t v =
      negative ? int64_t(0 - magnitude) : static_cast<int64_t>(magnitude);
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

} // namespace fp8

#endif // FP8_CODEGEN_PARSENUMBER_H
