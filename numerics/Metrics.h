//===- Metrics.h - How far a result is from its reference -------*- C++ -*-===//
//
// What every GPU test reports (docs/numerics.md, "Metrics"):
//   similarity  DeepGEMM's 1 - 2 * sum(x*y) / sum(x*x + y*y), accumulated in
//               FP64: 0 for identical tensors, ~1 for unrelated ones, < 1e-3
//               expected of an FP8 GEMM against the unquantized product;
//               defined as 0 when both tensors are all zero
//   max abs     max |x - y|
//   rel         |x - y| / max(|y|, floor) per element, floor = relFloor *
//               max |y| (default 1e-3): elements far below the reference's
//               scale are measured against that scale instead of
//               themselves; max and mean over all elements
// x is the result under test, y the reference. Non-finite values make every
// metric NaN (and are counted).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_METRICS_H
#define FP8_RUNTIME_NUMERICS_METRICS_H

#include <cstdint>

namespace fp8::numerics {

/// The comparison of a result with its reference.
struct ErrorMetrics {
  int64_t count = 0;     ///< elements compared
  int64_t nonFinite = 0; ///< elements where x or y is NaN/inf
  double similarity = 0; ///< DeepGEMM's calc_diff
  double maxAbsError = 0;
  double maxRelError = 0;
  double meanRelError = 0;
  double refMaxAbs = 0;    ///< max |y|, the scale of the floor
  int64_t worstIndex = -1; ///< argmax of the relative error
};

/// Default relative-error floor, as a fraction of max |y|.
inline constexpr double kDefaultRelFloor = 1e-3;

/// 1 - 2 * sum(x*y) / sum(x*x + y*y) in FP64 (0 when both are all zero).
double similarity(const float *x, const double *y, int64_t n);
double similarity(const float *x, const float *y, int64_t n);
double similarity(const double *x, const double *y, int64_t n);

/// Every metric of `x` against the reference `y`.
ErrorMetrics compare(const float *x, const double *y, int64_t n,
                     double relFloor = kDefaultRelFloor);
ErrorMetrics compare(const float *x, const float *y, int64_t n,
                     double relFloor = kDefaultRelFloor);
ErrorMetrics compare(const double *x, const double *y, int64_t n,
                     double relFloor = kDefaultRelFloor);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_METRICS_H
