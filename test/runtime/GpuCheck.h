//===- GpuCheck.h - One GPU GEMM case against the CPU oracle ----*- C++ -*-===//
#ifndef FP8_TEST_RUNTIME_GPUCHECK_H
#define FP8_TEST_RUNTIME_GPUCHECK_H

#include "runtime/Gemm.h"

#include <optional>
#include <string>

namespace fp8 {

/// A test case's recipe: the two granularities, the promotion interval (0:
/// none), the output type and the operand formats.
GemmRecipe caseRecipe(Granularity a, Granularity b, int64_t promotion,
                      DType out = DType::BF16, DType formatA = DType::E4M3FN,
                      DType formatB = DType::E4M3FN);

/// A GEMM to run on the GPU and check.
struct GpuCase {
  GemmRecipe recipe;
  int64_t m = 0, n = 0, k = 0;
  std::optional<TileConfig> tile;
  uint64_t seed = 1;
  /// Store both scale tensors transposed, [K blocks][outer] (the layout
  /// cuBLASLt wants for A's 1x128 scales), instead of [outer][K blocks].
  bool outerContiguousScales = false;
  /// Store B's f32 [outer][K blocks] scales with rows this many scales apart
  /// (0: packed), padding zeroed, as the plan executor's mirror of B's
  /// scales does (runtime/plan/PlanScaleMirror.h).
  int64_t scaleBPitch = 0;
  /// Non-negative inputs (|x|): every partial sum grows, so the tensor
  /// cores' truncating accumulation loses the most, and how K is grouped
  /// into promotions shows in the result.
  bool nonNegative = false;
  /// Also compare with the oracle's emulation at this promotion interval
  /// (GpuCaseResult::relErrVsRival): a kernel that runs its interval as
  /// another one is closer to that one's emulation.
  int64_t rivalInterval = -1;
};

/// What the check found.
struct GpuCaseResult {
  bool passed = false;
  std::string kernel;
  double relErrVsEmulated = 0; ///< max |d - ref| / max |ref| (checked rows)
  double relErrVsRival = 0;    ///< the same against GpuCase::rivalInterval
  double similarity = 0;       ///< vs the oracle (DeepGEMM metric)
  int64_t rowsChecked = 0;
  bool scaleATma = false, scaleBTma = false; ///< GemmReport's
  std::string tileSource;                    ///< GemmReport's
  std::string summary;
};

/// "m x n x k, recipe..." for messages.
std::string describe(const GpuCase &c);

/// Quantizes random data, runs the kernel, checks it. Errors are setup or
/// launch failures; a wrong answer is a result with passed == false.
Expected<GpuCaseResult> runGpuCase(const GpuCase &c);

/// runGpuCase as a gtest expectation: a setup error or a wrong answer fails
/// the current test, naming the case; prints one "[case] PASS|FAIL" line for
/// scripts/gpu-check.sh's summary. Returns the result (empty on an error).
GpuCaseResult expectCase(const GpuCase &c);

} // namespace fp8

#endif // FP8_TEST_RUNTIME_GPUCHECK_H
