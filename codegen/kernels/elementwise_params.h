//===- elementwise_params.h - Elementwise kernel parameters -----*- C++ -*-===//
//
// The one kernel parameter of every quantize, transpose and elementwise
// kernel (codegen/kernels/elementwise.cuh), passed by value. The runtime
// fills it from this very header (runtime/plan/PlanExecutor.cpp includes it as
// "codegen/kernels/elementwise_params.h"), so host and device agree on the
// layout by construction; both sides static_assert its size.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_KERNELS_ELEMENTWISE_PARAMS_H
#define FP8_CODEGEN_KERNELS_ELEMENTWISE_PARAMS_H

#if defined(__CUDACC_RTC__)
#include "fp8/fp8_math.h"
#else
#include "codegen/kernels/fp8_math.h"
#endif

namespace fp8k {

/// Most input tensors an elementwise program reads.
enum : int { kMaxEwInputs = 4 };

/// The block path of quantize: a CTA covers kColsPerCta columns (one thread
/// each) of kRowChunk rows (its blockIdx.y chunk).
enum : int { kRowChunk = 64, kColsPerCta = 256 };
/// The column path of quantize (R x 1 blocks up to 256 rows): a CTA of
/// kColWarps warps covers kColLanes columns of one block row.
enum : int { kColLanes = 32, kColWarps = 8 };
/// Its vector form: a CTA covers kColVecChunks chunks of eight columns of
/// one block row, its threads in kColVecGroups groups of rows, each thread
/// keeping up to kColVecSteps chunks (rows) in registers.
/// (On the H100, 16 chunks of 16 groups of eight rows left the SwiGLU
/// 128x1 quantize one CTA an SM, slower than a lane per column.)
enum : int { kColVecChunks = 8, kColVecGroups = 32, kColVecSteps = 4 };

// The rules below decide a kernel's path on both sides: the device code
// (elementwise.cuh) takes it, the host (codegen/Elementwise.cpp) sizes its
// grid for it.
#if defined(__CUDACC__)
#define FP8K_RULE __host__ __device__ constexpr
#else
#define FP8K_RULE constexpr
#endif

/// Lanes per block of the vector row path (eight columns a lane) for blocks
/// of `blockCols` columns: blocks of 8 to 256 columns dividing 256; 0 for
/// other widths and whole rows (0), which take a lane per column.
FP8K_RULE int row_vec_lanes(i64 blockCols) {
  return blockCols >= 8 && blockCols <= 256 && 256 % blockCols == 0
             ? int(blockCols / 8)
             : 0;
}

/// Sixteen-byte chunks (eight columns each) a lane of the vector row path
/// takes of its block, so that the block's amax shuffles, scale, reciprocal
/// and scale store, work of the whole warp per step, serve 16 or 32
/// elements a lane, and that many loads a lane and input are in flight at
/// once. Four for a plain conversion's blocks of 128 columns or more (64
/// registers, as many CTAs an SM as two chunks' 53; on the H200 the 1x128
/// quantize of 4096x4096 bf16 ran at 91% of a copy kernel's bandwidth
/// against 80% with two, docs/results/h200-2026-12-02-row-chunks/), else
/// two. (On the H100 two beat four for the SwiGLU quantize, which four
/// left 91 registers and two CTAs an SM; on the H200 four also slowed it,
/// and left MX blocks one lane each.)
FP8K_RULE int row_vec_chunks(i64 blockCols, bool convertOnly) {
  const int c = row_vec_lanes(blockCols);
  return convertOnly && c >= 16 ? 4 : c >= 2 ? 2 : c;
}

/// Lanes sharing one block on the vector row path (row_vec_lanes /
/// row_vec_chunks); 0: no vector path for this width.
FP8K_RULE int row_vec_block_lanes(i64 blockCols, bool convertOnly) {
  const int c = row_vec_chunks(blockCols, convertOnly);
  return c > 0 ? row_vec_lanes(blockCols) / c : 0;
}

/// Blocks of `blockCols` columns a warp takes a step on the row path, in
/// rows of `cols` columns: 32 / row_vec_block_lanes on the vector path
/// (what the host sizes grids by; the device also needs aligned tensors),
/// else one.
FP8K_RULE int row_blocks_per_warp(i64 blockCols, i64 cols, bool convertOnly) {
  const int lanes = row_vec_block_lanes(blockCols, convertOnly);
  return lanes > 0 && cols % 8 == 0 ? 32 / lanes : 1;
}

/// Sixteen-byte chunks a thread of the whole-row quantize (per-row scales)
/// keeps in registers.
enum : int { kWholeRowChunks = 8 };

/// Threads per row of the whole-row quantize with the row in registers: the
/// least power of two from 32 to 256 whose threads' kWholeRowChunks chunks
/// of eight columns cover the row (a CTA of 256 threads takes 256 / that
/// many rows a step); 0 for rows longer than 16384 columns, which take a
/// warp per row and two reads.
FP8K_RULE int whole_row_threads(i64 cols) {
  const i64 chunks = (cols + 7) / 8;
  return chunks <= 32 * kWholeRowChunks    ? 32
         : chunks <= 64 * kWholeRowChunks  ? 64
         : chunks <= 128 * kWholeRowChunks ? 128
         : chunks <= 256 * kWholeRowChunks ? 256
                                           : 0;
}

/// Whether a thread keeps its share of a block's values in registers
/// (CachedValues): blocks up to 256 long in the thread's direction (the
/// scalar row path's block columns, the column path's block rows); a longer
/// block is read and its program evaluated twice.
FP8K_RULE bool keeps_block_values(i64 blockLen) {
  return blockLen > 0 && blockLen <= 256;
}

/// True when R x 1 blocks of a tensor of `cols` columns take the vector
/// column path (when the tensors are aligned too; elementwise.cuh falls
/// back within the same grid otherwise): 16-byte rows of eight columns, and
/// blocks of up to kColVecGroups * kColVecSteps rows.
FP8K_RULE bool col_vec_path(i64 blockRows, i64 cols) {
  return cols % 8 == 0 && blockRows <= kColVecGroups * kColVecSteps;
}

/// True when R x C blocks take the tile path (a CTA per block, held in
/// registers up to 8 steps of its rows, else read twice, the second time
/// from the L2): more than one row, and a width with a vector row path
/// (row_vec_lanes: 8 to 256 columns dividing 256; 128x128 included).
FP8K_RULE bool tile_path(i64 blockRows, i64 blockCols) {
  return blockRows > 1 && row_vec_lanes(blockCols) > 0;
}

/// The reduce kernel: a CTA of kReduceThreads threads per row, thread t
/// taking the row's chunks of kReduceChunk consecutive columns t, t +
/// kReduceThreads, ... (codegen/Elementwise.h, reduceRow: the order).
enum : int { kReduceThreads = 256, kReduceChunk = 8 };

/// The quantize that sums its rows (quantize_rows_sum_body) keeps
/// kRowSumKept chunks of eight columns a thread in registers, so a row is
/// read once where its entry's CTA holds it all. Three entries, each with
/// its registers and CTA (row_sum_entry picks one): rows of up to 4096
/// columns a CTA of kRowSumThreads, a thread playing kReduceThreads /
/// kRowSumThreads reduce threads (the same sum tree; a row's fixed work
/// spread over four chunks a thread; 86 registers on sm_90a, five CTAs an
/// SM); rows of up to 8192 columns (kRowSumLongCols: the hidden size of
/// Llama-3-70B) a CTA of kReduceThreads keeping four chunks a thread
/// likewise (80 registers on sm_90a, three CTAs an SM); longer rows, rows that
/// are not whole chunks of eight columns, and tensors not 16-byte aligned, a
/// CTA of kReduceThreads keeping nothing, read again from the caches for each
/// use (four CTAs an SM: more loads in flight). On the H200: 4096x4096 at 256
/// threads 0.0297 ms, at 128 threads 0.0267-0.0269
/// (docs/results/h200-2026-12-01-delayed-codes/, run3); 8192x8192 kept 0.1020
/// ms against 0.1173 read again, 4096x16384 read again 0.1171 at four CTAs an
/// SM against 0.1575 at two (docs/results/h200-2026-12-03-long-rows/, run1).
enum : int { kRowSumKept = 4, kRowSumThreads = 128 };
static_assert(kReduceThreads % kRowSumThreads == 0 && kRowSumThreads % 32 == 0,
              "a row-sum thread plays whole reduce threads");
static_assert(kRowSumKept % (kReduceThreads / kRowSumThreads) == 0,
              "a thread keeps whole reduce threads' chunks");

/// The longest row each keeping entry holds in registers: every chunk of
/// every thread (4096 and 8192 columns).
enum : int {
  kRowSumShortCols = kRowSumKept * kRowSumThreads * kReduceChunk,
  kRowSumLongCols = kRowSumKept * kReduceThreads * kReduceChunk
};

/// The row-sum quantize's entry for rows of `cols` columns: 0 (short rows,
/// kRowSumThreads threads), 1 (long rows kept, kReduceThreads), 2 (rows
/// read again, kReduceThreads). A keeping entry takes rows of whole chunks
/// of `aligned` tensors only (its loads are 16-byte ones; the others' path
/// alone halves the kernel's NVRTC compile).
FP8K_RULE int row_sum_entry(i64 cols, bool aligned) {
  if (!aligned || cols % kReduceChunk != 0 || cols > kRowSumLongCols)
    return 2;
  return cols <= kRowSumShortCols ? 0 : 1;
}

/// Tables of a program's costly values (elementwise_table.cuh): a value
/// computed from one bf16 input alone through an exp, tanh or erf
/// (codegen/ElementwiseTable.cpp) is one of 2^16, so each CTA computes it
/// once for the inputs of kTableBinades binades, both signs, from
/// 2^(kTableLowExp - 127) (2^-20 to 2^12: 32 KiB of shared memory a table;
/// a power of two of entries a sign, so that a slot is two bit operations),
/// and looks it up; other inputs compute it. A CTA fills its tables only
/// where the tensor holds at least kTableElementsPerEntry elements a table
/// entry for each CTA of the grid (table_pays: fewer would not repay the
/// filling); the grid then holds at most kTableCtasPerSm CTAs an SM where
/// the path's grid is the host's choice.
enum : int { kTableLowExp = 107, kTableBinades = 32 };
enum : int { kTableEntries = 2 * kTableBinades * 128 };
enum : int { kTableElementsPerEntry = 2, kTableCtasPerSm = 4 };
/// The column path (R x 1 blocks) of a program whose values its CTAs keep
/// in registers (SwiGLU): kColKeptCtasPerSm CTAs an SM (its launch
/// bounds). With a table, its grid is one wave of them, each striding over
/// the tasks (elementwiseLaunch).
enum : int { kColKeptCtasPerSm = 2 };

/// Whether `ctas` CTAs fill their tables for a tensor of `elements`: each
/// CTA's share at least `perEntry` elements an entry. The fill's cost is a
/// CTA's, whatever its size (one evaluation an entry), and so is what the
/// lookups save, so the threshold is a CTA's elements, not a thread's: 64
/// a thread of a CTA of 256 (32 evaluations a thread; the fill paid from
/// about 45, docs/journal/2026-12-01-silu-table.md), 16 of a CTA of 1024.
FP8K_RULE bool table_pays(i64 elements, i64 ctas,
                          i64 perEntry = kTableElementsPerEntry) {
  return elements >= ctas * i64(kTableEntries) * perEntry;
}

/// Threads of a CTA of the row path (blocks of 1 x C columns) for a program
/// with a table, when its warps fill the grid: the SM's kTableCtasPerSm *
/// 256 threads as one CTA, which fills one table where four CTAs filled
/// four (every CTA fills its table before any load, so the fill is time
/// the whole kernel waits). On the H200 the SwiGLU + 1x128 quantize of
/// 4096x4096: four CTAs of 256 0.0376 ms, two of 512 0.0334, one of 1024
/// 0.0320 (docs/results/h200-2026-12-02-table-ctas/).
enum : int { kTableRowThreads = 1024 };

/// Pass 1 of a per-tensor quantize (the amax; delayed scaling also stores
/// its codes with the predicted scale) is one wave of CTAs of 256 striding
/// over the tensor: as many an SM as its registers let in at once
/// (delayed scaling's 47: five), or fewer where that measured faster
/// (current scaling's 32 registers would let in eight; with two chunks a
/// step in flight six were faster: quantize_amax_tensor_body). Each CTA
/// then pays its start (delayed scaling reads the history's prediction
/// before its first load), its reduction and its atomic once, and no
/// partial last wave idles the SMs. On the H200, delayed scaling's pass 1 on
/// 4096x4096: 4224 CTAs 24-27 us, 660 CTAs 16-17 us (ncu); the step
/// 0.0317-0.0319 -> 0.0257-0.0258 ms (docs/results/h200-2026-12-02-one-wave/,
/// run1, run2).
enum : int { kTensorPassCtasPerSm = 6, kTensorDelayedPassCtasPerSm = 5 };

/// Per-tensor current scaling of one matrix in one kernel
/// (quantize_resident_tensor_body): a cooperative launch of at most a CTA
/// of kTensorResidentThreads an SM, every CTA resident at once, each
/// holding up to kTensorResidentBytes of the input's loads in shared memory
/// (224 of the 227 KiB an sm_90 CTA may have) across a grid-wide wait for
/// the amax, so that the codes need no second read of what it holds: 29 MiB
/// on the H100's 132 SMs. The rest of a larger matrix is read again after
/// the wait, last read first, from the L2 where it still is.
enum : int { kTensorResidentThreads = 1024, kTensorResidentBytes = 224 << 10 };

/// Whether per-tensor current scaling takes the one-kernel path on `batch`
/// matrices of `elements` each: one matrix (the grid-wide wait makes one
/// scale), its 16-byte loads aligned, its elements a multiple of 8.
FP8K_RULE bool tensor_resident_path(i64 batch, i64 elements, bool aligned) {
  return batch == 1 && aligned && elements % 8 == 0;
}

/// Words of the block path's amax scratch (EwParams::amax) for `blocks`
/// scale blocks. Per-tensor current scaling (`pairs`): an 8-byte pair a
/// matrix, its amax bits, then the count of the codes pass's CTAs that
/// have taken them, one 64-bit atomic reading both (the last to take them
/// resets the pair: no kernel between the two passes). Otherwise each
/// block's amax bits, then the count of pass 1's CTAs that have finished,
/// by which the last of delayed scaling's pass 1 knows itself (it makes
/// the scale).
FP8K_RULE i64 amax_scratch_words(i64 blocks, bool pairs) {
  return pairs ? 2 * blocks : blocks + 1;
}

/// The square tile of the transpose of FP8 codes (128: a 16-byte chunk of
/// each row a thread, four rows a thread each way).
enum : int { kTransposeTile = 128 };

/// The most experts of an MoE routing step (its kernels keep counters per
/// expert in shared memory); core/RecipeRules.h's kMaxMoeExperts.
enum : int { kMaxMoeExperts = 1024 };

/// The routing of an MoE permute (elementwise_moe.cuh) takes its routing
/// slots in chunks of kRouteChunk, a CTA of kRouteThreads each, and keeps
/// [chunks, experts] int32 counters in a scratch between its two kernels.
enum : int { kRouteThreads = 256, kRouteChunk = 1024 };
/// The passes of a chunk, a slot a thread each.
enum : int { kRoutePasses = kRouteChunk / kRouteThreads };
static_assert(kRouteChunk % kRouteThreads == 0, "whole passes a chunk");

/// The chunks (CTAs) of a routing of `slots` slots: at least one.
FP8K_RULE i64 moe_route_chunks(i64 slots) {
  return slots > kRouteChunk ? (slots + kRouteChunk - 1) / kRouteChunk : 1;
}

/// Tensors are row-major [batch, rows, cols], contiguous; scales row-major
/// [batch, scaleRows, scaleCols].
///
/// Quantize may also write a copy of its scales, the "mirror", in the
/// layout a GEMM takes by TMA: scale (r, c) of the stacked
/// [batch * scaleRows, scaleCols] grid goes to
/// scaleMirror[r * mirrorStrideRows + c * mirrorStrideCols], in the scales'
/// format. The GPU executor points it at an f32 scratch when a GEMM reads the
/// scales (runtime/plan/PlanScaleMirror.h): A's 1x128 scales transposed,
/// [K/128][Mpad] (strides 1, Mpad), or B's block scales with their pitch
/// padded, [N/128][pad4(K/128)] (strides pad4(K/128), 1). Null: no mirror.
///
/// MoE steps (elementwise.cuh, "MoE routing") give some fields another
/// meaning, so that every kernel keeps this one 128-byte parameter:
///   permute    in[0] x [T, H], in[1] ids [T, topK] (int32), in[2] the
///              routing's counters (int32 scratch, written); out codes and
///              scale scales of the permuted rows; amax offsets [E + 1],
///              history positions [T, topK], scaleMirror source [R] (all
///              int32, written); batch T, rows R, cols H, scaleRows E,
///              scaleCols H's column blocks, mirrorStrideRows topK,
///              mirrorStrideCols the group padding (align)
///   unpermute  in[0] y [R, H], in[1] positions, in[2] weights [T, topK]
///              (f32); out [T, H]; rows T, cols H, scaleRows R,
///              mirrorStrideRows topK
/// and so does the interleave of rows (AuxKind::Interleave):
///   interleave in[0], in[1] [R, C]; out [2R, C]; rows R, cols C,
///              scaleCols the block of rows
struct EwParams {
  const void *in[kMaxEwInputs]; ///< the program's inputs (transpose: codes)
  void *out;                    ///< values, or FP8 codes
  void *scale;                  ///< scales written (f32, or UE8M0 bytes)
  const void *scaleIn;          ///< transpose: the scales read; quantize
                                ///< with a given amax: the f32 amax of
                                ///< each matrix, [batch]
  u32 *amax;     ///< quantize (block path): amax bits per block and the
                 ///< counts of amax_scratch_words; zero between calls (the
                 ///< scales' maker resets them)
  void *history; ///< delayed scaling: AmaxHistoryState + values
  i64 batch, rows, cols;
  i64 scaleRows, scaleCols; ///< scale grid of one [rows, cols] matrix
  void *scaleMirror;        ///< quantize: the scales' mirror, or null
  // NOTE: 32-bit strides (a mirror's pitch is Mpad or pad4(K/128); the
  // executor's rule keeps them below 2^31): with two 64-bit strides (a
  // 136-byte struct) ptxas spilled 4 bytes in the sm_90a row path
  // (ElementwiseCompileTest); these keep it at 128 bytes and spill-free.
  int mirrorStrideRows; ///< its stride between scale rows, in scales
  int mirrorStrideCols; ///< and between scale columns
};

/// The scale-block walk of one thread of the block path of quantize
/// (elementwise.cuh), here so that the host tests run it too: a fixed column,
/// rows r0 <= r < r1 of the stacked [batch * rows, cols] tensor. Block rows are
/// counted incrementally (no 64-bit division per element).
template <class Q> struct BlockWalk {
  i64 br, colBlock, b, lr, rowBlock, inBlock;
  const EwParams &p;

  FP8K_FN BlockWalk(const EwParams &p, i64 r0, i64 c) : p(p) {
    br = Q::kBlockRows ? i64(Q::kBlockRows) : p.rows;
    const i64 bcw = Q::kBlockCols ? i64(Q::kBlockCols) : p.cols;
    const i64 cc = c < p.cols ? c : p.cols - 1; // idle lanes: a valid block
    colBlock = cc / bcw;
    b = r0 / p.rows;
    lr = r0 - b * p.rows;
    rowBlock = lr / br;
    inBlock = lr - rowBlock * br;
  }
  /// The block of the current row.
  FP8K_FN i64 block() const {
    return (b * p.scaleRows + rowBlock) * p.scaleCols + colBlock;
  }
  /// True when the current row starts a block row.
  FP8K_FN bool startsBlock() const { return inBlock == 0; }
  FP8K_FN void next() {
    if (++inBlock == br || lr + 1 == p.rows) {
      inBlock = 0;
      ++rowBlock;
    }
    if (++lr == p.rows) {
      lr = 0;
      rowBlock = 0;
      ++b;
    }
  }
};

} // namespace fp8k

#endif // FP8_CODEGEN_KERNELS_ELEMENTWISE_PARAMS_H
