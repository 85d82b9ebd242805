//===- Stats.cpp - What one quantization did to a tensor ------------------===//

#include "numerics/Stats.h"

#include <algorithm>
#include <cmath>

namespace fp8::numerics {

void QuantStats::finish(double sumRelError, double sumSquaredError) {
  underflowRatio = nonzero ? double(underflow) / double(nonzero) : 0.0;
  int64_t finite = elements - nonFinite;
  overflowRatio = finite ? double(overflow) / double(finite) : 0.0;
  rangeCollapseRatio =
      distinctInputs ? 1.0 - double(distinctQuantized) / double(distinctInputs)
                     : 0.0;
  meanRelError = nonzero ? sumRelError / double(nonzero) : 0.0;
  rmsError = finite ? std::sqrt(sumSquaredError / double(finite)) : 0.0;
}

/// Two LSD passes over 16-bit digits: linear time for the huge blocks of
/// per-tensor and per-row granularity.
static void radixSort(std::vector<uint32_t> &keys) {
  std::vector<uint32_t> tmp(keys.size());
  for (int shift : {0, 16}) {
    std::vector<size_t> count(65537, 0);
    for (uint32_t k : keys)
      ++count[((k >> shift) & 0xFFFFu) + 1];
    for (size_t i = 1; i < count.size(); ++i)
      count[i] += count[i - 1];
    for (uint32_t k : keys)
      tmp[count[(k >> shift) & 0xFFFFu]++] = k;
    keys.swap(tmp);
  }
}

int64_t countDistinct(std::vector<uint32_t> &keys) {
  if (keys.empty())
    return 0;
  if (keys.size() > (1u << 16))
    radixSort(keys);
  else
    std::sort(keys.begin(), keys.end());
  return std::unique(keys.begin(), keys.end()) - keys.begin();
}

} // namespace fp8::numerics
