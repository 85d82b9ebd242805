//===- KernelTiming.h - Kernel times by CUDA events -------------*- C++ -*-===//
//
// The one timing loop of the benchmarks and the tuner (fp8-bench, fp8-tune,
// runtime/Tuner.h): untimed warm-up launches, then each timed launch
// bracketed by two events on the stream, after an L2 flush (a memset of a
// buffer larger than the L2, outside the bracket) so that every run reads
// its operands from DRAM, as a GEMM in a model does. Every driver call and
// every launch is checked: the first error ends the timing and is returned.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_KERNELTIMING_H
#define FP8_RUNTIME_KERNELTIMING_H

#include "core/Status.h"
#include "runtime/CudaDriver.h"

#include <functional>
#include <vector>

namespace fp8 {

/// How to time a launch.
struct KernelTiming {
  int runs = 20;         ///< timed launches
  int warmup = 0;        ///< untimed launches first
  CUdeviceptr flush = 0; ///< the L2 flush buffer (0: no flush)
  size_t flushBytes = 0;
};

/// The kernel times (ms) of `t.runs` launches of `launch` on `stream`,
/// sorted ascending.
Expected<std::vector<float>> timeKernel(const CudaDriver &d, CUstream stream,
                                        const KernelTiming &t,
                                        const std::function<Status()> &launch);

/// The times (ms) of `iters` launches of `launch` on `stream`, in launch
/// order, after `warmup` untimed ones, every launch queued behind the
/// previous (events i and i + 1 bracket launch i) and the stream drained
/// once by `drain`: the GPU runs them back to back as a plan's steps run,
/// where timeKernel synchronizes after each (fp8-run --bench's graph and
/// cuBLASLt peers, runtime/plan/PlanBench.h).
Expected<std::vector<double>> timeQueued(const CudaDriver &d, CUstream stream,
                                         int warmup, int iters,
                                         const std::function<Status()> &launch,
                                         const std::function<Status()> &drain);

/// The time at fraction `p` of sorted times: index floor(p * count) (0.5:
/// the median, the upper middle of an even count). 0 for no times.
double percentileOf(const std::vector<float> &sorted, double p);

} // namespace fp8

#endif // FP8_RUNTIME_KERNELTIMING_H
