//===- GroupedGemm.h - The CPU oracle of grouped GEMMs and the MoE permute ===//
//
// What a mixture-of-experts layer computes around its grouped GEMMs, on the
// CPU, as the oracle every GPU kernel of runtime/GroupedGemm.h (and the
// plan steps built on it) is checked against:
//
//   moePermute        top-k routing ids -> the tokens' rows in expert
//                     order, each expert's rows optionally padded to a
//                     multiple (Ling 2.0's routing-map padding), and the
//                     group offsets;
//   groupedReferenceGemm
//                     D_g = A_g * B_g^T per group with referenceGemm's
//                     promotion structure, for the contiguous and the
//                     masked forms;
//   moeUnpermute      each token's output: the sum over its k experts of
//                     the routing weight times that expert's row.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_NUMERICS_GROUPEDGEMM_H
#define FP8_NUMERICS_GROUPEDGEMM_H

#include "core/KernelSpec.h"
#include "core/Status.h"
#include "numerics/Quantize.h"
#include "numerics/ReferenceGemm.h"

#include <cstdint>
#include <vector>

namespace fp8::numerics {

/// Rows [begin, end) of a k_major quantized tensor as a tensor of its own:
/// any rows when its scales cover one row or the whole tensor (the
/// granularities a contiguous group may start at any row with), else from
/// a multiple of the scale block's rows.
Expected<QuantizedTensor> sliceRows(const QuantizedTensor &q, int64_t begin,
                                    int64_t end);

/// Columns [begin, end) of a k_major quantized tensor as a tensor of its
/// own, from a multiple of the scale block's columns (any column when the
/// scales are constant along the rows).
Expected<QuantizedTensor> sliceCols(const QuantizedTensor &q, int64_t begin,
                                    int64_t end);

/// The groups of a grouped GEMM.
struct GroupedRows {
  GemmKind kind = GemmKind::GroupedContiguous;
  /// Contiguous: offsets [G + 1] into A's rows. Masked: valid rows [G].
  /// Along K: offsets [G + 1] into A's and B's columns.
  std::vector<int32_t> groups;
};

/// Checks a group tensor against its form: contiguous offsets
/// non-decreasing from 0 to at most `end` (M); masked valid rows in
/// [0, end] (max_m); offsets along K non-decreasing multiples of 128 from 0
/// to at most `end` (K). The count is the caller's to check.
Status checkGroupValues(const GroupedRows &rows, int64_t end);

/// D of a grouped GEMM, row-major: contiguous [M, N] (M = A's rows), masked
/// [G, max_m, N], along K [G, M, N]. A is the whole contiguous tensor ([M,
/// K], scales of one row or the whole tensor), masked one [max_m, K] tensor
/// per group, along K one [M, K] tensor; B one [N, K] tensor per group
/// (along K: one for all). Rows outside every group are `fill`; `c`, when
/// given, is added (D's shape, FP32). Fails on a group tensor that breaks
/// the form (checked like the runtime's checkGroupValues) or on operands
/// referenceGemm refuses.
Expected<std::vector<float>> groupedReferenceGemm(
    const GroupedRows &rows, const std::vector<QuantizedTensor> &a,
    const std::vector<QuantizedTensor> &b, float fill,
    const ReferenceGemmOptions &options = {}, const float *c = nullptr);

/// Where the routed tokens go: T tokens, each sent to `topK` experts.
struct MoePermutation {
  /// Group offsets [G + 1] of the permuted rows (padded groups).
  std::vector<int32_t> offsets;
  /// For each permuted row: the token it copies, or -1 for a padding row
  /// (zeros).
  std::vector<int32_t> source;
  /// For each (token, j) of the routing [T, topK]: its permuted row.
  std::vector<int32_t> destination;
};

/// The permutation of `ids` ([T, topK] expert ids in [0, G)): for each
/// expert in order, its tokens in token order, each group padded with zero
/// rows to a multiple of `padTo` (1: no padding). Fails on an id outside
/// [0, G) or a token routed to one expert twice.
Expected<MoePermutation> moePermute(const std::vector<int32_t> &ids,
                                    int64_t tokens, int64_t topK,
                                    int64_t experts, int64_t padTo = 1);

/// The permuted rows of x ([T, H] row-major): rows of `p.source`, zeros for
/// padding.
std::vector<float> gatherRows(const std::vector<float> &x, int64_t hidden,
                              const MoePermutation &p);

/// out[t] = sum_j weights[t][j] * y[destination[t][j]] in FP32, j in order
/// (y: [permuted rows, H]).
std::vector<float> moeUnpermute(const std::vector<float> &y, int64_t hidden,
                                const MoePermutation &p,
                                const std::vector<float> &weights,
                                int64_t tokens, int64_t topK);

} // namespace fp8::numerics

#endif // FP8_NUMERICS_GROUPEDGEMM_H
