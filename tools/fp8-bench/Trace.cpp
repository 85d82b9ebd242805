//===- Trace.cpp - fp8-bench --trace: a kernel's pipeline timeline --------===//

#include "tools/fp8-bench/Trace.h"

#include "runtime/Gemm.h"

#include <algorithm>
#include <cstdio>

namespace fp8::bench {

namespace {
/// Median of `v` (0 when empty).
int64_t medianOf(std::vector<int64_t> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
} // namespace

/// Prints the medians of a GemmReport::trace (FP8_KERNEL_TRACE): per
/// k-block intervals of the consumer warpgroups and of the producer, in SM
/// clocks, over every traced CTA.
void printTrace(const std::vector<uint32_t> &t) {
  if (t.size() != size_t(kGemmTraceCtas) * kGemmTraceRoles * kGemmTraceSlots) {
    std::printf("  trace: none recorded\n");
    return;
  }
  // Clock differences modulo 2^32 (the counter wraps).
  auto diff = [](uint32_t a, uint32_t b) { return int64_t(int32_t(b - a)); };
  std::vector<int64_t> wait, issue, done, promo, gap, period, pwait, pperiod;
  for (int c = 0; c < kGemmTraceCtas; ++c)
    for (int r = 0; r < kGemmTraceRoles; ++r) {
      const uint32_t *v =
          t.data() + (c * kGemmTraceRoles + r) * kGemmTraceSlots;
      for (int b = 0; b < kGemmTraceBlocks; ++b) {
        const uint32_t *p = v + b * kGemmTracePoints;
        const uint32_t *q = p + kGemmTracePoints; // next k-block
        const bool next = b + 1 < kGemmTraceBlocks && q[0] != 0;
        if (r == 2) {
          if (p[0] == 0 || p[1] == 0)
            continue;
          pwait.push_back(diff(p[0], p[1]));
          if (next)
            pperiod.push_back(diff(p[0], q[0]));
          continue;
        }
        if (p[0] == 0 || p[4] == 0)
          continue;
        wait.push_back(diff(p[0], p[1]));
        issue.push_back(diff(p[1], p[2]));
        done.push_back(diff(p[2], p[3]));
        promo.push_back(diff(p[3], p[4]));
        if (next) {
          gap.push_back(diff(p[4], q[0]));
          period.push_back(diff(p[0], q[0]));
        }
      }
    }
  std::printf("  trace (SM clocks, medians over %zu k-blocks of warp 0 of "
              "each consumer warpgroup, CTAs 0, 1, grid/2):\n"
              "    consumer: barrier wait %lld, issue %lld, until the wgmmas "
              "completed %lld, promotion and hand-back %lld, to the next "
              "k-block %lld%s; period %lld\n"
              "    producer: wait for a free stage %lld; period %lld\n",
              wait.size(), (long long)medianOf(wait),
              (long long)medianOf(issue), (long long)medianOf(done),
              (long long)medianOf(promo), (long long)medianOf(gap),
              medianOf(gap) < 0 ? " (overlapped: the next k-block is issued "
                                  "before this one is promoted)"
                                : "",
              (long long)medianOf(period), (long long)medianOf(pwait),
              (long long)medianOf(pperiod));
}

} // namespace fp8::bench
