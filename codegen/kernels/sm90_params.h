//===- sm90_params.h - The launch argument of the sm_90a GEMM -------------===//
//
// The by-value kernel parameter of the sm_90a GEMM (codegen/kernels/
// sm90_gemm.cuh) after its five TMA descriptors, the bits that say which K
// scales come by TMA, the groups of a grouped GEMM, and the count of the
// persistent schedule's work units that sizes the grid. NVRTC compiles it as
// "fp8/sm90_params.h"; the runtime fills it from this very header
// (runtime/Gemm.cpp includes it as "codegen/kernels/sm90_params.h"), so host
// and device agree on the layout by construction.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_KERNELS_SM90_PARAMS_H
#define FP8_CODEGEN_KERNELS_SM90_PARAMS_H

#if defined(__CUDACC__)
#define FP8K_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FP8K_HOST_DEVICE inline
#endif

namespace fp8k {

/// Launch arguments that are not baked into the kernel.
struct GemmParams {
  int m;          ///< rows of A and D
  int scale_tma;  ///< the host's Cfg::kScaleTma (checked with FP8_KERNEL_DEBUG)
  const void *sa; ///< scales of A ([ceil(M/r), ceil(K/c)] as stored)
  long long sa_ld_outer, sa_ld_k;
  const void *sb; ///< scales of B ([ceil(N/r), ceil(K/c)] as stored)
  long long sb_ld_outer, sb_ld_k;
  const void *c; ///< C (accumulate), same type as D; may alias D
  long long ldc;
  void *d; ///< D, for the predicated-store epilogue
  long long ldd;
  float *workspace; ///< split-K partials
  int *counters;    ///< split-K arrival counters, one per tile, zeroed
  unsigned *trace;  ///< KTrace output (FP8_KERNEL_TRACE builds), or null
  int tail_first;   ///< kTailSplit: the first split tile (cluster group)
  int tail_split;   ///< kTailSplit: K slices of each tile from tail_first on
  /// Grouped GEMMs (Cfg::kGrouped). Contiguous: group g is rows
  /// groups[g] .. groups[g + 1] of A and D (m rows in all; offsets outside
  /// [0, m] are clamped, a decreasing pair is an empty group). Masked:
  /// group g is rows g * group_rows .. + groups[g] (clamped to
  /// [0, group_rows]). B is num_groups stacked [N, K] matrices; the scales
  /// of group g start sa_ld_group (masked A) and sb_ld_group (B) elements
  /// after those of group g - 1. Along K: group g is the k-blocks
  /// groups[g] / 128 .. groups[g + 1] / 128 of A and B (k columns in all,
  /// clamped), its result rows g * m .. + m of D.
  const int *groups;
  int num_groups;
  int group_rows;
  long long sa_ld_group, sb_ld_group;
  int k; ///< K-grouped: the columns of A and B
  /// The quantizing epilogue (Cfg::kEpilogue): D holds FP8 codes, q_cols
  /// columns of them (row pitch ldd bytes); their scales are q_scales, row
  /// pitch q_ld_scales, and q_mirror, when not null, takes a copy with scale
  /// (r, c) at r * q_mirror_rows + c * q_mirror_cols (codegen/kernels/
  /// gemm_quantize.cuh, QuantOut).
  void *q_scales;
  long long q_ld_scales;
  void *q_mirror;
  int q_mirror_rows, q_mirror_cols;
  int q_cols;
  /// Rows of A's TMA box (and of its K scales' box) for the last M tile
  /// (gemmABoxRows); 0: the whole tile's rows. Where M lies in one tile
  /// every tile's box; otherwise the tail-box kernel's (Cfg::kATail) tail
  /// descriptors.
  int a_box_rows;
  /// Cfg::kAmaxOut: D's amax (sm90_epilogue.cuh, join_tile_amax), joined
  /// into this f32 by every warp of the grid; +0 before the launch.
  float *amax;
};
static_assert(sizeof(GemmParams) == 208, "GemmParams layout changed");

/// Cfg::kGrouped: a dense GEMM, or how the groups of a grouped one lie.
constexpr int kDenseGemm = 0;
constexpr int kGroupedContiguous = 1;
constexpr int kGroupedMasked = 2;
constexpr int kGroupedK = 3;

constexpr int kScaleTmaA = 1; ///< A's K scales come with each stage (TMA)
constexpr int kScaleTmaB = 2; ///< B's block scales come with each stage

/// Cluster tile groups along one dimension: `size` rows (columns) in tiles
/// of `block`, `cluster` tiles per group (a trailing odd tile is a group).
template <class I>
FP8K_HOST_DEVICE constexpr I gemmTileGroups(I size, int block, int cluster) {
  return ((size + block - 1) / block + cluster - 1) / cluster;
}

/// Work units of the persistent schedule over `groups` cluster tile groups:
/// `splitK` K slices per group, and with a split tail the groups from
/// `tailFirst` on are `tailSplit` slices each (split-K and a split tail
/// exclude each other; tailFirst == groups, tailSplit 1 without a tail).
template <class I>
FP8K_HOST_DEVICE constexpr I gemmUnits(I groups, int splitK, I tailFirst,
                                       int tailSplit) {
  return (tailFirst + (groups - tailFirst) * tailSplit) * splitK;
}

/// The rows of A a stage loads for the last M tile of `tileRows` rows: the
/// rows of M that tile holds, rounded up to a whole 8-row swizzle atom, so
/// the box carries no rows past M for the TMA unit to fill with zeros. 0
/// (the whole tile) where M fills the last tile or the rounding reaches the
/// tile's rows. Rows of the stage past the box keep what an earlier stage
/// left there; they only feed accumulator rows past M, which no epilogue
/// stores.
template <class I>
FP8K_HOST_DEVICE constexpr int gemmABoxRows(I m, int tileRows) {
  if (m <= 0 || tileRows <= 0)
    return 0;
  const int rows = int(((m - 1) % tileRows + 1 + 7) / 8 * 8);
  return rows < tileRows ? rows : 0;
}

} // namespace fp8k

#endif // FP8_CODEGEN_KERNELS_SM90_PARAMS_H
