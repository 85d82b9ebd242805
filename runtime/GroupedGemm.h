//===- GroupedGemm.h - The runtime's grouped FP8 GEMMs (MoE) ----*- C++ -*-===//
//
// G scaled GEMMs D_g = A_g * B_g^T sharing a recipe, N and K: the experts of
// a mixture-of-experts layer. One launch of one persistent kernel walks the
// tiles of every group; the group boundaries are device data (no host
// synchronisation, so the call can sit in a CUDA graph). Three forms; the
// first two are those of `fp8.grouped_scaled_matmul`:
//
//   contiguous  A [M, K] and D [M, N] hold the groups' rows one after the
//               other (tokens sorted by expert); groups = offsets [G + 1]
//               (int32), group g is rows offsets[g] .. offsets[g + 1]. A
//               group may start at any row: no padding to the tile. Ling
//               2.0's layout (each group padded to a multiple of the tile by
//               the routing step) is the same call with aligned offsets.
//   masked      A [G, max_m, K] and D [G, max_m, N]; groups = valid rows
//               [G] (int32): the first groups[g] rows of group g are
//               computed, D's other rows are not written and A's do not
//               affect the result (TMA may fetch them with the tile).
//   grouped_k   the experts' weight gradients dW_g = dY_g^T X_g: A [M, K]
//               and B [N, K] hold every group's K slab (tokens, K-major:
//               the transposed activations and gradients); groups =
//               offsets [G + 1] along K, multiples of 128; D [G, M, N],
//               f32 or bf16, optionally accumulated into (C may be D). An
//               empty group writes zeros (or C).
//
// Along M, B is [G, N, K] (k_major); B's scales are G stacked scale tensors
// of one [N, K] matrix each, A's cover all of A (contiguous) or are G
// stacked tensors of one [max_m, K] slab each (masked). Along K the scales
// cover all of A and all of B, in K blocks of 128. The scale rules are
// those of fp8::gemm; in the contiguous form A's scales cover one row
// (1x128, per-row) or the whole tensor, since a group starts at any row.
//
// Group tensors that break the form (offsets outside [0, M] or decreasing,
// valid rows outside [0, max_m], offsets along K that are no multiple of
// 128) are clamped by the kernel, never a fault; checkGroupTensor reads one
// back and names what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_GROUPEDGEMM_H
#define FP8_RUNTIME_GROUPEDGEMM_H

#include "runtime/Gemm.h"

#include <cstdint>
#include <optional>

namespace fp8 {

struct Operands; // runtime/Sm90Launch.h

/// The shape of one grouped GEMM.
struct GroupedGemmShape {
  GemmKind kind = GemmKind::GroupedContiguous;
  int64_t groups = 1; ///< G
  /// Contiguous: rows of A and D (every group's). Masked: rows of each
  /// group's slab (max_m). Along K: rows of A and of each group's D.
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0; ///< along K: every group's K (the columns of A and B)
  /// Masked: the rows a group is expected to hold, which the tile is chosen
  /// for (decode: a few tokens per expert); 0: max_m.
  int64_t expectedM = 0;
};

/// GemmTensors of the stacks (strides in elements, 0 = packed) and the
/// group tensor.
struct GroupedGemmTensors : GemmTensors {
  const int32_t *groups = nullptr; ///< offsets [G + 1] or valid rows [G]
  /// Elements between consecutive groups' scales (0: packed, one group's
  /// tensor right after the other's). A's only in the masked form.
  int64_t scaleAGroupStride = 0, scaleBGroupStride = 0;
};

/// `base` (a recipe's spec: formats, granularities, promotion, output) as
/// the grouped GEMM of `shape`: its form, groups, N, K and, as M, the rows
/// its tile is chosen for (a masked shape's expected rows, when set, else
/// GroupedGemmShape::m).
KernelSpec groupedSpec(KernelSpec base, const GroupedGemmShape &shape);

/// The rows a grouped GEMM's tile is chosen for and a tuning database
/// entry is keyed at: a masked spec's expected rows (its M, when set), else
/// `m` (GroupedGemmShape::m's rows).
int64_t groupedTileRows(const KernelSpec &spec, int64_t m);

/// The kernel spec the runtime would launch for this problem (its tile from
/// `tile` if given, else the heuristic for `smCount` SMs).
Expected<KernelSpec>
groupedGemmKernelSpec(const GemmRecipe &recipe, const GroupedGemmShape &shape,
                      int smCount, const std::optional<TileConfig> &tile);

/// Checks the arguments without touching the GPU (form, shape, recipe,
/// pointers, alignment, strides). groupedGemm() runs it first.
Status checkGroupedGemmArgs(const GemmRecipe &recipe,
                            const GroupedGemmShape &shape,
                            const GroupedGemmTensors &t);
/// The same, also giving the operands as stored (pitches and the groups'
/// scale strides resolved): what the CPU oracle reads (runtime/HostOracle.h).
Status checkGroupedGemmArgs(const GemmRecipe &recipe,
                            const GroupedGemmShape &shape,
                            const GroupedGemmTensors &t, Operands &operands);

/// The grouped GEMM of `shape` with the recipe's scaling, on `stream`.
Status groupedGemm(const GemmRecipe &recipe, const GroupedGemmShape &shape,
                   const GroupedGemmTensors &t, CUstream stream,
                   const GemmOptions &options = {},
                   GemmReport *report = nullptr);

/// The grouped GEMM a kernel spec describes (a plan step's: its kind,
/// groups, N, K, recipe and tile) with `m` rows as GroupedGemmShape::m
/// says; a masked spec's own M, when set, is the expected rows per group,
/// and a K-grouped spec's K is the launch's (every group's K).
Status groupedGemm(const KernelSpec &spec, int64_t m,
                   const GroupedGemmTensors &t, CUstream stream,
                   const GemmOptions &options = {},
                   GemmReport *report = nullptr);

/// Copies the group tensor to the host (synchronising `stream`) and checks
/// it against the form: contiguous offsets non-decreasing from 0 to at most
/// M, masked valid rows in [0, max_m], offsets along K non-decreasing
/// multiples of 128 from 0 to at most K. For tests and verifying runs; the
/// kernel itself clamps and never reads back.
Status checkGroupTensor(const GroupedGemmShape &shape, const int32_t *groups,
                        CUstream stream);

/// The same check on host data (groups.size() must be G + 1 or G).
Status checkGroupValues(const GroupedGemmShape &shape, const int32_t *groups,
                        int64_t count);

} // namespace fp8

#endif // FP8_RUNTIME_GROUPEDGEMM_H
