//===- grid_dependency.h - Programmatic dependent launch -------*- CUDA -*-===//
//
// The one in-kernel half of programmatic dependent launch (PTX
// griddepcontrol, sm_90 and later), shared by the GEMM kernels and the
// plan's quantize/elementwise kernels. The host half is the launch
// attribute CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// (runtime/ElementwiseLaunch.cpp, runtime/Sm90Launch.cpp).
//
// Versioned with the kernels: any change here changes every cache key.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace fp8k {

/// Waits until the kernel before this one in the stream has completed and
/// its writes are visible, where this one was launched with the attribute
/// (else a no-op). Every kernel that can be launched so calls it, or
/// after_prior_grid, before its first access to global memory. A GEMM
/// waits only: the next kernel is scheduled as its CTAs exit (the implicit
/// trigger). With the trigger at its start, the next kernel's CTAs could
/// take the multiprocessors' spare registers and shared memory beside the
/// GEMM's and wait there through it; a large plan's graph measured slower
/// so than with the GEMM waiting only (docs/journal/2026-12-05-step-overlap.md;
/// GpuPlan::overlapsPriorStep keeps large steps in order).
__device__ __forceinline__ void wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// The plan's quantize and elementwise kernels call this before their
/// first access to global memory (what comes before it touches shared
/// memory and kernel parameters only: a table's fill, barrier setup, a
/// tensor map's prefetch). It lets the stream's next kernel be scheduled
/// now, where that one was launched to allow it, and waits until the
/// kernel before it in the stream has completed and its writes are
/// visible, where this one was launched so. Without the launch attribute
/// both are no-ops.
///
/// The next kernel is scheduled only once every CTA of this grid has
/// issued the trigger or exited, so its CTAs never keep one of this
/// grid's from a multiprocessor: they take the slots this grid's CTAs
/// leave and wait there. What overlaps is the next kernel's launch and
/// prologue with this kernel's tail; the results are those of kernels run
/// one after another.
__device__ __forceinline__ void after_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  wait_prior_grid();
}

} // namespace fp8k
