//===- sm90_trace.cuh - Clock timeline of the sm_90a GEMM ------*- CUDA -*-===//
//
// KTrace: what FP8_KERNEL_TRACE=1 compiles into the sm_90a GEMM (see
// sm90_gemm.cuh for the points it stamps; runtime/Gemm.h mirrors the layout
// as kGemmTrace*). Without the macro every member is empty and the kernel
// is unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace fp8k {

/// A timeline of the pipeline, for kernel work: with FP8_KERNEL_TRACE=1 in
/// the environment of the code generator, three CTAs (0, 1 and
/// gridDim.x / 2) stamp the SM clock at fixed points of kTraceBlocks
/// k-blocks (from the kTraceFirst-th) of one work unit (their second, or
/// their only one): lane 0 of warp 0 of each consumer warpgroup and the
/// producer's TMA thread. The stamps stay in local memory until the kernel
/// ends, then go to GemmParams::trace as [CTA][role][kTraceSlots] (role: the
/// consumer warpgroup, or kTraceProducer); the runtime hands them back in
/// GemmReport::trace. (printf anywhere in the kernel would make ptxas
/// serialise the wgmmas.) Points, consumers: 0 before the stage's barrier
/// wait, 1 after it, 2 after the wgmmas' commit, 3 after they completed, 4
/// after the promotion and hand-back; producer: 0 before the wait for a free
/// stage, 1 after it. Each stamp costs a few tens of clocks. Without the
/// macro KTrace is empty and the kernel is unchanged.
constexpr int kTraceCtas = 3, kTraceRoles = 3, kTraceProducer = 2;
constexpr int kTraceBlocks = 12, kTracePoints = 5, kTraceFirst = 8;
constexpr int kTraceSlots = 64;
static_assert(kTraceBlocks * kTracePoints <= kTraceSlots, "trace slots");
struct KTrace {
#ifdef FP8_KERNEL_TRACE
  unsigned t[kTraceBlocks * kTracePoints];
  int cta = -1;  // traced CTA index, or -1
  int unit = 0;  // the traced unit's index among this CTA's units
  int units = 0; // units started so far
  int row = -1;  // the current k-block's row of t, or -1
  __device__ __forceinline__ void init(bool lane_traced, int my_units) {
    const int b = blockIdx.x, half = gridDim.x / 2;
    cta = !lane_traced ? -1 : b == 0 ? 0 : b == 1 ? 1 : b == half ? 2 : -1;
    unit = my_units >= 2 ? 1 : 0;
    for (int i = 0; i < kTraceBlocks * kTracePoints; ++i)
      t[i] = 0;
  }
  /// Starts k-block `i` (counted from the unit's first) of the unit begun
  /// last (next_unit() counts them).
  __device__ __forceinline__ void next_unit() { ++units; }
  __device__ __forceinline__ void block(int i) {
    const int r = i - kTraceFirst;
    row = cta >= 0 && units - 1 == unit && r >= 0 && r < kTraceBlocks ? r : -1;
  }
  __device__ __forceinline__ void stamp(int point) {
    if (row >= 0) {
      unsigned c;
      asm volatile("mov.u32 %0, %%clock;" : "=r"(c)::"memory");
      t[row * kTracePoints + point] = c;
    }
  }
  __device__ __forceinline__ void flush(unsigned *out, int role) {
    if (cta < 0 || !out)
      return;
    unsigned *o = out + (cta * kTraceRoles + role) * kTraceSlots;
    for (int i = 0; i < kTraceBlocks * kTracePoints; ++i)
      o[i] = t[i];
  }
#else
  __device__ __forceinline__ void init(bool, int) {}
  __device__ __forceinline__ void next_unit() {}
  __device__ __forceinline__ void block(int) {}
  __device__ __forceinline__ void stamp(int) {}
  __device__ __forceinline__ void flush(unsigned *, int) {}
#endif
};

} // namespace fp8k
