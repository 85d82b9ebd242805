//===- PlanScaleMirror.h - GEMM scales in their TMA layout ------*- C++ -*-===//
//
// The sm_90a GEMM takes its K-block scales by TMA, with each pipeline stage,
// only when their layout allows it (runtime/Gemm.cpp, GemmReport::scaleATma
// and scaleBTma): A's 1x128 scales K-major-outer, [K/128][M] f32 with a
// 16-byte row pitch; B's block scales [N/128][K/128] with a 16-byte row
// pitch. Otherwise its consumers load them themselves, which is slower. The
// plan's [M][K/128] A-scale buffers never have the first layout, and B's
// [N/128][K/128] buffers lack the 16-byte pitch when K/128 is not a multiple
// of 4 (K = 11008: 86 blocks). So where a GEMM step reads such scales from a
// quantize step of the same plan, that step also writes a copy in the
// GEMM's layout, the "mirror" (EwParams::scaleMirror), into an
// executor-owned scratch, and the GEMM reads the mirror instead of the plan
// buffer:
//   - A: transposed, [K/128][Mpad] (Mpad = M rounded up to 4);
//   - B: the same orientation with the pitch rounded up to 4,
//     [N/128][pad4(K/128)].
// The plan, its buffers and what verification compares stay as they are.
//
// A's scales in that layout may also exist already: an operand transposed
// in FP8 before its GEMM (the weight gradients' tokens, K-grouped) had 128x1
// scales before the transpose, [K/128][M], which the transpose step turned
// into the plan's [M][K/128]. The GEMM reads the transpose's input scales
// instead, no copy made. So does B with per-row (1x128) scales, which the
// kernel's loader warp reads a k-block at a time: [K/128][N] makes those
// reads contiguous.
// A quantize step that writes its codes transposed (the FP8 transpose
// fused in: ElementwiseSpec::transposed) writes [M][K/128] scales and no
// buffer holds them before the transpose; it writes a mirror of A's layout,
// [K/128][Mpad], which any GEMM reading those scales, as A or B, dense or
// K-grouped, reads instead (transposedQuantizeWriter).
// Which steps do this is decided here, without a GPU, so that it is unit
// tested; runtime/plan/PlanExecutor.cpp allocates and passes the mirrors.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANSCALEMIRROR_H
#define FP8_RUNTIME_PLANSCALEMIRROR_H

#include "runtime/plan/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// One mirror: a copy of a quantizing step's [rows][kBlocks] f32 scales
/// with scale (r, c) at r * strideRows + c * strideCols (in scales).
struct ScaleMirror {
  size_t writer = 0;   ///< the step that writes it (and `scales`)
  std::string scales;  ///< the plan buffer it mirrors, [rows][kBlocks]
  int64_t rows = 0;    ///< scale rows: M (A), N / the block's rows (B)
  int64_t kBlocks = 0; ///< scale columns: K / the K block (ceil)
  int64_t strideRows = 0, strideCols = 0;

  /// A's layout, [kBlocks][pitch] (strides 1, pitch); else B's,
  /// [rows][pitch] (strides pitch, 1).
  bool transposed() const { return strideRows == 1 && strideCols != 1; }
  /// The scratch as [outer][pitch] f32; the pitch is a multiple of 4.
  int64_t outer() const { return transposed() ? kBlocks : rows; }
  int64_t pitch() const { return transposed() ? strideCols : strideRows; }
  /// Bytes of the scratch.
  int64_t bytes() const { return outer() * pitch() * 4; }
};

/// The quantizing step whose mirror GEMM step `gemm` may read as its A
/// scales, or nothing; a quantize step or a GEMM whose epilogue quantizes
/// its result (KernelSpec::epilogue: it writes the mirror too). It may when:
///   - the step is a single (batch 1) sm_90a GEMM with a K-major A whose
///     granularity is 1 x 128 (one scale per row and K block) with f32
///     scales (F32 or F32Pow2; not UE8M0);
///   - its A-scale buffer is a temp or output buffer written by exactly one
///     step of the plan, a quantizing step with the same granularity, that
///     runs before the GEMM (earlier in the same phase, or in the prepare
///     phase for a run-phase GEMM);
///   - that step's codes are one [M, K] matrix of the GEMM's M and K
///     (0 < M < 2^31: EwParams holds the mirror's strides as ints).
std::optional<size_t>
mirroredAScaleWriter(const Plan &plan, const ResolvedPlan &shapes, size_t gemm);

