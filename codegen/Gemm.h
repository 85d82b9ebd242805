//===- Gemm.h - The GEMM generators, by architecture ------------*- C++ -*-===//
//
// The single entry point the runtime, the passes and the tools use to check,
// configure and emit a GEMM kernel: it dispatches on KernelSpec::arch to the
// sm_90a (Sm90Gemm.h) or sm_100a generator.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_GEMM_H
#define FP8_CODEGEN_GEMM_H

#include "codegen/GeneratedKernel.h"
#include "core/KernelSpec.h"
#include "core/Status.h"

namespace fp8 {

/// Checks that `spec` is a kernel its arch's generator can emit: its field
/// ranges (checkKernelSpec), then the arch's rules.
Status checkGemmSpec(const KernelSpec &spec);

/// Checks that `spec.arch`'s generator implements `spec`'s recipe (formats,
/// granularities and scale formats, promotion interval, result type; the
/// operands K-major), whatever its shape and tile: what
/// --fp8-verify-target accepts. A recipe it accepts runs as stated with any
/// tile the heuristic picks; the refusal names what the target supports.
Status checkTargetRecipe(const KernelSpec &spec);

/// Emits the kernel for `spec` (checked first).
Expected<GeneratedKernel> emitGemm(const KernelSpec &spec);

/// The heuristic tile configuration for `spec` (its m must be known) on a
/// GPU of `smCount` SMs of `spec.arch`.
ConfigChoice selectConfig(const KernelSpec &spec, int smCount);

} // namespace fp8

#endif // FP8_CODEGEN_GEMM_H
