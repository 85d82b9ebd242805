//===- Accumulator.cpp - Model of the FP8 tensor-core accumulator ---------===//

#include "numerics/Accumulator.h"

#include "numerics/Formats.h"

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

/// The exponent the tensor core aligns on: the FP8 exponent field of a
/// nonzero value (emin for subnormals).
static int fp8Exponent(float v, DType fmt) {
  return std::max(std::ilogb(v), 1 - fp8Format(fmt).bias);
}

float emulateMmaStep(float acc, const float *a, const float *b, int n,
                     int mantissaBits, DType fa, DType fb) {
  bool any = acc != 0.0f;
  int e = any ? std::ilogb(acc) : 0;
  for (int j = 0; j < n; ++j) {
    if (a[j] == 0.0f || b[j] == 0.0f)
      continue;
    int ej = fp8Exponent(a[j], fa) + fp8Exponent(b[j], fb);
    e = any ? std::max(e, ej) : ej;
    any = true;
  }
  if (!any)
    return acc;
  double q = std::ldexp(1.0, e - mantissaBits);
  // Each term is below 2^(mantissaBits + 2) units of q: exact in int64.
  int64_t sum = int64_t(std::trunc(double(acc) / q));
  for (int j = 0; j < n; ++j)
    sum += int64_t(std::trunc(double(a[j]) * double(b[j]) / q));
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
                  const AccumulatorModel &model, int64_t interval, DType fa,
                  DType fb) {
  if (interval <= 0)
    interval = std::max<int64_t>(k, 1);
  int group = std::clamp(model.groupK, 1, 1024);
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += interval) {
    int64_t k1 = std::min(k, k0 + interval);
    float partial = 0.0f;
    for (int64_t g0 = k0; g0 < k1; g0 += group) {
      int n = int(std::min<int64_t>(group, k1 - g0));
      if (model.emulated()) {
        partial = emulateMmaStep(partial, a + g0, b + g0, n, model.mantissaBits,
                                 fa, fb);
      } else {
        for (int j = 0; j < n; ++j)
          partial += a[g0 + j] * b[g0 + j]; // exact product, one rounding
      }
    }
    acc += partial;
  }
  return acc;
}

} // namespace fp8::numerics
