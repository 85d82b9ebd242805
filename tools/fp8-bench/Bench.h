//===- Bench.h - What the parts of fp8-bench share --------------*- C++ -*-===//
#ifndef FP8_TOOLS_FP8_BENCH_BENCH_H
#define FP8_TOOLS_FP8_BENCH_BENCH_H

#include "core/Status.h"
#include "tools/shapes/ShapeFile.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fp8::bench {

/// One GEMM of the benchmark: D[M, N] = A[M, K] x B[N, K]^T.
using Shape = DenseShape;

/// The largest M of --m: a shape file's (kMaxShapeM; N and K at most
/// kMaxShapeNK). Operands of the largest shape hold 16 GiB of FP8.
constexpr int64_t kMaxBenchM = kMaxShapeM;

/// Prints "fp8-bench: what: message" and exits with 1.
[[noreturn]] inline void die(const Status &s, const char *what) {
  std::fprintf(stderr, "fp8-bench: %s: %s\n", what, s.message().c_str());
  std::exit(1);
}

/// Returns if `s` is ok, else die() with it.
inline void checkOk(const Status &s, const char *what) {
  if (!s)
    die(s, what);
}

/// The value of `e`, or die() with its error.
template <typename T> T check(Expected<T> e, const char *what) {
  if (!e)
    die(e.status(), what);
  return std::move(*e);
}

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_BENCH_H
