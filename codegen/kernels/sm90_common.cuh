//===- sm90_common.cuh - Hopper PTX primitives -----------------*- CUDA -*-===//
//
// Raw inline PTX for what the sm_90a kernels need: shared-memory addressing,
// mbarriers, TMA (cp.async.bulk.tensor), WGMMA fences, setmaxnreg, named
// barriers. No CUDA header is included: NVRTC compiles this in ~0.1 s (the
// CCCL <cuda/barrier> route costs ~2 s per kernel, see BUILD-NOTES).
//
// Versioned with the kernels: any change here changes every cache key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/grid_dependency.h"

namespace fp8k {

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

/// An opaque CUtensorMap (128 bytes, 64-byte aligned), passed by value as a
/// __grid_constant__ kernel parameter.
struct __align__(64) TmaDesc {
  u64 opaque[16];
};

/// Scale handling modes, per operand.
enum : int {
  kScaleTensor = 0, ///< one value for the whole operand (epilogue)
  kScaleOuter = 1,  ///< varies along M (A) / N (B) only (epilogue)
  kScaleK = 2,      ///< varies along K (applied at every promotion)
};

__device__ __forceinline__ u32 smem_addr(const void *p) {
  u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }"
      : "=r"(r)
      : "l"(p));
  return r;
}

__device__ __forceinline__ u32 lane_id() {
  u32 r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

//===----------------------------------------------------------------------===//
// mbarrier (PTX ISA 9.7.13.15)
//===----------------------------------------------------------------------===//

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count)
               : "memory");
}

__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
      "r"(bytes)
      : "memory");
}

/// Blocks until the phase with the given parity has completed.
// NOTE: PTX ISA 9.7.13.15.16: try_wait.parity returns true once the phase
// whose parity is `parity` is complete; on a fresh barrier (phase 0 running)
// parity 1 counts as complete, which lets a producer pass its first round.
// With FP8_KERNEL_DEBUG (FP8_KERNEL_DEBUG=1 in the environment of the code
// generator) a wait that spins ~2^28 times prints the barrier and traps, so a
// pipeline bug ends in an error naming the barrier instead of a hang.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  u32 done;
#ifdef FP8_KERNEL_DEBUG
  unsigned long long spins = 0;
#endif
  do {
    asm volatile("{ .reg .pred p;\n"
                 "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
#ifdef FP8_KERNEL_DEBUG
    if (!done && ++spins == (1ull << 28)) {
      printf("fp8 kernel: block %d thread %d stuck on mbarrier at smem 0x%x "
             "(parity %u)\n",
             blockIdx.x, threadIdx.x, bar, parity);
      asm volatile("trap;");
    }
#endif
  } while (!done);
}

//===----------------------------------------------------------------------===//
// Clusters (PTX ISA 9.7.13.1, 9.7.9.18 mapa)
//===----------------------------------------------------------------------===//

__device__ __forceinline__ u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

/// All threads of all CTAs of the cluster (release/acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

/// Arrives on the mbarrier at the same offset in CTA `rank` of the cluster.
// NOTE: PTX ISA 9.7.13.15.13: default semantics (.release.cta). The arrive
// only says "this warp's wgmmas have finished reading the stage" (they were
// waited for); a cluster-scope release would fence every prior access of the
// thread on each k-block.
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 rank) {
  asm volatile(
      "{ .reg .b32 remote;\n"
      "  mapa.shared::cluster.u32 remote, %0, %1;\n"
      "  mbarrier.arrive.shared::cluster.b64 _, [remote]; }" ::"r"(bar),
      "r"(rank)
      : "memory");
}

//===----------------------------------------------------------------------===//
// cp.async (PTX ISA 9.7.9.3): small asynchronous copies for scale factors
//===----------------------------------------------------------------------===//

/// 4-byte global -> shared copy; `valid` false zero-fills the destination.
__device__ __forceinline__ void cp_async_4(u32 dst, const void *src,
                                           bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst),
               "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}

/// Arrives on `bar` once this thread's earlier cp.async copies have landed;
/// .noinc: the arrival counts against the barrier's expected count.
__device__ __forceinline__ void cp_async_arrive(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar)
               : "memory");
}

//===----------------------------------------------------------------------===//
// TMA (PTX ISA 9.7.9.25)
//===----------------------------------------------------------------------===//

__device__ __forceinline__ void tma_prefetch_desc(const TmaDesc *d) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(d) : "memory");
}

/// 2-D tile load into shared memory, completing on `bar` (complete_tx).
__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc *d, u32 bar,
                                            int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
               "l"(d), "r"(bar), "r"(c0), "r"(c1)
               : "memory");
}

/// 2-D tile load multicast to the CTAs of `mask` in the cluster: the data and
/// the complete_tx land at the same shared-memory offsets in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TmaDesc *d,
                                                      u32 bar, int c0, int c1,
                                                      unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], "
               "[%2], %5;" ::"r"(dst),
               "l"(d), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
               : "memory");
}

/// 2-D tile store from shared memory (bulk-group completion).
__device__ __forceinline__ void tma_store_2d(const TmaDesc *d, u32 src, int c0,
                                             int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
               "[%0, {%2, %3}], [%1];" ::"l"(d),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}

__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most N committed store groups are still reading shared
/// memory.
template <int N = 0> __device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/// Waits until the committed stores are complete (visible in global memory).
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// NOTE: PTX ISA 9.7.13.4.2 (proxy fences): generic-proxy writes to shared
// memory must be fenced before the async proxy (TMA, wgmma) reads them.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

