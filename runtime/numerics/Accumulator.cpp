//===- Accumulator.cpp - Model of the FP8 tensor-core accumulator ---------===//

#include "runtime/numerics/Accumulator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace fp8::numerics {

float truncateToBits(float x, int bits) {
  if (x == 0.0f || !std::isfinite(x))
    return x;
  int e = std::ilogb(x);
  float q = std::ldexp(1.0f, e - bits);
  return std::trunc(x / q) * q;
}

float emulateMmaStep(float acc, const float *p, int n, int mantissaBits) {
  float m = std::fabs(acc);
  for (int j = 0; j < n; ++j)
    m = std::max(m, std::fabs(p[j]));
  if (m == 0.0f)
    return acc;
  int e = std::ilogb(m);
  double q = std::ldexp(1.0, e - mantissaBits);
  // Each term is below 2^(mantissaBits + 1) units of q: exact in int64.
  int64_t sum = int64_t(std::trunc(double(acc) / q));
  for (int j = 0; j < n; ++j)
    sum += int64_t(std::trunc(double(p[j]) / q));
  // Normalize: keep mantissaBits fraction bits below the leading one.
  int64_t mag = std::llabs(sum);
  if (mag == 0)
    return 0.0f;
  int lead = 63 - __builtin_clzll(uint64_t(mag));
  if (lead > mantissaBits)
    mag = (mag >> (lead - mantissaBits)) << (lead - mantissaBits);
  double v = double(mag) * q;
  return float(sum < 0 ? -v : v);
}

float emulatedDot(const float *a, const float *b, int64_t k,
                  const AccumulatorModel &model, int64_t interval) {
  if (interval <= 0)
    interval = std::max<int64_t>(k, 1);
  int group = std::clamp(model.groupK, 1, 1024);
  float acc = 0.0f;
  float products[1024];
  for (int64_t k0 = 0; k0 < k; k0 += interval) {
    int64_t k1 = std::min(k, k0 + interval);
    float partial = 0.0f;
    for (int64_t g0 = k0; g0 < k1; g0 += group) {
      int n = int(std::min<int64_t>(group, k1 - g0));
      for (int j = 0; j < n; ++j)
        products[j] = a[g0 + j] * b[g0 + j];
      if (model.emulated()) {
        partial = emulateMmaStep(partial, products, n, model.mantissaBits);
      } else {
        for (int j = 0; j < n; ++j)
          partial += products[j];
      }
    }
    acc += partial;
  }
  return acc;
}

} // namespace fp8::numerics
