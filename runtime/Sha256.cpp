//===- Sha256.cpp - SHA-256 (FIPS 180-4) ---------------------------------===//

#include "runtime/Sha256.h"

#include <cstring>

namespace fp8 {

namespace {
// First 32 bits of the fractional parts of the cube roots of the first 64
// primes (FIPS 180-4, 4.2.2).
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// First 32 bits of the fractional parts of the square roots of the first 8
// primes (FIPS 180-4, 5.3.3).
constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
} // namespace

Sha256::Sha256() { std::memcpy(h_, kInit, sizeof(h_)); }

void Sha256::block(const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 |
           uint32_t(p[4 * i + 2]) << 8 | uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5],
           g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                  ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                  ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  total_ += size;
  if (bufLen_ > 0) {
    size_t take = std::min(size, 64 - bufLen_);
    std::memcpy(buf_ + bufLen_, p, take);
    bufLen_ += take;
    p += take;
    size -= take;
    if (bufLen_ < 64)
      return; // all input consumed into the partial block
    block(buf_);
    bufLen_ = 0;
  }
  while (size >= 64) {
    block(p);
    p += 64;
    size -= 64;
  }
  std::memcpy(buf_, p, size);
  bufLen_ = size;
}

void Sha256::updateField(std::string_view s) {
  uint64_t n = s.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = uint8_t(n >> (8 * i));
  update(len, 8);
  update(s);
}

std::array<uint8_t, 32> Sha256::digest() {
  uint64_t bits = total_ * 8;
  uint8_t pad = 0x80;
  update(&pad, 1);
  uint8_t zero = 0;
  while (bufLen_ != 56)
    update(&zero, 1);
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = uint8_t(bits >> (56 - 8 * i));
  update(len, 8);
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = uint8_t(h_[i] >> (24 - 8 * j));
  return out;
}

std::string Sha256::hexDigest() {
  static const char *hex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : digest()) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

std::string sha256Hex(std::string_view s) {
  Sha256 h;
  h.update(s);
  return h.hexDigest();
}

} // namespace fp8
