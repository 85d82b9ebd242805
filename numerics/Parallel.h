//===- Parallel.h - A small thread pool for the CPU oracle ------*- C++ -*-===//
//
// The reference GEMM, quantization and statistics split their work with
// parallelFor over one process-wide pool of std::threads. The pool size is
// FP8_THREADS when set to a positive integer, else
// std::thread::hardware_concurrency().
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_PARALLEL_H
#define FP8_RUNTIME_NUMERICS_PARALLEL_H

#include <cstdint>
#include <functional>

namespace fp8::numerics {

/// Threads the numerics use (the calling thread included): FP8_THREADS if it
/// is a positive integer, else hardware_concurrency(), at least 1. Read once.
int numThreads();

/// Calls fn(begin, end) on disjoint ranges covering [0, n), each at most
/// `grain` long (grain >= 1), on the pool and the calling thread; returns
/// when all are done. Ranges are handed out dynamically, so fn must not
/// depend on which thread runs it. A parallelFor called from inside fn runs
/// serially on that thread (no nested parallelism, no deadlock).
void parallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_PARALLEL_H
