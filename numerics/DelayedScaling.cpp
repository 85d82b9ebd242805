//===- DelayedScaling.cpp - The amax history of delayed scaling -----------===//

#include "numerics/DelayedScaling.h"

#include <algorithm>

namespace fp8::numerics {

AmaxHistory::AmaxHistory(const DelayedScaling &params) : params_(params) {}

std::optional<float> AmaxHistory::predict() const {
  if (values_.empty())
    return std::nullopt;
  if (params_.algo == AmaxAlgo::MostRecent)
    return values_.back();
  return *std::max_element(values_.begin(), values_.end());
}

bool AmaxHistory::measuresNextStep() const {
  int64_t interval = std::max<int64_t>(params_.updateInterval, 1);
  return steps_ % interval == 0;
}

void AmaxHistory::record(float amax) {
  values_.push_back(amax);
  ++recorded_;
  int64_t keep = std::max<int64_t>(params_.historyLength, 1);
  if (int64_t(values_.size()) > keep)
    values_.erase(values_.begin(), values_.end() - keep);
}

void AmaxHistory::reset() {
  values_.clear();
  steps_ = 0;
  recorded_ = 0;
  refit_ = false;
}

bool sameParams(const DelayedScaling &a, const DelayedScaling &b) {
  return a.historyLength == b.historyLength &&
         a.updateInterval == b.updateInterval && a.margin == b.margin &&
         a.algo == b.algo;
}

} // namespace fp8::numerics
