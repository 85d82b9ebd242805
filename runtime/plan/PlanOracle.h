//===- PlanOracle.h - A plan on the CPU: the oracle and the reference -----===//
//
// The CPU side of fp8-run: host tensors in the device's layout, the graph's
// inputs (.npy files or seeded random values), and two executions of a plan
// on the CPU:
//   - the oracle runs the plan's steps as the GPU does them, with
//     numerics/ (quantize, transpose, referenceGemm with the
//     promotion structure) and the elementwise programs evaluated with the
//     kernels' own arithmetic (codegen/kernels/fp8_math.h). On the GPU's
//     inputs to a step it reproduces the step's quantize, transpose and
//     elementwise results bit for bit; GEMMs up to the order of sums;
//   - the reference runs the unquantized graph (matmuls in FP64 from the
//     high-precision inputs, rounded to each value's element type): what
//     the recipe's quantization error is measured against
//     (runtime/plan/PlanVerify.h).
// Plain C++ (no CUDA): unit tests run it in CI.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANORACLE_H
#define FP8_RUNTIME_PLANORACLE_H

#include "numerics/Accumulator.h"
#include "numerics/DelayedScaling.h"
#include "numerics/Metrics.h"
#include "numerics/Npy.h"
#include "runtime/plan/Plan.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fp8 {

/// A tensor in host memory, laid out as on the device (row-major; bf16 and
/// f16 as bit patterns, FP8 and UE8M0 as bytes).
struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> data;

  static HostTensor zeros(DType t, const Shape &s);
  int64_t elements() const { return elementCount(shape); }
  /// Element i widened to float (FP8/UE8M0: the decoded value).
  float get(int64_t i) const;
  /// Stores v rounded to the element type (bf16, f16, f32 only).
  void set(int64_t i, float v);
  /// Every element widened to float.
  std::vector<float> toFloat() const;
};

/// Every buffer of a plan (and, for the reference, every value) by name.
using HostBuffers = std::map<std::string, HostTensor>;

/// Buffers with the resolved shapes: zeros, constants filled, states empty.
HostBuffers allocateHostBuffers(const Plan &plan, const ResolvedPlan &shapes);

/// Where fp8-run runs the plan's steps.
enum class RunOn : uint8_t { Cpu, Gpu };
/// The host memory a run of the plan holds at its peak, an upper estimate
/// to compare with the memory available before allocating anything
/// (runtime/MemoryBudget.h): the plan's buffers; on the CPU a copy of them
/// (the inputs kept for verification), on the GPU the results read back;
/// with `verify`, the reference values, and on the GPU the oracle's own run
/// of the plan; and, when the oracle runs (on the CPU or with `verify`), the
/// largest scratch of one step (float or double copies of its operands and
/// result). Saturates at INT64_MAX.
int64_t hostRunBytes(const Plan &plan, const ResolvedPlan &shapes, RunOn where,
                     bool verify);

/// Where the graph's inputs and weights come from.
struct InputOptions {
  /// A directory holding <buffer name>.npy for every input and weight
  /// (bf16: ml_dtypes' '<V2', '<u2' bit patterns or '<f4' (rounded); f32:
  /// '<f4'); empty: random values.
  std::string dir;
  /// Instead of `dir`: the arrays by buffer name, as a .npy file would
  /// hold them (the Python bindings' inputs); read with the same checks.
  const std::map<std::string, numerics::NpyArray> *arrays = nullptr;
  uint64_t seed = 1;
};

/// Fills the plan's input and weight buffers: from .npy files (errors name
/// the file, the expected and the found element type and shape) or random:
/// inputs ~ N(0, 1), weights ~ N(0, 1/fan_in) with fan_in the last
/// dimension, seeded by `seed` and the buffer name; MoE routing ids (int32,
/// '<i4' in files) drawn as distinct experts per token, routing weights a
/// softmax of N(0, 1) scores per token. Routing ids are checked
/// (checkRoutingIds, runtime/plan/PlanMoe.h).
Status fillInputs(const Plan &plan, HostBuffers &buffers,
                  const InputOptions &options);

/// Writes `tensor` as <dir>/<name>.npy (bf16 as '<u2' bit patterns).
Status writeTensorNpy(const std::string &dir, const std::string &name,
                      const HostTensor &tensor);

/// The amax history a state buffer holds (the GPU's layout,
/// fp8k::AmaxHistoryState and the values: amaxHistoryBytes(historyLength)
/// bytes at `state`).
numerics::AmaxHistory historyFromState(const uint8_t *state,
                                       const DelayedScaling &params);
numerics::AmaxHistory historyFromState(const HostTensor &state,
                                       const DelayedScaling &params);
/// Stores `history` into a state buffer of that layout (`bytes` long).
void stateFromHistory(const numerics::AmaxHistory &history, uint8_t *state,
                      size_t bytes);
void stateFromHistory(const numerics::AmaxHistory &history, HostTensor &state);

/// Runs one step of the plan on the CPU, reading and writing `buffers`.
/// GEMMs build each promotion interval's partial sum with `accumulator`:
/// FP32 by default (the oracle --verify compares with),
/// numerics::kHopperFP8Accumulator for the H100's tensor cores (a GPU's
/// result modelled on the CPU).
Status runStepOnCpu(const Plan &plan, const PlanStep &step,
                    HostBuffers &buffers,
                    const numerics::AccumulatorModel &accumulator = {});

/// Runs the plan on the CPU: the prepare steps, then `iterations` times the
/// run steps, on `buffers` (inputs filled), GEMMs with `accumulator`.
Status runPlanOnCpu(const Plan &plan, HostBuffers &buffers, int iterations,
                    const numerics::AccumulatorModel &accumulator = {});

/// Runs the unquantized reference graph: every reference value, computed
/// from the wide inputs, weights and constants in `buffers`.
Expected<HostBuffers> runReference(const Plan &plan, const ResolvedPlan &shapes,
                                   const HostBuffers &buffers);

/// How one tensor compares with another.
struct TensorComparison {
  int64_t elements = 0;
  int64_t mismatches = 0;     ///< bitwise comparisons: differing elements
  int64_t firstMismatch = -1; ///< flat index of the first one
  numerics::ErrorMetrics metrics;
};

/// Bit-for-bit comparison (quantize, transpose, elementwise results).
TensorComparison compareBits(const HostTensor &got, const HostTensor &want);
/// Numeric comparison of `got` against the reference `want`.
TensorComparison compareValues(const HostTensor &got, const HostTensor &want);

} // namespace fp8

#endif // FP8_RUNTIME_PLANORACLE_H
