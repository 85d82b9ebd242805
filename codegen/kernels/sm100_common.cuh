//===- sm100_common.cuh - Blackwell PTX primitives -------------*- CUDA -*-===//
//
// Raw inline PTX for what the sm_100a kernels need beyond the Hopper set:
// tensor memory (tcgen05 fences, loads, waits), the tcgen05 shared-memory
// matrix descriptor, and TMA loads that complete on the peer CTA's mbarrier
// (cta_group::2). The mbarrier, TMA, cluster and conversion primitives of
// sm90_common.cuh are valid on sm_100a and are reused as they are. The
// instructions whose spelling depends on the kernel (tcgen05.alloc,
// tcgen05.cp, tcgen05.mma, tcgen05.commit with their cta_group and kind) are
// written by codegen/Sm100Gemm.cpp into each generated translation unit.
//
// None of this has run on a Blackwell GPU (there is none on our machines):
// it compiles with NVRTC for sm_100a; docs/blackwell.md says what is verified.
//
// Versioned with the kernels: any change here changes every cache key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/sm100_scale_layout.cuh"
#include "fp8/sm90_common.cuh"

namespace fp8k {

//===----------------------------------------------------------------------===//
// Tensor memory (PTX ISA, "Tensor Memory" and tcgen05 instructions)
//===----------------------------------------------------------------------===//

// NOTE: PTX ISA, tcgen05 memory consistency: tcgen05 operations are ordered
// against other threads' work only through these fences around a thread
// synchronisation (mbarrier wait/arrive, bar.sync): before_thread_sync on the
// side that hands over, after_thread_sync on the side that takes over.
__device__ __forceinline__ void tc_fence_before() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
__device__ __forceinline__ void tc_fence_after() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

/// Tensor-memory address of (lane, column): lane in bits 31..16.
__device__ __forceinline__ u32 tmem_addr(u32 base, u32 lane, u32 col) {
  return base + (lane << 16) + col;
}

/// Loads 32 consecutive 32-bit columns of this warp's 32 lanes: thread t
/// receives lane (lane base + t), columns col .. col + 31.
// NOTE: PTX ISA, tcgen05.ld: a warp may only access the 32-lane
// sub-partition (warp id % 4) of tensor memory; shape 32x32b gives each
// thread one lane, .x32 repeats it over 32 columns.
__device__ __forceinline__ void tmem_ld_32x32b_x32(u32 taddr, float (&v)[32]) {
  u32 r[32];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
               "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, "
               "%26, %27, %28, %29, %30, %31}, [%32];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]),
                 "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]),
                 "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
                 "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]),
                 "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]),
                 "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]),
                 "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]),
                 "=r"(r[30]), "=r"(r[31])
               : "r"(taddr)
               : "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i)
    v[i] = __uint_as_float(r[i]);
}

/// Waits until this thread's tcgen05.ld results are in registers.
__device__ __forceinline__ void tmem_wait_ld() {
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

//===----------------------------------------------------------------------===//
// Shared-memory matrix descriptors for tcgen05.mma and tcgen05.cp
//===----------------------------------------------------------------------===//

/// Descriptor of a K-major FP8 tile written by TMA with 128-byte swizzle:
/// rows of 128 bytes, 8-row core groups 1024 bytes apart. The tile must start
/// on a 1024-byte boundary (base offset 0); advancing K by 32 FP8 elements
/// adds 2 (32 bytes in 16-byte units) to the descriptor.
// NOTE: PTX ISA, tcgen05 "Shared Memory Descriptor": start address, leading
// and stride byte offsets in 16-byte units (bits 0-13, 16-29, 32-45), bits
// 46-47 the fixed version 0b01 (absent from the Hopper wgmma descriptor),
// base offset bits 49-51, layout type bits 61-63 (2 = 128-byte swizzle).
__device__ __forceinline__ u64 umma_desc_sw128(u32 smem) {
  u64 d = 0;
  d |= (u64)((smem & 0x3FFFF) >> 4);
  d |= (u64)1 << 16;           // leading byte offset (unused: K-major SW128)
  d |= (u64)(1024 >> 4) << 32; // stride byte offset: 8 rows x 128 B
  d |= (u64)1 << 46;           // version
  d |= (u64)2 << 61;           // 128-byte swizzle
  return d;
}

/// Descriptor of one scale atom (sm100_scale_layout.cuh) as the source of
/// tcgen05.cp 32x128b: 32 lines of 16 bytes, contiguous and unswizzled
/// (8-line core groups 128 bytes apart).
__device__ __forceinline__ u64 sf_atom_desc(u32 smem) {
  u64 d = 0;
  d |= (u64)((smem & 0x3FFFF) >> 4);
  d |= (u64)(128 >> 4) << 32; // stride byte offset: 8 lines x 16 B
  d |= (u64)1 << 46;          // version
  return d;                   // layout type 0: no swizzle
}

//===----------------------------------------------------------------------===//
// TMA and mbarriers across the CTA pair
//===----------------------------------------------------------------------===//

/// The shared::cluster address of the object at `local` in CTA `rank`.
__device__ __forceinline__ u32 cluster_addr(u32 local, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(r)
               : "r"(local), "r"(rank));
  return r;
}

/// 2-D tile load into this CTA's shared memory that completes on `bar`, an
/// mbarrier in this CTA or in its peer (shared::cluster address).
// NOTE: PTX ISA, cp.async.bulk.tensor: with .cta_group::2 the mbarrier may
// be in the shared memory of either CTA of the pair; this is how the peer's
// loads are counted on the leader's barrier, which the MMA thread waits on.
__device__ __forceinline__ void tma_load_2d_pair(u32 dst, const TmaDesc *d,
                                                 u32 bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
      "complete_tx::bytes.cta_group::2 [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
      "l"(d), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

/// arrive.expect_tx on an mbarrier given by its shared::cluster address.
__device__ __forceinline__ void mbar_arrive_expect_tx_cluster(u32 bar,
                                                              u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 "
               "_, [%0], %1;" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

/// Arrives on an mbarrier given by its shared::cluster address.
__device__ __forceinline__ void mbar_arrive_remote(u32 bar) {
  asm volatile(
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar)
      : "memory");
}

/// 16-byte shared-memory store (the epilogue's staging tile).
__device__ __forceinline__ void st_shared_v4(u32 addr, u32 a, u32 b, u32 c,
                                             u32 d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a),
               "r"(b), "r"(c), "r"(d)
               : "memory");
}

} // namespace fp8k
