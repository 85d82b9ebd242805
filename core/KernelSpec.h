//===- KernelSpec.h - Everything that determines one GEMM kernel ----------===//
//
// A KernelSpec is the plain-C++ description of one scaled FP8 GEMM kernel:
// the problem (shape, layouts, formats, per-operand granularity, promotion
// interval, output) and the tile configuration. codegen/ turns it into CUDA
// C++ and launch metadata; the dialect's `fp8.kernel` attributes map onto its
// fields one-to-one; plans and the tuning database store it as JSON.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_KERNELSPEC_H
#define FP8_CODEGEN_KERNELSPEC_H

#include "core/EwProgram.h"
#include "core/Recipe.h"
#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8 {

/// A dimension only known at run time (the token count M, usually).
inline constexpr int64_t kDynamic = -1;

/// Dense GEMM, or one of the two MoE grouped forms (xtuner-fp8.zh.txt).
enum class GemmKind : uint8_t {
  Dense,
  /// Groups stacked along M in one A/D tensor, each a [rows_g, K] slab;
  /// B is [groups, N, K]; group boundaries come from an offsets tensor.
  GroupedContiguous,
  /// A is [groups, maxM, K]; only the first valid_rows[g] rows of a group
  /// are computed (the DeepGEMM "masked" layout for decode).
  GroupedMasked,
  /// Groups stacked along K (the experts' weight gradients): A [M, K] and
  /// B [N, K] hold every group's K slab, boundaries from an offsets tensor
  /// (multiples of 128); D is [groups, M, N]. K is a launch value (the
  /// tokens of a step) and takes no part in the kernel's code or name.
  GroupedK,
};

/// One FP8 input operand: element format, physical layout, scale granularity
/// (relative to the operand as stored).
struct OperandSpec {
  DType format = DType::E4M3FN;
  Layout layout = Layout::KMajor;
  Granularity granularity;

  bool operator==(const OperandSpec &o) const {
    return format == o.format && layout == o.layout &&
           granularity == o.granularity;
  }
};

/// Order in which a persistent scheduler walks output tiles.
enum class Raster : uint8_t {
  AlongN, ///< consecutive tiles share an M block (A stays in L2)
  AlongM, ///< consecutive tiles share an N block (B stays in L2)
};

/// How a consumer warpgroup overlaps promotion (sm_90a) with its own MMAs.
/// Without overlap it waits for a k-block's wgmmas, promotes, then issues the
/// next k-block; the tensor core idles unless the other warpgroup has MMAs
/// queued. With overlap two tensor-core accumulators alternate: while one is
/// promoted, the wgmmas of the other are in flight (wgmma.wait_group 1).
/// Needs a promotion interval of exactly one k-block (128).
enum class PromotionOverlap : uint8_t {
  None,
  AlternateK, ///< "k": whole-width accumulators for even / odd k-blocks
              ///< (1.5 x BLOCK_N/2 floats per thread: narrow tiles)
  AlternateN, ///< "n": the two N halves of the tile, each k-block
              ///< (BLOCK_N floats per thread, A read twice from shared)
};

/// The tile configuration: what the autotuner searches over.
struct TileConfig {
  int blockM = 128;
  int blockN = 128;
  int blockK = 128;
  int stages = 4;         ///< shared-memory pipeline depth
  int mathWarpgroups = 2; ///< consumer warpgroups (each owns blockM/n rows)
  int clusterM = 1;       ///< CTAs of a cluster along M (share B via multicast)
  int clusterN = 1;       ///< CTAs of a cluster along N (share A via multicast)
  Raster raster = Raster::AlongN;
  int swizzleGroup = 8; ///< tiles per raster group (L2 locality)
  bool persistent = true;
  int splitK = 1; ///< K slices reduced through FP32 atomics/workspace
  /// sm_90a, persistent: the tiles of the last partial wave are split into
  /// up to this many K slices (chosen at launch from the tile count and the
  /// SMs) so that they occupy the whole wave; 1: off.
  int tailSplit = 1;
  int ctaGroup = 1; ///< sm_100a: tcgen05 cta_group::1 or ::2
  PromotionOverlap overlap = PromotionOverlap::None; ///< sm_90a

  bool operator==(const TileConfig &o) const;
  bool operator!=(const TileConfig &o) const { return !(*this == o); }
  /// The tile's part of a kernel's name (192x128x128s4w3c1x1rn8, ...).
  std::string name() const;
};

/// How a GEMM's recorded tile source (`fp8.tile_source`, a plan step's
/// `tile_source`) begins when the heuristic chose the tile at compile time.
inline constexpr char kHeuristicTileSource[] = "heuristic";

/// A GEMM whose result leaves the kernel quantized: the epilogue rounds
/// each value to the spec's `out` type (as a GEMM writing `out` would), runs
/// `program` on it and quantizes the program's result along the rows, so the
/// kernel writes FP8 codes and their scales and the high-precision result
/// never reaches memory (sm_90a; the fused SwiGLU and 1x128 quantize of a
/// feed-forward block's activations, say).
struct GemmEpilogue {
  /// Over the GEMM's values, of type `out`: one input (each column of the
  /// result), or with `pairBlock` two: the result's columns come in blocks
  /// of pairBlock that alternate between input 0 and input 1 (a gate and an
  /// up projection over interleaved weights), and the program's grid has
  /// N / 2 columns. No input broadcasts.
  EwProgram program = EwProgram::identity(DType::BF16);
  int64_t pairBlock = 0;
  /// The quantized result: an FP8 format and scale blocks along the rows
  /// (1 x C, or whole rows), current scaling.
  DType format = DType::E4M3FN;
  Granularity granularity = Granularity::block(1, 128);

