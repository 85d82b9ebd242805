//===- Sha256.h - SHA-256 for cache keys ------------------------*- C++ -*-===//
//
// The JIT cache keys kernels by the SHA-256 of everything that determines the
// cubin (source, headers, options, NVRTC version, arch) and checksums the
// files it writes with it.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_SHA256_H
#define FP8_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fp8 {

/// Incremental SHA-256 (FIPS 180-4).
class Sha256 {
public:
  Sha256();
  /// Feeds bytes.
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Feeds a length-prefixed string, so that ("ab","c") and ("a","bc") differ.
  void updateField(std::string_view s);
  /// Finishes and returns the 32-byte digest (the object is spent).
  std::array<uint8_t, 32> digest();
  /// Finishes and returns the digest as 64 lowercase hex characters.
  std::string hexDigest();

private:
  void block(const uint8_t *p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t bufLen_ = 0;
  uint64_t total_ = 0;
};

/// One-shot hex SHA-256 of `s`.
std::string sha256Hex(std::string_view s);

} // namespace fp8

#endif // FP8_RUNTIME_SHA256_H