/// The quantize step whose mirror GEMM step `gemm` may read as its B scales,
/// or nothing. It may when:
///   - the step is a single (batch 1) sm_90a GEMM with a K-major B whose
///     granularity is Ro x Rk blocks, Ro > 1 and Rk a multiple of 128 (the
///     DeepSeek weights' 128 x 128), with f32 scales (not UE8M0): the scales
///     the kernel takes by TMA when their pitch allows;
///   - there is more than one row of scales (N > Ro) and the row pitch,
///     ceil(K / Rk) scales, is not a multiple of 4 (16 bytes): otherwise
///     the plan buffer goes by TMA as it is;
///   - its B-scale buffer is written by exactly one quantize step of the
///     same granularity that runs before the GEMM, over one [N, K] matrix
///     (as for A; usually a prepare-phase step quantizing the weight).
std::optional<size_t>
mirroredBScaleWriter(const Plan &plan, const ResolvedPlan &shapes, size_t gemm);

/// The transposed quantize step whose mirror GEMM step `gemm` reads as its
/// A (`isA`) or B scales, or nothing. It does when:
///   - the step is an sm_90a GEMM of one [M, K] A and one [N, K] B (a
///     batch-1 dense GEMM or a K-grouped one) with a K-major operand of
///     1 x 128 f32 scales;
///   - those scales are a temp or output buffer written by exactly one
///     step, a quantize step with transposed output (R x 1 blocks of the
///     [K, M] input: 1 x 128 ones of its [M, K] codes) that runs before the
///     GEMM, whose codes are the operand's one matrix.
/// Its mirror has A's layout, [K/128][pad4(M or N)].
std::optional<size_t> transposedQuantizeWriter(const Plan &plan,
                                               const ResolvedPlan &shapes,
                                               size_t gemm, bool isA);

/// The buffer GEMM step `gemm` may read as its A (`isA`) or B scales,
/// [K/128][M] ([K/128][N]), because it holds them before a transpose, or
/// nothing. It may when:
///   - the step is an sm_90a GEMM of one [M, K] A and one [N, K] B (a
///     batch-1 dense GEMM or a K-grouped one) with a K-major operand of
///     1 x 128 f32 scales;
///   - the operand's scale buffer is written by exactly one step, a
///     transpose step that runs before the GEMM, whose input codes are one
///     [K, M] ([K, N]) matrix with 128 x 1 scales (what becomes 1 x 128
///     transposed);
///   - those input scales are written by exactly one step, which runs
///     before the transpose; for A, M is a multiple of 4 (the 16-byte pitch
///     TMA needs).
struct UntransposedScales {
  std::string buffer; ///< the transpose's input scales, [K/128][M or N]
  int64_t pitch = 0;  ///< M or N
};
std::optional<UntransposedScales> untransposedScales(const Plan &plan,
                                                     const ResolvedPlan &shapes,
                                                     size_t gemm, bool isA);

/// The plan's mirrors and who writes and reads them.
struct ScaleMirrorPlan {
  std::vector<ScaleMirror> mirrors;
  /// Per step: the mirror a quantizing step writes; -1 for none.
  std::vector<int> writes;
  /// Per step: the mirror a GEMM step reads as its A (B) scales; -1 for
  /// none.
  std::vector<int> readsA, readsB;
  /// Per step: the buffer a GEMM step reads as its A (B) scales instead of
  /// its input (untransposedScales), with strides 1 and M (N); empty for
  /// none.
  std::vector<UntransposedScales> untransposedA, untransposedB;
};

/// One mirror per quantizing step that some GEMM step reads through
/// transposedQuantizeWriter, mirroredAScaleWriter or mirroredBScaleWriter
/// (a step's granularity serves A's layout or B's, never both).
ScaleMirrorPlan planScaleMirrors(const Plan &plan, const ResolvedPlan &shapes);

/// Where GEMM step `gemm` reads its A (`isA`) or B scales from: the plan
/// buffer (its inputs[1] or inputs[3]) with the default strides (0, 0:
/// packed row-major), mirror `mirror` with ld_outer = its strideRows and
/// ld_k = its strideCols, or plan buffer `buffer` (untransposed scales)
/// with ld_outer 1 and ld_k M (N).
struct ScaleSource {
  int mirror = -1; ///< index into ScaleMirrorPlan::mirrors, or -1
  std::string buffer;
  int64_t ldOuter = 0, ldK = 0;
};
ScaleSource scaleSource(const ScaleMirrorPlan &mirrors, size_t gemm, bool isA);

} // namespace fp8

#endif // FP8_RUNTIME_PLANSCALEMIRROR_H