//===----------------------------------------------------------------------===//
// WGMMA bookkeeping (PTX ISA 9.7.15.5)
//===----------------------------------------------------------------------===//

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// Keeps the compiler from moving accumulator accesses across a wgmma wait.
template <int N> __device__ __forceinline__ void reg_fence(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(r[i])::"memory");
}

/// Shared-memory matrix descriptor for a K-major tile written by TMA with
/// 128-byte swizzle: rows of 128 bytes, 8-row core groups 1024 bytes apart.
// NOTE: PTX ISA 9.7.15.5.1 (matrix descriptor): start address and strides
// in 16-byte units; bits 62-63 = 1 selects the 128B swizzle mode. FP8 wgmma
// requires both operands K-major in shared memory (no transpose for 8-bit).
__device__ __forceinline__ u64 make_desc_sw128(u32 smem) {
  u64 d = 0;
  d |= (u64)((smem & 0x3FFFF) >> 4);
  d |= (u64)1 << 16;           // leading byte offset (unused for SW128 K-major)
  d |= (u64)(1024 >> 4) << 32; // stride byte offset: 8 rows x 128 B
  d |= (u64)1 << 62;           // 128B swizzle
  return d;
}

/// Maps a linear index to (m group, n group), in bands of kGroup groups so
/// that concurrently running CTAs share operand tiles in L2. Shared by the
/// sm_90a and sm_100a schedules (C provides kRasterAlongN and kGroup).
template <class C>
__device__ __forceinline__ void tile_coords(int tile, int mt, int nt, int &mb,
                                            int &nb) {
  if (C::kRasterAlongN) {
    const int band = tile / (C::kGroup * nt);
    const int first = band * C::kGroup;
    const int gs = min(C::kGroup, mt - first);
    const int r = tile - band * C::kGroup * nt;
    mb = first + r % gs;
    nb = r / gs;
  } else {
    const int band = tile / (C::kGroup * mt);
    const int first = band * C::kGroup;
    const int gs = min(C::kGroup, nt - first);
    const int r = tile - band * C::kGroup * mt;
    nb = first + r % gs;
    mb = r / gs;
  }
}

//===----------------------------------------------------------------------===//
// Registers, barriers, conversions
//===----------------------------------------------------------------------===//

template <int R> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}
template <int R> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}

/// bar.sync on a named barrier among `count` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier(u32 id, u32 count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %2, %1;" : "=r"(r) : "f"(lo), "f"(hi));
  return r;
}

__device__ __forceinline__ float bf16_to_f32(unsigned short h) {
  return __uint_as_float(((u32)h) << 16);
}

/// Decodes a UE8M0 scale byte: 2^(e - 127); 0xFF is NaN.
__device__ __forceinline__ float ue8m0_to_f32(u32 e) {
  if (e == 0xFF)
    return __uint_as_float(0x7FC00000u);
  if (e == 0)
    return __uint_as_float(0x00400000u); // 2^-127, a float denormal
  return __uint_as_float(e << 23);
}

template <bool kE8>
__device__ __forceinline__ float load_scale(const void *base, i64 idx) {
  if (kE8)
    return ue8m0_to_f32(__ldg((const unsigned char *)base + idx));
  return __ldg((const float *)base + idx);
}

/// Index of the scale of element (outer, k) for a block shape (ro, rk); a
/// block extent of 0 means the whole dimension.
template <int kRo, int kRk>
__device__ __forceinline__ i64 scale_index(int outer, int k, i64 ld_outer,
                                           i64 ld_k) {
  const i64 o = kRo == 0 ? 0 : outer / kRo;
  const i64 kk = kRk == 0 ? 0 : k / kRk;
  return o * ld_outer + kk * ld_k;
}

__device__ __forceinline__ void st_shared_u32(u32 addr, u32 v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
/// stmatrix .x4: four 8x8 b16 matrices, one 32-bit register of each per
/// thread in the mma accumulator layout (row lane/4, columns 2*(lane%4) and
/// +1); lane 8k + i gives the shared address of row i of matrix k.
__device__ __forceinline__ void stmatrix_x4(u32 addr, u32 a, u32 b, u32 c,
                                            u32 d) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
          addr),
      "r"(a), "r"(b), "r"(c), "r"(d)
      : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(u32 addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b)
               : "memory");
}
/// ldmatrix .x4: the inverse of stmatrix_x4 (the same addresses give each
/// thread the same registers).
__device__ __forceinline__ void ldmatrix_x4(u32 addr, u32 (&v)[4]) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
      : "r"(addr)
      : "memory");
}
__device__ __forceinline__ u32 ld_shared_u32(u32 addr) {
  u32 v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void ld_shared_v2_f32(u32 addr, float &a, float &b) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];"
               : "=f"(a), "=f"(b)
               : "r"(addr)
               : "memory");
}

/// L2-only loads/stores for data exchanged between CTAs of one launch.
__device__ __forceinline__ void st_cg_v4(float *p, float a, float b, float c,
                                         float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a),
               "f"(b), "f"(c), "f"(d)
               : "memory");
}
__device__ __forceinline__ void ld_cg_v4(const float *p, float &a, float &b,
                                         float &c, float &d) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(p)
               : "memory");
}

} // namespace fp8k
