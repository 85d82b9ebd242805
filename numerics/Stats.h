//===- Stats.h - What one quantization did to a tensor ----------*- C++ -*-===//
//
// The monitors of ling2-fp8-training.txt (underflow, range collapse) plus
// overflow under delayed scaling and the round-trip error, measured by
// quantize() on every call that asks for them. Definitions
// (docs/numerics.md, "Statistics"), over the finite inputs x_i, their codes
// q_i and x'_i = decode(q_i) * scale_i:
//
//   underflow       nonzero x_i with q_i = +-0
//   overflow        x_i whose |x_i / scale_i| lies beyond the format's
//                   rounding range (above 464 for E4M3FN, at or above 61440
//                   for E5M2), so the saturating conversion clamped it
//   range collapse  per block b, over the nonzero inputs that did not
//                   underflow: V_b = their distinct values, Q_b = the
//                   distinct codes they map to;
//                   ratio = sum_b (|V_b| - |Q_b|) / sum_b |V_b|
//                   (the share of distinct values lost by merging; 0 when
//                   nothing merged, underflow counted separately)
//   errors          |x_i - x'_i| (max), and |x_i - x'_i| / |x_i| over
//                   nonzero x_i (max and mean; an underflowed value has 1)
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_STATS_H
#define FP8_RUNTIME_NUMERICS_STATS_H

#include <cstdint>
#include <vector>

namespace fp8::numerics {

/// Statistics of one quantize() call.
struct QuantStats {
  int64_t elements = 0;       ///< inputs
  int64_t blocks = 0;         ///< scale blocks
  int64_t zeroBlocks = 0;     ///< blocks whose amax was 0 (scale 1)
  int64_t nonFinite = 0;      ///< NaN/inf inputs (NonFinitePolicy::Propagate)
  int64_t nonzero = 0;        ///< finite nonzero inputs
  int64_t underflow = 0;      ///< nonzero inputs quantized to +-0
  int64_t overflow = 0;       ///< inputs clamped at +-max finite
  int64_t distinctInputs = 0; ///< sum_b |V_b| (see the file comment)
  int64_t distinctQuantized = 0; ///< sum_b |Q_b|
  double underflowRatio = 0;     ///< underflow / nonzero (0 if none)
  double overflowRatio = 0;      ///< overflow / (elements - nonFinite)
  double rangeCollapseRatio = 0; ///< 1 - distinctQuantized / distinctInputs
  double amax = 0;               ///< largest finite |x|
  double maxAbsError = 0;        ///< max |x - x'|
  double maxRelError = 0;        ///< max |x - x'| / |x| over nonzero x
  double meanRelError = 0;       ///< mean |x - x'| / |x| over nonzero x
  double rmsError = 0;           ///< sqrt(mean (x - x')^2) over finite x
  /// Delayed scaling: true when the history gave the amax, false when the
  /// step fell back to current scaling (empty history). False otherwise.
  bool usedHistory = false;
  /// The amax the scale was derived from under per-tensor granularity (the
  /// predicted one under delayed scaling); 0 for block granularities.
  double scaleAmax = 0;

  /// Derives the ratios and means from the counts and sums. quantize()
  /// calls it; exposed for code that builds stats by merging.
  void finish(double sumRelError, double sumSquaredError);
};

/// The number of distinct values in `keys`; reorders them (sorts).
int64_t countDistinct(std::vector<uint32_t> &keys);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_STATS_H
