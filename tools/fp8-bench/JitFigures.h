//===- JitFigures.h - fp8-bench's JIT measurements ------------*- C++ -*-===//
//
// The JIT figures, measured on the GPU machine: NVRTC's one-time
// start-up, then for the first shape's kernel a cold compile, a disk-cache
// load, an in-memory hit and the host cost of one fp8::gemm call; then every
// distinct kernel of the run compiled cold three times (median, slowest
// single compile, NVRTC's own share).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8_BENCH_JITFIGURES_H
#define FP8_TOOLS_FP8_BENCH_JITFIGURES_H

#include "runtime/CudaDriver.h"
#include "runtime/Gemm.h"
#include "tools/fp8-bench/Bench.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace fp8::bench {

/// Measures and prints the JIT figures for the kernels `recipe` gets on
/// `shapes` (not empty) with `smCount` SMs; returns them as the JSON of
/// fp8-bench's "jit" key. Exits on an error, like the rest of fp8-bench.
nlohmann::json jitFigures(const GemmRecipe &recipe,
                          const std::vector<Shape> &shapes, int smCount,
                          const CudaDriver &d, CUstream stream);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_JITFIGURES_H
