//===- Metrics.cpp - How far a result is from its reference ---------------===//

#include "numerics/Metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fp8::numerics {

namespace {

template <typename X, typename Y>
double similarityImpl(const X *x, const Y *y, int64_t n) {
  double xy = 0, xxyy = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = double(x[i]), b = double(y[i]);
    xy += a * b;
    xxyy += a * a + b * b;
  }
  if (xxyy == 0)
    return 0.0;
  return 1.0 - 2.0 * xy / xxyy;
}

template <typename X, typename Y>
ErrorMetrics compareImpl(const X *x, const Y *y, int64_t n, double relFloor) {
  ErrorMetrics e;
  e.count = n;
  for (int64_t i = 0; i < n; ++i) {
    double b = double(y[i]);
    if (std::isfinite(b))
      e.refMaxAbs = std::max(e.refMaxAbs, std::fabs(b));
  }
  double floor = relFloor * e.refMaxAbs;
  double sumRel = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = double(x[i]), b = double(y[i]);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      ++e.nonFinite;
      continue;
    }
    double err = std::fabs(a - b);
    e.maxAbsError = std::max(e.maxAbsError, err);
    double den = std::max(std::fabs(b), floor);
    double rel = den > 0 ? err / den : (err > 0 ? INFINITY : 0.0);
    if (rel > e.maxRelError || e.worstIndex < 0) {
      e.maxRelError = std::max(e.maxRelError, rel);
      e.worstIndex = i;
    }
    sumRel += rel;
  }
  e.meanRelError = n ? sumRel / double(n) : 0.0;
  e.similarity = similarityImpl(x, y, n);
  if (e.nonFinite) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.similarity = e.maxAbsError = e.maxRelError = e.meanRelError = nan;
  }
  return e;
}

} // namespace

double similarity(const float *x, const double *y, int64_t n) {
  return similarityImpl(x, y, n);
}
double similarity(const float *x, const float *y, int64_t n) {
  return similarityImpl(x, y, n);
}
double similarity(const double *x, const double *y, int64_t n) {
  return similarityImpl(x, y, n);
}

ErrorMetrics compare(const float *x, const double *y, int64_t n,
                     double relFloor) {
  return compareImpl(x, y, n, relFloor);
}
ErrorMetrics compare(const float *x, const float *y, int64_t n,
                     double relFloor) {
  return compareImpl(x, y, n, relFloor);
}
ErrorMetrics compare(const double *x, const double *y, int64_t n,
                     double relFloor) {
  return compareImpl(x, y, n, relFloor);
}

} // namespace fp8::numerics