  /// Columns of the quantized result of a GEMM of `n` columns.
  int64_t outCols(int64_t n) const { return pairBlock > 0 ? n / 2 : n; }
  bool operator==(const GemmEpilogue &o) const;
};

/// Everything that determines one generated kernel (and its launch).
struct KernelSpec {
  Arch arch = Arch::SM90a;
  GemmKind kind = GemmKind::Dense;
  int64_t m = kDynamic; ///< rows of D; kDynamic when known only at launch
  int64_t n = 0;
  int64_t k = 0;
  int64_t groups = 1;
  OperandSpec a;
  OperandSpec b;
  /// K elements between promotions of the tensor-core partial sums into the
  /// FP32 accumulator (DeepSeek-V3: 128); nullopt: tensor-core accumulation
  /// only (written 0 in JSON and in kernel names).
  std::optional<int64_t> promotionInterval = 128;
  DType out = DType::BF16;
  bool accumulate = false; ///< D = A*B^T + C
  /// The epilogue also writes D's amax: the largest magnitude of D's values
  /// as stored (after the rounding to `out`), one f32 per launch, which a
  /// per-tensor quantize of D reads instead of a pass over D of its own.
  /// Not with a quantizing epilogue.
  bool amaxOut = false;
  /// The result quantized in the epilogue (D is then FP8 codes of
  /// epilogue->outCols(n) columns, with scales); none: D is `out`.
  std::optional<GemmEpilogue> epilogue;
  TileConfig tile;

  /// The spec's identity, from one writer. kernelName: a stable, readable,
  /// unique kernel name (a C identifier) from every field that changes the
  /// generated code, which is every field but M (a launch argument: one
  /// kernel serves every M). problemKey: every field but the tile, M
  /// included (what a tile is chosen for).
  std::string kernelName() const;
  std::string problemKey() const;

  bool operator==(const KernelSpec &o) const;
};

/// Parts of the kernels' names (GEMMs' here, the elementwise kernels' in
/// codegen/Elementwise.cpp): a granularity as a C identifier ("1x128",
/// "wx1", "wxw", with "p2" or "e8" for power-of-two or UE8M0 scales), and
/// eight hex digits of the FNV-1a hash of a text.
std::string granularityTag(const Granularity &g);
std::string nameHash8(const std::string &text);

/// A promotion interval as JSON, kernel names and command lines spell it,
/// 0 for none, and back.
inline std::optional<int64_t> promotionFromInt(int64_t p) {
  return p == 0 ? std::nullopt : std::optional<int64_t>(p);
}
inline int64_t promotionToInt(std::optional<int64_t> p) {
  return p.value_or(0);
}

/// Checks that every integer field of a tile is in the range any generator
/// emits (block_m, block_n, block_k in [1, 256], stages in [2, 32],
/// math_warpgroups in [1, 4], cluster_m/cluster_n and cta_group in [1, 2],
/// swizzle_group in [1, 64], split_k in [1, 2^24], tail_split in [1, 8]).
/// The arch checks (checkGemmSpec) narrow these; call this before any
/// arithmetic on a tile that did not come from the heuristic (a block of 0
/// divides by zero in the shared-memory model). The JSON reader applies the
/// same ranges: "expected 'block_n' in tile to be an integer in [1, 256],
/// found 0".
Status checkTileConfig(const TileConfig &tile);

/// checkTileConfig, and the integer fields of the spec: m in [-1, 2^31)
/// (-1: dynamic), n, k and groups in [1, 2^31), promotion_interval in
/// (1, 2^31) when set; an epilogue's program (one input, or two with a pair
/// block, each of the `out` type, none broadcast), FP8 format, row-block
/// granularity (1 x C with C >= 1, or whole rows) and pair block (0, or
/// a multiple of 8 such that N is a whole number of block pairs). The one field
/// check of a KernelSpec: kernelSpecFromJSON (plans, the tuning database,
/// fp8.kernel attributes), checkGemmSpec and the plan's validation all run it.
Status checkKernelSpec(const KernelSpec &spec);

/// The checks both GEMM generators share: 0 < N, K < 2^31 and K a multiple
/// of 16 (TMA row pitches), one group for a dense GEMM. Call after checking
/// the arch.
Status checkGemmShape(const KernelSpec &s);
/// checkGemmShape of a dense GEMM (the sm_100a generator's only kind).
Status checkDenseGemmShape(const KernelSpec &s);

std::string_view toString(GemmKind k);
/// "dense", "grouped_contiguous", "grouped_masked" or "grouped_k"; nullopt
/// otherwise.
std::optional<GemmKind> parseGemmKind(std::string_view s);

std::string_view toString(PromotionOverlap o);
/// "none", "k" or "n"; nullopt for anything else.
std::optional<PromotionOverlap> parsePromotionOverlap(std::string_view s);

/// Serializes to / parses from the JSON used by plans and the tuning DB.
std::string toJSON(const KernelSpec &spec, int indent = -1);
Expected<KernelSpec> kernelSpecFromJSON(const std::string &text);
std::string toJSON(const TileConfig &tile, int indent = -1);
Expected<TileConfig> tileConfigFromJSON(const std::string &text);

/// The largest kernel spec file loadKernelSpec reads.
inline constexpr int64_t kMaxKernelSpecBytes = int64_t(1) << 20;
/// Reads a kernel spec file (a regular file of at most kMaxKernelSpecBytes,
/// see readInputFile) and parses it; errors name the file.
Expected<KernelSpec> loadKernelSpec(const std::string &path);

} // namespace fp8

#endif // FP8_CODEGEN_KERNELSPEC_H
