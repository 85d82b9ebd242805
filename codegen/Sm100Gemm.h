//===- Sm100Gemm.h - Blackwell FP8 GEMM code generator ----------*- C++ -*-===//
//
// KernelSpec (arch sm_100a) -> a small CUDA translation unit that instantiates
// codegen/kernels/sm100_gemm.cuh with the spec's constants and the tcgen05
// instructions for its cta_group, kind and formats.
//
// Two kernel modes, chosen by the recipe:
//   - block-scaled (either operand's scales vary along K: MX 1x32 UE8M0,
//     DeepSeek's 1x128 / 128x128 with power-of-two scales): tcgen05.mma
//     kind::mxf8f6f4.block_scale.block32 with UE8M0 scales in tensor memory,
//     in the layout of codegen/Sm100ScaleLayout.h (scales of other
//     granularities are replicated to every 32-element K block by the host
//     packer, which is exact for powers of two);
//   - epilogue-scaled (scales constant along K: per tensor, per row of A,
//     per column of B; any f32 or UE8M0 value): tcgen05.mma kind::f8f6f4 and
//     the scales multiplied in the epilogue.
// Both accumulate in FP32 tensor memory: every K = 32 MMA step adds into the
// accumulator, so the promotion interval is 32 (or 0, meaning the same).
//
// Nothing generated here has run on a GPU: it is compile-verified (NVRTC,
// sm_100a) and its numerics are emulated on the CPU (docs/blackwell.md).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_SM100GEMM_H
#define FP8_CODEGEN_SM100GEMM_H

#include "codegen/GeneratedKernel.h"
#include "core/KernelSpec.h"
#include "core/Status.h"
#include "core/Target.h"

#include <cstdint>

namespace fp8 {

/// Largest dynamic shared memory a Blackwell (sm_100) CTA may use (227 KiB).
inline constexpr int kSm100MaxSharedBytes =
    targetInfo(Arch::SM100a).maxSharedBytes;
/// Tensor-memory columns of one SM (128 lanes x 512 columns x 32 bits).
inline constexpr int kSm100TmemColumns = 512;

/// How one operand's scales enter the sm_100a kernel.
struct Sm100ScalePlan {
  enum class Mode : uint8_t {
    Tensor, ///< one value, applied in the epilogue
    Outer,  ///< varies along M (A) or N (B) only, applied in the epilogue
    Block,  ///< UE8M0 block scales of the MMA (the packed layout)
  };
  Mode mode = Mode::Tensor;
  int64_t outerBlock = 0; ///< Outer: rows (A) / columns (B) per scale
  bool ue8m0 = false;     ///< Tensor/Outer: scales stored as UE8M0 bytes
};

/// Everything the generator derives from a checked spec.
struct Sm100Plan {
  bool blockScaled = false; ///< kind::mxf8f6f4 (else kind::f8f6f4)
  Sm100ScalePlan a, b;
  int mmaM = 128;       ///< 128 (cta_group::1) or 256 (cta_group::2)
  int sfbAtoms = 0;     ///< scale atoms of B loaded per stage
  int accStages = 2;    ///< accumulators in tensor memory
  int tmemColumns = 0;  ///< allocated (a power of two >= 32)
  int epiBuffers = 1;   ///< staging buffers per epilogue warp
  bool tmaStore = true; ///< D written with TMA (else predicated stores)
  uint32_t idesc = 0;   ///< instruction descriptor (scale IDs 0)
  int threads = 0;      ///< 64 + 128 per epilogue warpgroup
  int sharedBytes = 0;  ///< dynamic shared memory incl. alignment slack
};

/// Checks that `spec` describes a kernel the sm_100a generator can emit:
/// K-major FP8 operands, a recipe the block-scaled or epilogue-scaled MMA
/// applies exactly (scales that vary along K must be powers of two), a
/// promotion interval of 0 or 32, and a legal tile (block_m 128, block_k 128,
/// block_n a multiple of 32 (16 without block scales) up to 256, cta_group 1
/// or 2 with a matching cluster, 1 or 2 epilogue warpgroups, no split-K) that
/// fits shared and tensor memory. The message names the field, what was
/// expected and what was found.
Status checkSm100Spec(const KernelSpec &spec);

/// The recipe part of checkSm100Spec (formats, granularities, scale
/// formats, promotion interval, result type, K-major layouts): what the
/// sm_100a generator implements, whatever the shape and tile.
Status checkSm100Recipe(const KernelSpec &spec);

/// The plan of a spec that passes checkSm100Spec.
Expected<Sm100Plan> planSm100Gemm(const KernelSpec &spec);

/// The 32-bit tcgen05.mma instruction descriptor of `spec` (scale-factor IDs
/// zero; the kernel ORs in the K block of each step).
// NOTE: PTX ISA 9.7.16.4.2 (Instruction Descriptor): kind::f8f6f4: bits 4-5
// D type (F32 = 1), 7-9 A type, 10-12 B type (E4M3 = 0, E5M2 = 1), 15/16
// transpose A/B (0: K-major), 17-22 N >> 3, 24-28 M >> 4. kind::mxf8f6f4:
// bits 4-5 are B's scale-factor ID, bit 23 the scale type (UE8M0 = 1), bits
// 29-30 A's scale-factor ID.
uint32_t sm100InstrDesc(const KernelSpec &spec);

/// Shared memory the kernel for `spec` needs (bytes, incl. alignment slack).
int sm100SharedBytes(const KernelSpec &spec);

/// Largest pipeline depth that fits shared memory for `spec`'s tile.
int sm100MaxStages(const KernelSpec &spec);

/// Emits the kernel for `spec` (checked with checkSm100Spec first).
Expected<GeneratedKernel> emitSm100Gemm(const KernelSpec &spec);

/// The heuristic tile configuration for `spec` (its m must be known) on a
/// GPU of `smCount` SMs (B200: 148). Not tuned: there is no Blackwell GPU to
/// measure on. It picks the widest block_n (256 down to 64) that minimises
/// the number of waves of output tiles, cta_group::2 (a 256-row pair tile,
/// half of B per CTA) when M spans at least four 128-row tiles and there are
/// enough pair units to fill the GPU, and as many stages as fit (at most 8).
/// The result always passes checkSm100Spec.
ConfigChoice selectSm100Config(const KernelSpec &spec, int smCount);

} // namespace fp8

#endif // FP8_CODEGEN_SM100GEMM_H
