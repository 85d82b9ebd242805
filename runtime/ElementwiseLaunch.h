//===- ElementwiseLaunch.h - Launching quantize and elementwise kernels ---===//
//
// The launch of an ElementwiseSpec's kernels (codegen/Elementwise.h) on a
// stream: each entry point loaded (generated, compiled or found in the JIT
// cache, codegen/kernels/elementwise.cuh) and launched with its grid and the
// one kernel parameter, a step's later kernels overlapping the tail of the
// one before (programmatic dependent launch). The plan executor's non-GEMM
// steps and fp8::quantize (runtime/Quantize.h) go through it.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_ELEMENTWISELAUNCH_H
#define FP8_RUNTIME_ELEMENTWISELAUNCH_H

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "core/Status.h"

#include <cuda.h>

#include <vector>

namespace fp8 {

/// Launches `launches` (entry points of `spec`, in order) with parameter
/// `p` on `stream`. The second and later overlap the one before; with
/// `afterPriorKernel` the first also overlaps the stream's kernel before it
/// (GemmOptions::afterPriorKernel says what that means). Errors name the
/// kernel.
Status launchElementwise(const ElementwiseSpec &spec,
                         const std::vector<ElementwiseEntryLaunch> &launches,
                         const fp8k::EwParams &p, CUstream stream,
                         bool afterPriorKernel = false);

} // namespace fp8

#endif // FP8_RUNTIME_ELEMENTWISELAUNCH_H
