//===- Base64.cpp - base64 (RFC 4648) for a plan's constant data ----------===//

#include "runtime/plan/Base64.h"

#include <cstring>

namespace fp8 {

namespace {
constexpr char kB64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64Encode(const std::vector<uint8_t> &d) {
  std::string out;
  out.reserve((d.size() + 2) / 3 * 4);
  for (size_t i = 0; i < d.size(); i += 3) {
    uint32_t v = uint32_t(d[i]) << 16;
    if (i + 1 < d.size())
      v |= uint32_t(d[i + 1]) << 8;
    if (i + 2 < d.size())
      v |= d[i + 2];
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < d.size() ? kB64[(v >> 6) & 63] : '=';
    out += i + 2 < d.size() ? kB64[v & 63] : '=';
  }
  return out;
}

Expected<std::vector<uint8_t>> base64Decode(const std::string &s) {
  if (s.size() % 4 != 0)
    return errorf("expected base64 data of a length divisible by 4, found ",
                  s.size(), " characters");
  auto val = [](char c) -> int {
    const char *p = std::strchr(kB64, c);
    return c && p ? int(p - kB64) : -1;
  };
  std::vector<uint8_t> out;
  out.reserve(s.size() / 4 * 3);
  for (size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      if (s[i + j] == '=' && i + 4 == s.size() && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      v[j] = val(s[i + j]);
      if (v[j] < 0 || pad)
        return errorf("invalid base64 character at offset ", i + j);
    }
    const uint32_t w = uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 |
                       uint32_t(v[2]) << 6 | uint32_t(v[3]);
    out.push_back(uint8_t(w >> 16));
    if (pad < 2)
      out.push_back(uint8_t(w >> 8));
    if (pad < 1)
      out.push_back(uint8_t(w));
  }
  return out;
}

} // namespace fp8
