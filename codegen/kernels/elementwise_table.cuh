//===- elementwise_table.cuh - Tables of one-input values ------*- CUDA -*-===//
//
// A program's value that depends on one bf16 input alone (SwiGLU's
// silu(g) = g / (1 + exp(-g)), a GELU) takes one of 2^16 values. A kernel
// whose program has such a value (codegen/ElementwiseTable.cpp picks them)
// computes it once per CTA for the inputs of kTableBinades binades of both
// signs into shared memory, with the program's own instructions, and looks
// it up per element: the same bits as computing it, by construction. Inputs
// outside the table's binades (zeros, the tiny and the huge, NaNs) compute
// it. The generated Prog declares, for table j:
//   struct Tab<j> { static float f(float x); };  // the value, computed
// and its prepare(p), which every entry that evaluates the program calls
// first, fills each table (table_fill) and waits for the CTA.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"

// (The CPU emulation of the kernels fills the tables at any size, so that
// its small tensors take the lookups.)
#ifndef FP8K_TABLE_ELEMENTS_PER_ENTRY
#define FP8K_TABLE_ELEMENTS_PER_ENTRY kTableElementsPerEntry
#endif

namespace fp8k {

/// Entries of one sign: kTableBinades binades of 128 bf16 significands.
constexpr u32 kTableHalf = u32(kTableBinades) * 128u;
static_assert(kTableHalf == 1u << 12,
              "table_slot puts the sign at bit 12, above the magnitude");

/// The first magnitude of a table the CTA has not filled: past every bf16
/// magnitude, so no lookup would match (table_lookup_n computes them all).
constexpr u32 kTableEmpty = 0x10000u;

/// Table F's storage: its values, and the first bf16 magnitude (bits 0-14)
/// it holds, or kTableEmpty.
template <class F> struct TableOf {
  static __device__ __forceinline__ float *values() {
    __shared__ float v[kTableEntries];
    return v;
  }
  static __device__ __forceinline__ u32 *first() {
    __shared__ u32 f;
    return &f;
  }
};

/// Whether the kernel's CTAs fill their tables (table_pays over the grid
/// and the [batch, rows, cols] tensor).
__device__ __forceinline__ bool table_wanted(const EwParams &p) {
  const i64 ctas = i64(gridDim.x) * gridDim.y * gridDim.z;
  return table_pays(p.batch * p.rows * p.cols, ctas,
                    FP8K_TABLE_ELEMENTS_PER_ENTRY);
}

/// Fills table F (when `on`; else marks it empty). The caller waits for the
/// CTA (__syncthreads) before the first lookup.
template <class F> __device__ __forceinline__ void table_fill(bool on) {
  constexpr u32 kFirst = u32(kTableLowExp) << 7;
  if (threadIdx.x == 0)
    *TableOf<F>::first() = on ? kFirst : kTableEmpty;
  if (!on)
    return;
  float *v = TableOf<F>::values();
  for (u32 j = threadIdx.x; j < u32(kTableEntries); j += blockDim.x) {
    const u32 mag = kFirst + j % kTableHalf;
    const u32 bits = j < kTableHalf ? mag : mag | 0x8000u;
    v[j] = F::f(u2f(bits << 16));
  }
}

/// Where table F holds F(x) (x a bf16 value widened to float): entry (|x|
/// bits - first) of x's sign's half, and whether it is there (else the
/// slot is some entry of the table, and the caller computes F(x)).
__device__ __forceinline__ u32 table_slot(float x, u32 first, bool &hit) {
  const u32 u = f2u(x);
  const u32 k = ((u >> 16) & 0x7FFFu) - first;
  hit = k < kTableHalf;
  // (One three-input bit operation: the low bits of k, the sign above.)
  return (k & (kTableHalf - 1u)) | ((u >> 19) & kTableHalf);
}

/// F(x[k]) for k < N: every lookup issued, then (a lane with a miss only)
/// the misses computed; one branch for N values. (An empty table misses
/// every value. Skipping its lookups behind a test of `first` made the
/// SwiGLU quantize slower: 0.0384 against 0.0372 ms on 4096x4096, H200,
/// docs/results/h200-2026-12-01-silu-table/run3.)
template <class F, int N>
__device__ __forceinline__ void table_lookup_n(const float x[N], float y[N]) {
  const float *v = TableOf<F>::values();
  const u32 first = *TableOf<F>::first();
  bool all = true;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    bool hit;
    y[k] = v[table_slot(x[k], first, hit)];
    all = all && hit;
  }
  if (!all) {
    // (The slots again rather than N flags kept across the branch: the
    // flags cost a register and three instructions a value.)
#pragma unroll
    for (int k = 0; k < N; ++k) {
      bool hit;
      table_slot(x[k], first, hit);
      if (!hit)
        y[k] = F::f(x[k]);
    }
  }
}

/// F(x) for one value.
template <class F> __device__ __forceinline__ float table_lookup(float x) {
  float y;
  table_lookup_n<F, 1>(&x, &y);
  return y;
}

} // namespace fp8k
