//===- CudaEmulator.h - Just enough CUDA to run simple kernels on the CPU -===//
//
// Force-included (-include) into the generated quantize, transpose and
// elementwise translation units when they are compiled with g++ for
// EmulatedKernelsTest: the CUDA built-ins those kernels use, with CUDA's
// semantics, so that the very source NVRTC compiles runs on a machine
// without a GPU.
//
//   - a launch runs the CTAs of the grid one after another; the threads of
//     a CTA are real threads (std::thread), so __syncthreads (and
//     __syncthreads_and) is a barrier over them, __shfl_xor_sync, __shfl_sync
//     and __match_any_sync exchanges over the 32 lanes of a warp, atomicMax,
//     atomicAdd and atomicExch locked read-modify-writes, and __shared__
//     variables (function-local statics) are shared by the CTA running, as
//     is its dynamic shared memory (227 KiB whatever the launch asked); a
//     grid-wide wait works only on a grid of one CTA (the emulated tests
//     run on one SM);
//   - the _rn arithmetic intrinsics are the IEEE operations they name
//     (compiled with -ffp-contract=off).
//
// Not emulated: anything else (no memory model beyond sequential
// consistency, no timing). The GEMM kernels (wgmma, TMA) are not run here.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TEST_CUDAEMULATOR_H
#define FP8_TEST_CUDAEMULATOR_H

#include "test/runtime/emulation/CudaEmulatorRuntime.h"

#include <cmath>
#include <cstring>
#include <mutex>

#define __CUDACC__ 1
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define threadIdx (cudaemu::tIdx)
#define blockIdx (cudaemu::bIdx)
#define blockDim (cudaemu::bDim)
#define gridDim (cudaemu::gDim)
// Tables of one-input values (elementwise_table.cuh) are filled at any
// size, so that the tests' small tensors take the lookups.
#define FP8K_TABLE_ELEMENTS_PER_ENTRY 0

inline void __syncthreads() { cudaemu::cta->barrier.wait(); }

/// __syncthreads, returning whether `pred` was non-zero on every thread.
inline int __syncthreads_and(int pred) {
  std::vector<unsigned> &flags = cudaemu::cta->shuffle;
  flags[size_t(cudaemu::linear)] = pred != 0;
  cudaemu::cta->barrier.wait();
  int all = 1;
  for (unsigned f : flags)
    all &= int(f);
  cudaemu::cta->barrier.wait();
  return all;
}

inline unsigned __shfl_xor_sync(unsigned, unsigned v, int mask) {
  const int lane = cudaemu::linear & 31, warp = cudaemu::linear >> 5;
  cudaemu::cta->shuffle[size_t(cudaemu::linear)] = v;
  cudaemu::cta->warps[size_t(warp)]->wait();
  const unsigned r = cudaemu::cta->shuffle[size_t((warp << 5) | (lane ^ mask))];
  cudaemu::cta->warps[size_t(warp)]->wait();
  return r;
}

/// v of lane `src` of the warp (src in [0, 32), as the kernels pass it).
inline unsigned __shfl_sync(unsigned, unsigned v, int src) {
  const int warp = cudaemu::linear >> 5;
  cudaemu::cta->shuffle[size_t(cudaemu::linear)] = v;
  cudaemu::cta->warps[size_t(warp)]->wait();
  const unsigned r = cudaemu::cta->shuffle[size_t((warp << 5) | (src & 31))];
  cudaemu::cta->warps[size_t(warp)]->wait();
  return r;
}

/// The lanes of the warp whose v equals this lane's (every lane takes part).
inline unsigned __match_any_sync(unsigned, int v) {
  const int warp = cudaemu::linear >> 5;
  cudaemu::cta->shuffle[size_t(cudaemu::linear)] = unsigned(v);
  cudaemu::cta->warps[size_t(warp)]->wait();
  unsigned mask = 0;
  for (int l = 0; l < 32; ++l)
    if (cudaemu::cta->shuffle[size_t((warp << 5) | l)] == unsigned(v))
      mask |= 1u << l;
  cudaemu::cta->warps[size_t(warp)]->wait();
  return mask;
}

inline int __popc(unsigned x) { return __builtin_popcount(x); }

inline unsigned atomicMax(unsigned *p, unsigned v) {
  std::lock_guard<std::mutex> lock(cudaemu::atomics);
  const unsigned old = *p;
  if (v > old)
    *p = v;
  return old;
}

// The vector types the kernels load through (NVRTC has them built in).
struct float2 {
  float x, y;
};
struct float4 {
  float x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};

inline int __ffs(int x) { return __builtin_ffs(x); }

// (selectors 0-7 only: no sign replication)
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n)
    r |= unsigned((v >> (8 * ((s >> (4 * n)) & 7))) & 0xFFu) << (8 * n);
  return r;
}

inline int atomicAdd(int *p, int v) {
  std::lock_guard<std::mutex> lock(cudaemu::atomics);
  const int old = *p;
  *p = old + v;
  return old;
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
  std::lock_guard<std::mutex> lock(cudaemu::atomics);
  const unsigned old = *p;
  *p = old + v;
  return old;
}
inline unsigned long long atomicAdd(unsigned long long *p,
                                    unsigned long long v) {
  std::lock_guard<std::mutex> lock(cudaemu::atomics);
  const unsigned long long old = *p;
  *p = old + v;
  return old;
}
inline unsigned long long atomicExch(unsigned long long *p,
                                     unsigned long long v) {
  std::lock_guard<std::mutex> lock(cudaemu::atomics);
  const unsigned long long old = *p;
  *p = v;
  return old;
}

inline unsigned __float_as_uint(float x) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }

#endif // FP8_TEST_CUDAEMULATOR_H
