//===- Measure.h - fp8-bench's measurements of one shape --------*- C++ -*-===//
//
// For one shape: random FP8 operands with block scales in both layouts, our
// kernel (the heuristic's tile, or --tile), optionally its trace and a tile
// sweep, then the cuBLASLt peers on the same data (Peers.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8_BENCH_MEASURE_H
#define FP8_TOOLS_FP8_BENCH_MEASURE_H

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/Options.h"
#include "tools/fp8-bench/Report.h"
#include "tools/fp8-bench/Timing.h"

#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "tools/peers/CublasLtPeer.h"

#include <nlohmann/json.hpp>

#include <random>
#include <vector>

namespace fp8::bench {

/// What the measurements of every shape share: the GPU and a stream, the
/// L2 flush buffer, cuBLASLt's handle and workspace, the recipe, the random
/// inputs' generator and the block-scaled peer's scale layout once found.
struct Context {
  /// Opens the GPU (printing its line) and allocates what is shared; exits
  /// on an error.
  explicit Context(const Options &opt);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Median milliseconds of `launch` over `iters` runs (Timing.h).
  template <typename F> double time(int iters, F launch) const {
    return medianMs(*d, stream, iters, opt.flush, flushBuf.ptr(), flushBytes,
                    launch);
  }

  const Options &opt;
  const CudaDevice *dev = nullptr;
  const CudaDriver *d = nullptr;
  CUstream stream = nullptr;
  const size_t flushBytes = size_t(256) << 20;
  DeviceBuffer flushBuf;
  const size_t wsBytes = size_t(64) << 20;
  DeviceBuffer ws;
  cublasLtHandle_t lt = nullptr;
  GemmRecipe recipe;
  std::mt19937_64 rng{42};
  std::uniform_real_distribution<float> uni{0.5f, 2.0f};
  int peerCombo = 0;        ///< the block-scaled peer's scale layout ...
  bool layoutKnown = false; ///< ... once a result matched ours
};

/// One shape's operands on the device. The scales are in both layouts:
/// [K/128][M] ("outer", M contiguous) and [M][K/128]; our kernel reads any
/// strides, cuBLASLt wants one of them.
struct Operands {
  std::vector<uint8_t> a, b; ///< FP8 codes on the host
  DeviceBuffer dA, dB, dSaO, dSaK, dSbO, dSbK, dD, dP, one, amax;
  GemmTensors t; ///< ours: A's scales outer, B's [N/128][K/128]
};

/// Measures `sh`: our kernel, the sweep (its timings into `sweep`) and the
/// peers.
Row measureShape(Context &ctx, const Shape &sh, nlohmann::json &sweep);

/// The cuBLASLt peers of `sh` on `ops`, compared with our result `ours`.
void timePeers(Context &ctx, const Shape &sh, Operands &ops,
               const std::vector<uint16_t> &ours, Row &row);

} // namespace fp8::bench

#endif // FP8_TOOLS_FP8_BENCH_MEASURE_H
