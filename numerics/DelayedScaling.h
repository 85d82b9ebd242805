//===- DelayedScaling.h - The amax history of delayed scaling ---*- C++ -*-===//
//
// Delayed scaling (hifloat8-training.zh.txt, section 1.2) predicts a tensor's
// amax from the amaxes measured at earlier steps instead of reducing the
// tensor before quantizing it. One AmaxHistory per tensor (delayed scaling is
// per-tensor, core/RecipeRules.h), passed to quantize() at every step:
//
//   step t (t = 0, 1, ... counts quantize calls on this history)
//     amax_used = history empty ? amax(x_t)                 (current scaling)
//                               : max(history) or history.back()  (AmaxAlgo)
//     scale     = amax_used * 2^margin / fmt_max (history only; rounded as
//                 the scale format says; 1 when amax_used is 0)
//     if t % updateInterval == 0: history.append(amax(x_t)), keeping the
//                 last historyLength values
//
// So updateInterval = 1 measures every step and quantizes step t with the
// amaxes of steps < t; updateInterval = N measures steps 0, N, 2N, ... and the
// steps between reuse them. Values beyond fmt_max * scale saturate and are
// counted as overflow in QuantStats.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_DELAYEDSCALING_H
#define FP8_RUNTIME_NUMERICS_DELAYEDSCALING_H

#include "core/Recipe.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fp8::numerics {

/// The amax history of one tensor under delayed scaling.
class AmaxHistory {
public:
  /// An empty history for `params` (checked by quantize() with
  /// fp8::checkDelayedScaling).
  explicit AmaxHistory(const DelayedScaling &params = {});

  /// The parameters this history was built for; quantize() requires the
  /// recipe's to be equal.
  const DelayedScaling &params() const { return params_; }
  /// Steps taken (quantize calls that used this history).
  int64_t steps() const { return steps_; }
  /// The recorded amaxes, oldest first (at most historyLength).
  const std::vector<float> &values() const { return values_; }
  bool empty() const { return values_.empty(); }
  /// Amaxes recorded since the start (or reset), dropped ones included: the
  /// position of a device ring buffer holding values() (head = recorded()
  /// mod historyLength, as the kernels keep it).
  int64_t recorded() const { return recorded_; }
  /// Sets recorded() (a history read back from a device ring, whose head is
  /// all it tells of the count: any n >= values().size() with the same
  /// remainder).
  void setRecorded(int64_t n) { recorded_ = n; }
  /// True when the last step's scale was not the history's prediction (an
  /// empty history, a non-finite amax): the kernels' `refit` flag.
  bool refit() const { return refit_; }
  void setRefit(bool r) { refit_ = r; }

  /// The amax delayed scaling uses at the next step: the largest recorded
  /// (AmaxAlgo::Max) or the last (MostRecent); nullopt while empty.
  std::optional<float> predict() const;
  /// True when the next step measures the true amax and records it
  /// (steps() % updateInterval == 0).
  bool measuresNextStep() const;
  /// Appends `amax`, dropping the oldest value beyond historyLength.
  void record(float amax);
  /// Counts one step.
  void advance() { ++steps_; }
  /// Forgets every value and the step count (after a checkpoint restart, the
  /// first step falls back to current scaling again).
  void reset();

private:
  DelayedScaling params_;
  std::vector<float> values_;
  int64_t steps_ = 0;
  int64_t recorded_ = 0;
  bool refit_ = false;
};

/// True when two parameter sets are equal.
bool sameParams(const DelayedScaling &a, const DelayedScaling &b);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_DELAYEDSCALING_H
