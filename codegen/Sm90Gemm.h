//===- Sm90Gemm.h - Hopper scaled FP8 GEMM code generator -------*- C++ -*-===//
//
// KernelSpec (arch sm_90a) -> a small CUDA translation unit that instantiates
// codegen/kernels/sm90_gemm.cuh with the spec's constants and the wgmma
// instruction for its tile width and formats.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_SM90GEMM_H
#define FP8_CODEGEN_SM90GEMM_H

#include "codegen/GeneratedKernel.h"
#include "codegen/kernels/sm90_params.h"
#include "core/KernelSpec.h"
#include "core/Status.h"
#include "core/Target.h"

#include <optional>
#include <string>

namespace fp8 {

/// Largest dynamic shared memory a Hopper CTA may use (227 KiB).
inline constexpr int kSm90MaxSharedBytes =
    targetInfo(Arch::SM90a).maxSharedBytes;

/// How one operand's scales enter the kernel.
struct Sm90ScalePlan {
  enum class Mode : uint8_t {
    Tensor, ///< one value, applied in the epilogue
    Outer,  ///< varies along M (A) or N (B) only, applied in the epilogue
    K,      ///< varies along K, applied at every promotion
  };
  Mode mode = Mode::Tensor;
  int64_t outerBlock = 0; ///< rows (A) / columns (B) per scale; 0 = whole
  int64_t kBlock = 0;     ///< K elements per scale; 0 = whole
  bool ue8m0 = false;     ///< scales stored as UE8M0 bytes (else f32)
};

/// Scale plan of one operand of `spec` (A when `isA`), or why the sm_90a
/// kernel cannot apply that granularity.
Expected<Sm90ScalePlan> planSm90Scales(const KernelSpec &spec, bool isA);

/// Checks that `spec` describes a kernel the sm_90a generator can emit (K-major
/// FP8 operands, a supported granularity pair and promotion interval, a legal
/// tile that fits registers and shared memory). The message names the field,
/// what was expected and what was found.
Status checkSm90Spec(const KernelSpec &spec);

/// The recipe part of checkSm90Spec (formats, granularities, scale formats,
/// promotion interval, result type, K-major layouts): what the sm_90a
/// generator implements, whatever the shape and tile.
Status checkSm90Recipe(const KernelSpec &spec);

/// Shared memory the kernel for `spec` needs (bytes, incl. alignment slack).
int sm90SharedBytes(const KernelSpec &spec);

/// Largest pipeline depth that fits shared memory for `spec`'s tile.
int sm90MaxStages(const KernelSpec &spec);

/// K slices a tile can be cut into (split-K, a split tail): one per unit of
/// sm90GroupBlocks k-blocks, so that each slice holds whole promotion groups
/// and its partial sum is promoted before it is published.
int64_t sm90KSlices(const KernelSpec &spec);

/// K-blocks (128 elements each) per unit that split-K and split-tail slices
/// are cut in: the fewest whole k-blocks that hold whole promotion groups,
/// lcm(interval / 32, 4) / 4 (1 without promotion). Interval 96 takes 3
/// (four groups of 96), 256 takes 2, 32-128 take 1.
int sm90GroupBlocks(const KernelSpec &spec);

/// Most K slices TileConfig::tailSplit may ask for.
inline constexpr int kSm90MaxTailSplit = 8;

/// The persistent schedule's split tail (TileConfig::tailSplit): of `tiles`
/// output tiles (cluster tile groups) over `slots` CTAs (clusters), the
/// last partial wave's `tiles - first` tiles are each cut into `split` K
/// slices, so that the wave holds up to `slots` slices instead of a few
/// whole tiles. `split` is the largest value <= min(maxSplit, kSlices) whose
/// slices fit one wave; 1 (and first == tiles) when nothing is split. The
/// kernel (sm90_gemm.cuh, Schedule) takes both at launch.
struct Sm90TailSchedule {
  int64_t first = 0; ///< the first split tile; tiles before it are whole
  int split = 1;     ///< K slices per tile from `first` on
  /// Work units: whole tiles, then the slices of the tail's tiles.
  int64_t units(int64_t tiles, int splitK = 1) const {
    return fp8k::gemmUnits<int64_t>(tiles, splitK, first, split);
  }
};
Sm90TailSchedule sm90TailSchedule(int64_t tiles, int64_t slots, int maxSplit,
                                  int64_t kSlices);

/// How the K-varying scales reach the consumers: by TMA with each pipeline
/// stage (one bit per operand), or loaded by the consumers themselves one
/// k-block ahead. Only f32 scales that vary along K can come by TMA (A per
/// row, B per block), and only when the scale tensors' layout allows it,
/// which the runtime learns per call; it then loads the kernel variant that
/// matches. A kernel is built for one way: a run-time choice between both
/// makes NVRTC ~20% slower (docs/results/h100-2026-11-22k/).
inline constexpr int kSm90ScaleTmaA = fp8k::kScaleTmaA;
inline constexpr int kSm90ScaleTmaB = fp8k::kScaleTmaB;

/// The operands of `spec` whose K scales can come by TMA (kSm90ScaleTma*
/// bits): the default kernel takes all of them that way.
int sm90ScaleTmaOperands(const KernelSpec &spec);

/// Whether `spec`'s kernel can load a ragged last M tile through
/// descriptors of its own, boxes as high as the tile's rows below M (the
/// tail-box variant, Cfg::kATail): a dense GEMM whose CTAs do not share A
/// in a cluster.
bool sm90HasTailBox(const KernelSpec &spec);

/// Whether a launch of `spec` over `m` rows takes the tail-box variant: it
/// has one and M leaves the last of several M tiles ragged
/// (fp8k::gemmABoxRows). Whole tiles, and an M within one tile (whose A
/// descriptors take the small box), keep the default kernel's producer.
bool sm90TailBox(const KernelSpec &spec, int64_t m);

/// The name of `spec`'s kernel that takes by TMA the K scales of the
/// operands in `scaleTma` (a subset of sm90ScaleTmaOperands(spec)): the
/// spec's kernelName() for the default, with "_ld" and the operands whose
/// scales the consumers load ("a", "b") otherwise, and "_tail" for the
/// tail-box variant.
std::string sm90KernelName(const KernelSpec &spec, int scaleTma,
                           bool tailBox = false);

/// Emits the kernel for `spec` (checked with checkSm90Spec first), taking
/// the K scales of the operands in `scaleTma` by TMA (default: all that
/// can, sm90ScaleTmaOperands), the tail-box variant where `tailBox`
/// (sm90HasTailBox must hold; default: where the spec's M, when known,
/// asks for it, sm90TailBox).
Expected<GeneratedKernel> emitSm90Gemm(const KernelSpec &spec,
                                       std::optional<int> scaleTma = {},
                                       std::optional<bool> tailBox = {});

} // namespace fp8

#endif // FP8_CODEGEN_SM90GEMM_H
