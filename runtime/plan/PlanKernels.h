//===- PlanKernels.h - How a plan's elementwise steps are launched --------===//
//
// The launches of a quantize, transpose or elementwise step: its kernels'
// entry points in order, each with its grid (codegen's elementwiseLaunch)
// and the one kernel parameter, filled from the step's buffers. The GPU
// executor launches these with the driver; EmulatedKernelsTest launches the
// same ones on the CPU, so the parameter mapping is tested without a GPU.
// No CUDA header.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANKERNELS_H
#define FP8_RUNTIME_PLANKERNELS_H

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "runtime/plan/Plan.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fp8 {

/// The concrete shapes of a step's buffers, by name (ResolvedPlan::shapes).
using StepShapes = std::map<std::string, Shape>;

/// The launches of a non-GEMM step (shapes of its first input: rank 2, or 3
/// for a stack of matrices; an MoE step's from all its operands) on a GPU
/// of `smCount` SMs, with parameter `p` (auxStepParams): which entry runs
/// may depend on its tensors' alignment (auxParamsAligned).
std::vector<ElementwiseEntryLaunch> auxStepLaunches(const PlanStep &step,
                                                    const StepShapes &shapes,
                                                    int smCount,
                                                    const fp8k::EwParams &p);

/// Whether the tensors of parameter `p` of a kernel of `spec` are aligned
/// as its vector paths need (elementwiseLaunch's `aligned`): the inputs it
/// reads in vectors (vectorInputs) to 16 bytes, the output to 8.
bool auxParamsAligned(const ElementwiseSpec &spec, const fp8k::EwParams &p);

/// The bytes of a non-GEMM step's device scratch (0: none): one u32 amax
/// per scale of a quantize on the block path (zero before its first run;
/// its kernels leave it so), the routing counters of a permute.
int64_t auxScratchBytes(const PlanStep &step, const StepShapes &shapes);

/// The kernel parameter of a non-GEMM step: `address(name)` is where a
/// buffer lives, `scratch` the step's scratch (auxScratchBytes).
/// A quantize step also writes its scales to `scaleMirror` when it is not
/// null, scale (r, c) at r * mirrorStrideRows + c * mirrorStrideCols
/// (runtime/plan/PlanScaleMirror.h). MoE steps fill the fields as
/// elementwise_params.h's table says.
fp8k::EwParams
auxStepParams(const PlanStep &step, const StepShapes &shapes,
              const std::function<void *(const std::string &)> &address,
              void *scratch, void *scaleMirror = nullptr,
              int64_t mirrorStrideRows = 0, int64_t mirrorStrideCols = 0);

} // namespace fp8

#endif // FP8_RUNTIME_PLANKERNELS_H
