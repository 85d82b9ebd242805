//===- Random.cpp - Deterministic test and benchmark inputs ---------------===//

#include "numerics/Random.h"

#include "numerics/Formats.h"

#include <algorithm>
#include <cmath>

namespace fp8::numerics {

std::string_view toString(Distribution d) {
  switch (d) {
  case Distribution::Normal:
    return "normal";
  case Distribution::Uniform:
    return "uniform";
  case Distribution::Positive:
    return "positive";
  case Distribution::Outliers:
    return "outliers";
  }
  return "?";
}

std::optional<Distribution> parseDistribution(std::string_view s) {
  for (Distribution d : {Distribution::Normal, Distribution::Uniform,
                         Distribution::Positive, Distribution::Outliers})
    if (toString(d) == s)
      return d;
  return std::nullopt;
}

static uint64_t splitmix64(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

Rng::Rng(uint64_t seed) {
  for (uint64_t &s : s_)
    s = splitmix64(seed);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1p-53; }

double Rng::normal() {
  double u1 = 1.0 - uniform(); // (0, 1]: log stays finite
  double u2 = uniform();
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

std::vector<float> randomTensor(int64_t n, const RandomSpec &spec) {
  std::vector<float> out(size_t(std::max<int64_t>(n, 0)));
  Rng rng(spec.seed);
  for (float &v : out) {
    double x = 0;
    switch (spec.dist) {
    case Distribution::Normal:
      x = rng.normal();
      break;
    case Distribution::Uniform:
      x = 2.0 * rng.uniform() - 1.0;
      break;
    case Distribution::Positive:
      x = rng.uniform();
      break;
    case Distribution::Outliers:
      x = rng.normal();
      if (rng.uniform() < spec.outlierFraction)
        x *= spec.outlierScale;
      break;
    }
    v = float(x * spec.scale);
  }
  return out;
}

std::vector<uint16_t> randomTensorBF16(int64_t n, const RandomSpec &spec) {
  std::vector<float> f = randomTensor(n, spec);
  std::vector<uint16_t> out(f.size());
  for (size_t i = 0; i < f.size(); ++i)
    out[i] = floatToBF16(f[i]);
  return out;
}

std::vector<uint8_t> randomCodes(int64_t n, DType format, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> table(4096);
  for (uint8_t &c : table)
    c = floatToFP8(float(rng.normal()), format);
  std::vector<uint8_t> out(size_t(std::max<int64_t>(n, 0)));
  // Five 12-bit indices from each 64 random bits.
  size_t i = 0;
  while (i < out.size()) {
    uint64_t bits = rng.next();
    for (int j = 0; j < 5 && i < out.size(); ++j, bits >>= 12)
      out[i++] = table[bits & 4095];
  }
  return out;
}

} // namespace fp8::numerics
