//===- PlanScaleMirror.h - 1x128 scales in the GEMM's TMA layout -*- C++
//-*-===//
//
// The sm_90a GEMM takes A's 1x128 K-block scales by TMA, with each pipeline
// stage, only when they are stored K-major-outer: [K/128][M] f32 with a
// 16-byte row pitch (runtime/Gemm.cpp, GemmReport::scaleATma); from the
// plan's [M][K/128] scale buffers its consumers load them themselves, which
// is slower. So where a GEMM step's A scales come from a quantize step of
// the same plan, that step also writes a transposed copy, the "mirror"
// ([K/128][Mpad], Mpad = M rounded up to 4; EwParams::scaleT) into an
// executor-owned scratch, and the GEMM reads the mirror instead of the plan
// buffer. The plan, its buffers and what verification compares stay as they
// are. Which steps do this is decided here, without a GPU, so that it is
// unit tested; runtime/PlanExecutor.cpp allocates and passes the mirrors.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANSCALEMIRROR_H
#define FP8_RUNTIME_PLANSCALEMIRROR_H

#include "runtime/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// One mirror: the transposed copy of a quantize step's f32 scales.
struct ScaleMirror {
  size_t writer = 0;   ///< the quantize step that writes it (and `scales`)
  std::string scales;  ///< the plan buffer it mirrors, [rows][kBlocks]
  int64_t rows = 0;    ///< M
  int64_t kBlocks = 0; ///< K/128 (ceil)
  int64_t pitch = 0;   ///< Mpad: rows rounded up to 4 f32 (16 bytes)

  /// Bytes of the [kBlocks][pitch] f32 scratch.
  int64_t bytes() const { return kBlocks * pitch * 4; }
};

/// The quantize step whose mirror GEMM step `gemm` may read as its A scales,
/// or nothing. It may when:
///   - the step is a single (batch 1) sm_90a GEMM with a K-major A whose
///     granularity is 1 x 128 (one scale per row and K block) with f32
///     scales (F32 or F32Pow2; not UE8M0);
///   - its A-scale buffer is a temp or output buffer written by exactly one
///     step of the plan, a quantize step with the same granularity, that
///     runs before the GEMM (earlier in the same phase, or in the prepare
///     phase for a run-phase GEMM);
///   - that quantize step's input is one [M, K] matrix of the GEMM's M and K
///     (M > 0).
std::optional<size_t>
mirroredAScaleWriter(const Plan &plan, const ResolvedPlan &shapes, size_t gemm);

/// The plan's mirrors and who writes and reads them.
struct ScaleMirrorPlan {
  std::vector<ScaleMirror> mirrors;
  /// Per step: the mirror a quantize step writes or a GEMM step reads as
  /// its A scales; -1 for none.
  std::vector<int> mirrorOf;
};

/// One mirror per quantize step that some GEMM step reads through
/// mirroredAScaleWriter.
ScaleMirrorPlan planScaleMirrors(const Plan &plan, const ResolvedPlan &shapes);

/// Where GEMM step `gemm` reads its A scales from: the plan buffer (its
/// inputs[1]) with the default strides (0, 0: packed row-major), or mirror
/// `mirror` with ld_outer = 1, ld_k = the mirror's pitch.
struct AScaleSource {
  int mirror = -1; ///< index into ScaleMirrorPlan::mirrors, or -1
  int64_t ldOuter = 0, ldK = 0;
};
AScaleSource aScaleSource(const ScaleMirrorPlan &mirrors, size_t gemm);

} // namespace fp8

#endif // FP8_RUNTIME_PLANSCALEMIRROR_H
