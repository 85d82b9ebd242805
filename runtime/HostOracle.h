//===- HostOracle.h - The runtime's entry points on host memory -*- C++ -*-===//
//
// fp8::quantize, fp8::transpose and fp8::gemm (runtime/Quantize.h, Gemm.h)
// with host pointers, computed by the CPU oracle (numerics/): the same
// argument structs and the same checks, a GEMM refused exactly where the
// sm_90a kernels refuse it, the same layouts (a delayed-scaling state in the
// GPU's byte layout, so one state moves between the two). The results are
// the oracle's: quantize and transpose bit-identical to the kernels, the
// GEMM with FP32 partial sums in the kernels' promotion structure
// (numerics/ReferenceGemm.h). The Python package runs CPU tensors through
// these; they also serve as the reference of a GPU call in tests.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_HOSTORACLE_H
#define FP8_RUNTIME_HOSTORACLE_H

#include "core/Status.h"
#include "numerics/Stats.h"
#include "runtime/Gemm.h"
#include "runtime/GroupedGemm.h"
#include "runtime/Quantize.h"

#include <cstdint>

namespace fp8 {

/// Checks a delayed-scaling state (amaxHistoryBytes(d.historyLength) bytes
/// at `state`, host memory) before the oracle reads it: at most
/// historyLength amaxes recorded, the ring's head inside it, finite
/// non-negative amaxes.
Status checkHistoryState(const void *state, const DelayedScaling &d);

/// fp8::quantize on host memory. `stats`, when given, receives the
/// statistics of the call (numerics/Stats.h: underflow, range collapse,
/// errors; one matrix only). With `t.transposed` the codes and scales are
/// written transposed, as the kernels write them (the quantize, then the
/// FP8 transpose of its result), and refused where fp8::quantize refuses
/// them (checkQuantizeArgs). A given amax (`t.amax`) is read from host
/// memory.
Status quantizeOnHost(const QuantRecipe &recipe, int64_t rows, int64_t cols,
                      const QuantizeTensors &t,
                      numerics::QuantStats *stats = nullptr);

/// fp8::transpose on host memory.
Status transposeOnHost(DType format, const Granularity &g, int64_t rows,
                       int64_t cols, const TransposeTensors &t);

/// fp8::gemm on host memory: checkGemmArgs, the sm_90a kernel's rules
/// (gemmKernelSpec), then the reference GEMM. A quantizing epilogue is
/// refused.
Status gemmOnHost(const GemmRecipe &recipe, int64_t m, int64_t n, int64_t k,
                  const GemmTensors &t);

/// fp8::groupedGemm on host memory (the group tensor too):
/// checkGroupedGemmArgs, the kernel's rules, the group values checked
/// (checkGroupValues: the kernel clamps them, the oracle refuses them), then
/// the reference GEMM of every group. D's rows outside every group are left
/// as they are, as the kernel leaves them.
Status groupedGemmOnHost(const GemmRecipe &recipe,
                         const GroupedGemmShape &shape,
                         const GroupedGemmTensors &t);

} // namespace fp8

#endif // FP8_RUNTIME_HOSTORACLE_H
