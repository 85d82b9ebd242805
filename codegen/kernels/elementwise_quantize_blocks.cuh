//===- elementwise_quantize_blocks.cuh - Quantize, R x C blocks *- CUDA -*-===//
//
// Quantize of R x 1 blocks (the column path), R x C tiles (the tile path)
// and any other granularity or delayed scaling (amax, scales and codes in
// three entry points; per-tensor blocks walk the tensor flat:
// elementwise_quantize_tensor.cuh).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"
#include "fp8/elementwise_quantize_tensor.cuh"
#include "fp8/fp8_delayed.h"

namespace fp8k {

//===----------------------------------------------------------------------===//
// Quantize, column blocks (R x 1): one pass
//===----------------------------------------------------------------------===//

/// Block row `u` of R x C blocks (the column and tile paths; the stacked
/// [batch * scaleRows] grid): its first row, that row's flat index of
/// column 0, and its rows (the last block row of a batch may be short).
/// Where the codes and scales of column `c` go: [batch, rows, cols] and
/// [batch, scaleRows, scaleCols], or, transposed (Q::kTransposed, the
/// column path), [batch, cols, rows] and [batch, scaleCols, scaleRows].
template <class Q> struct ColumnBlock {
  i64 row0, base, rows; ///< first row of the stacked [batch * rows]
  i64 batch, r0, unit;  ///< its matrix, first row and block row there
  __device__ __forceinline__ ColumnBlock(const EwParams &p, i64 u) {
    batch = row_of(u, p.scaleRows);
    unit = u - batch * p.scaleRows;
    r0 = unit * Q::kBlockRows;
    rows = p.rows - r0 < Q::kBlockRows ? p.rows - r0 : i64(Q::kBlockRows);
    row0 = batch * p.rows + r0;
    base = row0 * p.cols;
  }
  /// The code of the block's row r (0 .. rows) in column c.
  __device__ __forceinline__ i64 code(const EwParams &p, i64 r, i64 c) const {
    if constexpr (Q::kTransposed)
      return (batch * p.cols + c) * p.rows + r0 + r;
    return base + r * p.cols + c;
  }
  /// The index in p.scale of the block's scale in column c; mirrorRow and
  /// mirrorCol: its coordinates in the grid of scales written (the
  /// mirror's, store_scale_mirror).
  __device__ __forceinline__ i64 scale(const EwParams &p, i64 c) const {
    if constexpr (Q::kTransposed)
      return (batch * p.scaleCols + c) * p.scaleRows + unit;
    return (batch * p.scaleRows + unit) * p.scaleCols + c;
  }
  __device__ __forceinline__ i64 mirrorRow(const EwParams &p, i64 c) const {
    return Q::kTransposed ? c : batch * p.scaleRows + unit;
  }
  __device__ __forceinline__ i64 mirrorCol(i64 c) const {
    return Q::kTransposed ? unit : c;
  }
};

/// The column path's tasks: column group `group` (of `groups` across the
/// columns) of block row `u` (of the stacked [batch * scaleRows]). The
/// host's grid (elementwiseLaunch) is [groups, block rows], the block rows
/// strided by gridDim.y past 65535; for a program with a table (kFlat), one
/// wave of CTAs, each filling its table once, CTA k taking tasks k, k +
/// CTAs, ... of the flat order u * groups + group, so that every CTA's
/// share is within one task of the others' whatever the column groups (a
/// stride over block rows alone gave 4096x11008's 172 column groups a CTA
/// each on 132 SMs' 264 slots).
template <bool kFlat> struct ColTasks {
  const i64 group;
  i64 u;
  const i64 units;
  __device__ __forceinline__ ColTasks(const EwParams &p, i64)
      : group(blockIdx.x), u(blockIdx.y), units(p.batch * p.scaleRows) {}
  __device__ __forceinline__ bool more() const { return u < units; }
  __device__ __forceinline__ void next() { u += gridDim.y; }
};
template <> struct ColTasks<true> {
  i64 group, u, units, groups, dq, dr;
  __device__ __forceinline__ ColTasks(const EwParams &p, i64 groups_)
      : units(p.batch * p.scaleRows), groups(groups_) {
    // Task t's (group, u), stepped by the grid's CTAs without a division a
    // step.
    const i64 ctas = i64(gridDim.x) * gridDim.y;
    const i64 t = i64(blockIdx.y) * gridDim.x + blockIdx.x;
    u = t / groups;
    group = t - u * groups;
    dq = ctas / groups;
    dr = ctas - dq * groups;
  }
  __device__ __forceinline__ bool more() const { return u < units; }
  __device__ __forceinline__ void next() {
    u += dq;
    group += dr;
    if (group >= groups) {
      group -= groups;
      ++u;
    }
  }
};

/// One block (R rows of one column) per CTA column: the column's amax over
/// the block, its scale, then its codes (the 128x1 activations of the weight
/// gradients: one scale per 128 tokens of a channel). A CTA covers 32
/// consecutive columns, column group `group` (a lane each: every row's loads
/// and stores are contiguous across the warp) of block row `u`; its 8 warps
/// split the block's rows (warp w takes rows w, w + 8, ...), keep their values
/// in registers (blocks of up to 256 rows) and join their maxima in shared
/// memory.
template <class Prog, class Q>
__device__ __forceinline__ void
quantize_cols_cached_body(const EwParams &p, i64 group, i64 u0, i64 du) {
  constexpr int kPer = CachedValues<int(Q::kBlockRows), kColWarps>::kPer;
  __shared__ u32 partial[kColWarps][kColLanes];
  const int lane = int(threadIdx.x % kColLanes);
  const int w = int(threadIdx.x / kColLanes);
  const i64 c = group * kColLanes + lane;
  const bool active = c < p.cols;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = u0; u < units; u += du) {
    const ColumnBlock<Q> blk(p, u);
    const i64 base = blk.base + c;
    float v[kPer > 0 ? kPer : 1];
    u32 m = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const i64 r = w + kColWarps * j;
      v[j] = active && r < blk.rows ? Prog::eval(p, base + r * p.cols) : 0.0f;
      const u32 bits = abs_bits(v[j]);
      m = bits > m ? bits : m;
    }
    partial[w][lane] = m;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kColWarps; ++k)
      m = partial[k][lane] > m ? partial[k][lane] : m;
    __syncthreads(); // `partial` is reused by the next block row
    const float s = block_scale<Q>(p, m, active && w == 0, blk.scale(p, c),
                                   blk.mirrorRow(p, c), blk.mirrorCol(c));
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const i64 r = w + kColWarps * j;
      if (active && r < blk.rows)
        codes[blk.code(p, r, c)] = quantize_value(v[j], s, Q::kFormat);
    }
  }
}

/// The column path for blocks taller than 256 rows: one thread per (block
/// row, column), the program evaluated twice per element (the second
/// reads come back from the caches). A CTA covers kColsPerCta consecutive
/// columns of one block row.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_long_body(const EwParams &p) {
  const i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.cols) // also p.cols == 0
    return;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    const i64 first = blk.base + c, end = first + blk.rows * p.cols;
    u32 m = 0;
#pragma unroll 8
    for (i64 i = first; i < end; i += p.cols) {
      const u32 bits = abs_bits(Prog::eval(p, i));
      m = bits > m ? bits : m;
    }
    const float s = block_scale<Q>(p, m, true, blk.scale(p, c),
                                   blk.mirrorRow(p, c), blk.mirrorCol(c));
    i64 r = 0;
#pragma unroll 8
    for (i64 i = first; i < end; i += p.cols, ++r)
      codes[blk.code(p, r, c)] =
          quantize_value(Prog::eval(p, i), s, Q::kFormat);
  }
}

/// The vector column path's transposed tile: its kColVecChunks * 8 columns
/// of one block row's kColTileRows codes, column by column (a column's
/// codes are one row of the transposed output), four rows to a word, the
/// column's 16-byte groups XOR-ed by its chunk of eight columns so that
/// the byte stores of one row by a warp's eight chunks hit eight banks.
constexpr int kColTileRows = kColVecGroups * kColVecSteps;
constexpr int kColTileWords = kColVecChunks * 8 * kColTileRows / 4;
__device__ __forceinline__ int col_tile_word(int col, int r) {
  return col * (kColTileRows / 4) + ((r >> 2) ^ (((col >> 3) & 7) << 2));
}

/// Whether the vector column path gives thread g the block's rows 4 g .. 4 g
/// + 3 (kJ == 4, transposed: each of its columns' four codes one word of
/// the transposed tile) rather than rows g, g + kColVecGroups, ....
template <class Q, int kJ>
constexpr bool kColRowQuads = Q::kTransposed && kJ == 4;

/// Row j of thread group g in the vector column path (kColRowQuads).
template <class Q, int kJ>
__device__ __forceinline__ int col_vec_row(int g, int j) {
  return kColRowQuads<Q, kJ> ? 4 * g + j : g + kColVecGroups * j;
}

/// The transposed store of the vector column path: thread (g, q)'s codes
/// `w` (rows col_vec_row(g, j), the eight columns of chunk q) into the
/// tile (with row quads, a column's four codes as one word: eight word
/// stores; else byte by byte), then each column's codes of the block's
/// rows out as one row of [batch, cols, rows]: 16 bytes a thread where the
/// rows allow (rows % 16 == 0, an aligned tensor, whole 16-row groups),
/// else byte by byte.
template <int kJ, class Q>
__device__ __forceinline__ void
cols_store_transposed(const EwParams &p, const ColumnBlock<Q> &blk, i64 group,
                      const u32 (*w)[2], u32 *tile, int g, int q) {
  constexpr int kCols = kColVecChunks * 8;
  if constexpr (kColRowQuads<Q, kJ>) {
#pragma unroll
    for (int h = 0; h < 2; ++h) { // columns 4 h .. 4 h + 3 of the chunk
      const u32 rows[4] = {w[0][h], w[1][h], w[2][h], w[3][h]};
      u32 cols[4];
      transpose_4x4_bytes(rows, cols);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        tile[col_tile_word(q * 8 + 4 * h + k, 4 * g)] = cols[k];
    }
  } else {
    u8 *bytes = reinterpret_cast<u8 *>(tile);
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      const int r = col_vec_row<Q, kJ>(g, j);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        bytes[col_tile_word(q * 8 + k, r) * 4 + (r & 3)] =
            u8(w[j][k / 4] >> (8 * (k % 4)));
    }
  }
  __syncthreads();
  u8 *codes = static_cast<u8 *>(p.out);
  const bool vec =
      Q::kBlockRows % 16 == 0 && p.rows % 16 == 0 && is_aligned(codes, 16);
  constexpr int kChunks = kColTileRows / 16; // 16-byte groups of a column
  for (int id = int(threadIdx.x); id < kCols * kChunks; id += 256) {
    const int col = id / kChunks, m = id % kChunks;
    const i64 c = group * kCols + col;
    if (c >= p.cols || 16 * m >= blk.rows)
      continue;
    const uint4 v =
        *reinterpret_cast<const uint4 *>(&tile[col_tile_word(col, 16 * m)]);
    const i64 o = blk.code(p, 16 * m, c);
    if (vec && 16 * m + 16 <= blk.rows) {
      *reinterpret_cast<uint4 *>(codes + o) = v;
      continue;
    }
    const u32 words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 16; ++k)
      if (16 * m + k < blk.rows)
        codes[o + k] = u8(words[k / 4] >> (8 * (k % 4)));
  }
}

/// The vector column path: a CTA's task is kColVecChunks chunks of eight
/// columns (column group `group`) of block row `u`; thread (g, q) of its
/// kColVecGroups x kColVecChunks takes chunk q of the block's rows
/// col_vec_row(g, j) (each row's loads contiguous across the CTA's chunks),
/// issuing every load (Prog::load_raw) before the program runs over any. Each
/// thread's eight column maxima go to shared memory; four lanes a column join
/// the groups' maxima and make the column's scale and reciprocal; the codes
/// come from the values kept in registers (the program evaluated once: R x
/// 1 blocks quantize SwiGLU's product for the weight gradients), so the
/// block is read once. Needs cols % 8 == 0 and aligned tensors.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_vec_body(const EwParams &p) {
  constexpr int kCols = kColVecChunks * 8;
  constexpr int kJ =
      int((Q::kBlockRows + kColVecGroups - 1) / kColVecGroups) > 0
          ? int((Q::kBlockRows + kColVecGroups - 1) / kColVecGroups)
          : 1;
  static_assert(kJ <= kColVecSteps, "col_vec_path's rows");
  static_assert(kColVecGroups % 4 == 0 && kCols * 4 == 256, "the join's lanes");
  // (rows padded by four words: the join's four lanes of a column read
  // rows k, k + 4, ... in distinct banks)
  constexpr int kPitch = kCols + 4;
  alignas(16) __shared__ u32 partial[kColVecGroups][kPitch];
  alignas(16) __shared__ float scales[kCols], recips[kCols];
  // The block's codes column by column, for the transposed store.
  alignas(16) __shared__ u32 tile[Q::kTransposed ? kColTileWords : 1];
  const int t = int(threadIdx.x);
  const int g = t / kColVecChunks, q = t % kColVecChunks;
  u8 *codes = static_cast<u8 *>(p.out);
  // (The tasks' order, ColTasks: column groups across a block row,
  // transposed too: an order that keeps the CTAs in flight on a few block
  // rows measured no better, docs/results/h200-2026-12-03-transposed-words/.)
  const i64 groups = (p.cols + kCols - 1) / kCols;
  for (ColTasks<Prog::kLookUp> task(p, groups); task.more(); task.next()) {
    const i64 group = task.group, u = task.u;
    const i64 c = group * kCols + q * 8;
    const bool colIn = c < p.cols; // (cols % 8 == 0: all eight or none)
    const ColumnBlock<Q> blk(p, u);
    bool in[kJ];
    typename Prog::template Raw<8> raw[kJ];
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      const int r = col_vec_row<Q, kJ>(g, j);
      in[j] = colIn && r < blk.rows;
      if (in[j])
        Prog::template load_raw<8>(p, blk.base + r * p.cols + c, blk.row0 + r,
                                   raw[j]);
    }
    // Conversion-only programs keep the loads and evaluate again; others
    // keep the values (the program once).
    constexpr bool kKeep = !Prog::kConvertOnly;
    float x[kKeep ? kJ : 1][8];
    u32 m[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      float *v = x[kKeep ? j : 0];
      Prog::template eval_raw<8>(raw[j], v);
      if (in[j])
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const u32 b = abs_bits(v[k]);
          m[k] = b > m[k] ? b : m[k];
        }
    }
    *reinterpret_cast<uint4 *>(&partial[g][q * 8]) =
        uint4{m[0], m[1], m[2], m[3]};
    *reinterpret_cast<uint4 *>(&partial[g][q * 8 + 4]) =
        uint4{m[4], m[5], m[6], m[7]};
    __syncthreads();
    { // four lanes a column: groups k, k + 4, ..., then a shuffle max
      const int col = t >> 2, k0 = t & 3;
      u32 a = 0;
#pragma unroll
      for (int k = k0; k < kColVecGroups; k += 4)
        a = partial[k][col] > a ? partial[k][col] : a;
#pragma unroll
      for (int o = 1; o < 4; o <<= 1) {
        const u32 other = __shfl_xor_sync(0xFFFFFFFFu, a, o);
        a = other > a ? other : a;
      }
      if (k0 == 0) {
        u8 code;
        const float s =
            scale_from_amax(u2f(a), Q::kFormat, Q::kScaleFmt, 0, &code);
        const i64 cc = group * kCols + col;
        if (cc < p.cols) {
          store_scale<Q>(p.scale, blk.scale(p, cc), s, code);
          store_scale_mirror<Q>(p, blk.mirrorRow(p, cc), blk.mirrorCol(cc), s,
                                code);
        }
        const ScaleDivisor d = scale_divisor(s);
        scales[col] = d.scale;
        recips[col] = d.recip;
      }
    }
    __syncthreads();
    // The codes, a pair of columns at a time (their divisors from shared
    // memory: eight live divisors cost 24 registers), four to a word; a
    // conversion-only program converts each pair again (the compiler drops
    // the other six).
    u32 codeWords[kJ][2];
#pragma unroll
    for (int k = 0; k < 8; k += 2) {
      const float2 s2 = *reinterpret_cast<const float2 *>(&scales[q * 8 + k]);
      const float2 r2 = *reinterpret_cast<const float2 *>(&recips[q * 8 + k]);
      const ScaleDivisor d0 = scale_divisor_from(s2.x, r2.x);
      const ScaleDivisor d1 = scale_divisor_from(s2.y, r2.y);
#pragma unroll
      for (int j = 0; j < kJ; ++j) {
        float y[8];
        if (!kKeep)
          Prog::template eval_raw<8>(raw[j], y);
        const float *v = kKeep ? x[kKeep ? j : 0] : y;
        const u32 pair = quantize_pair(v[k], d0, v[k + 1], d1, Q::kFormat);
        if (k % 4 == 0)
          codeWords[j][k / 4] = pair;
        else
          codeWords[j][k / 4] |= pair << 16;
      }
    }
    if constexpr (Q::kTransposed) {
      cols_store_transposed<kJ>(p, blk, group, codeWords, tile, g, q);
    } else {
#pragma unroll
      for (int j = 0; j < kJ; ++j)
        if (in[j])
          store_code_words<8>(codes, blk.code(p, col_vec_row<Q, kJ>(g, j), c),
                              8, true, codeWords[j]);
    }
    // (`partial` and `tile` are rewritten after the next task's loads; the
    // first barrier of that task orders them after this task's reads of
    // `scales` and `tile`)
  }
}

/// The lane-per-column body over the column path's tasks (ColTasks), a task
/// kLaneGroups groups of kColLanes columns wide. Without a table, the body
/// walks the block rows itself (u0, du: the loop ptxas fits in the plain
/// 128x1 quantize's 64 registers on sm_100a, where a loop of tasks around
/// it spilled).
template <class Prog, class Q, int kLaneGroups>
__device__ __forceinline__ void quantize_cols_cached_tasks(const EwParams &p) {
  if constexpr (Prog::kLookUp) {
    const i64 groups =
        (p.cols + kLaneGroups * kColLanes - 1) / (kLaneGroups * kColLanes);
    for (ColTasks<true> task(p, groups); task.more(); task.next())
      for (int k = 0; k < kLaneGroups; ++k)
        quantize_cols_cached_body<Prog, Q>(p, task.group * kLaneGroups + k,
                                           task.u, task.units);
  } else {
    for (int k = 0; k < kLaneGroups; ++k)
      quantize_cols_cached_body<Prog, Q>(p, i64(blockIdx.x) * kLaneGroups + k,
                                         blockIdx.y, gridDim.y);
  }
}

/// The column path: R x 1 blocks, one kernel. (if constexpr: a kernel's
/// registers are its largest path's.)
template <class Prog, class Q>
__device__ __forceinline__ void quantize_cols_body(const EwParams &p) {
  if constexpr (col_vec_path(Q::kBlockRows, 8)) {
    // The host's grid is col_vec_path's (kColVecChunks * 8 columns a CTA)
    // whenever cols % 8 == 0; unaligned tensors take the lane-per-column
    // body over the same columns.
    const bool aligned = Prog::aligned(p, 16) && is_aligned(p.out, 8);
    if (p.cols % 8 == 0 && aligned) {
      quantize_cols_vec_body<Prog, Q>(p);
      return;
    }
    if (p.cols % 8 == 0) {
      quantize_cols_cached_tasks<Prog, Q, kColVecChunks * 8 / kColLanes>(p);
      return;
    }
  }
  if constexpr (CachedValues<int(Q::kBlockRows), kColWarps>::kPer > 0)
    quantize_cols_cached_tasks<Prog, Q, 1>(p);
  else
    quantize_cols_long_body<Prog, Q>(p);
}

//===----------------------------------------------------------------------===//
// Quantize, R x C blocks (tile_path: 128x128): a CTA per block
//===----------------------------------------------------------------------===//

/// The tile path's CTA: 256 threads, kLanes threads a block row (eight
/// columns each), kRowsPerStep rows a step, kSteps steps a block; kSteps
/// up to kMaxSteps keep the block's raw loads in registers (one read).
template <class Q> struct TileShape {
  // (8 when the width has no vector path: the tile path is then never run)
  static constexpr int kLanes = row_vec_lanes(Q::kBlockCols) > 0
                                    ? row_vec_lanes(Q::kBlockCols)
                                    : 8;
  static constexpr int kRowsPerStep = 256 / kLanes;
  static constexpr int kSteps =
      int((Q::kBlockRows + kRowsPerStep - 1) / kRowsPerStep);
  static constexpr int kMaxSteps = 8;
};

/// The amax of a CTA's threads' maxima `m`: warp maxima joined in
/// `warpMax` (the caller's shared array of 8), the result in every thread.
__device__ __forceinline__ u32 cta_max(u32 m, u32 *warpMax) {
  m = warp_max(m);
  if ((threadIdx.x & 31) == 0)
    warpMax[threadIdx.x >> 5] = m;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < 8; ++w)
    m = warpMax[w] > m ? warpMax[w] : m;
  __syncthreads(); // `warpMax` is reused by the next block
  return m;
}

/// The tile path with the block in registers: thread t takes the chunk of
/// eight columns (t % kLanes) of the block's rows t / kLanes + kRowsPerStep
/// j, j < kSteps; every load is issued (Prog::load_raw) before the program
/// runs over any, the values are evaluated once for the amax and again
/// (from the registers: the program is deterministic) for the codes, so
/// the block is read once. Needs cols % 8 == 0 and aligned tensors
/// (quantize_tile_body checks); a chunk past the block's rows or the
/// tensor's columns holds nothing.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_tile_cached_body(const EwParams &p) {
  using S = TileShape<Q>;
  constexpr int kJ = S::kSteps;
  __shared__ u32 warpMax[8];
  const int t = int(threadIdx.x);
  const int first = t / S::kLanes;
  const i64 cb = blockIdx.x;
  const i64 c = cb * Q::kBlockCols + (t % S::kLanes) * 8;
  const bool colIn = c < p.cols;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    bool in[kJ];
    typename Prog::template Raw<8> raw[kJ];
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      const int r = first + S::kRowsPerStep * j;
      in[j] = colIn && r < blk.rows;
      if (in[j])
        Prog::template load_raw<8>(p, blk.base + r * p.cols + c, blk.row0 + r,
                                   raw[j]);
    }
    u32 m = 0;
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      float x[8];
      Prog::template eval_raw<8>(raw[j], x);
      if (in[j])
        m = max_abs_bits<8>(x, m);
    }
    m = cta_max(m, warpMax);
    const float s = block_scale<Q>(p, m, t == 0, u * p.scaleCols + cb, u, cb);
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll
    for (int j = 0; j < kJ; ++j)
      if (in[j]) {
        float x[8];
        Prog::template eval_raw<8>(raw[j], x);
        u32 w[2];
        quantize_codes<8>(x, d, Q::kFormat, w);
        store_code_words<8>(
            codes, blk.base + (first + S::kRowsPerStep * j) * p.cols + c, 8,
            true, w);
      }
  }
}

/// The tile path for unaligned tensors, rows of a length not a multiple of
/// 8 and blocks taller than the registers hold: each element read twice, for
/// the block's amax, then for its codes (the second read from the L2: a
/// 128x128 bf16 block is 32 KiB).
template <class Prog, class Q>
__device__ __forceinline__ void quantize_tile_reread_body(const EwParams &p) {
  using S = TileShape<Q>;
  __shared__ u32 warpMax[8];
  const int t = int(threadIdx.x);
  const int part = t % S::kLanes, first = t / S::kLanes;
  const i64 cb = blockIdx.x;
  const i64 c = cb * (Q::kBlockCols > 0 ? Q::kBlockCols : 8) + part * 8;
  const int n = p.cols - c <= 0 ? 0 : (p.cols - c < 8 ? int(p.cols - c) : 8);
  const bool vec =
      p.cols % 8 == 0 && Prog::aligned(p, 16) && is_aligned(p.out, 8) && n == 8;
  const i64 units = p.batch * p.scaleRows;
  u8 *codes = static_cast<u8 *>(p.out);
  for (i64 u = blockIdx.y; u < units; u += gridDim.y) {
    const ColumnBlock<Q> blk(p, u);
    u32 m = 0;
#pragma unroll 4
    for (i64 r = first; r < blk.rows; r += S::kRowsPerStep) {
      float v[8];
      Prog::template eval_n<8>(p, blk.base + r * p.cols + c, n, vec, v);
      m = max_abs_bits<8>(v, m);
    }
    m = cta_max(m, warpMax);
    const float s = block_scale<Q>(p, m, t == 0, u * p.scaleCols + cb, u, cb);
    const ScaleDivisor d = scale_divisor(s);
#pragma unroll 4
    for (i64 r = first; r < blk.rows; r += S::kRowsPerStep) {
      const i64 i = blk.base + r * p.cols + c;
      float v[8];
      Prog::template eval_n<8>(p, i, n, vec, v);
      u32 w[2];
      quantize_codes<8>(v, d, Q::kFormat, w);
      store_code_words<8>(codes, i, n, vec, w);
    }
  }
}

/// A CTA of 256 threads per block (blockIdx.x its column block, blockIdx.y
/// walking the block rows of every batch); one kernel, no atomics, no amax
/// scratch.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_tile_body(const EwParams &p) {
  using S = TileShape<Q>;
  if constexpr (S::kSteps <= S::kMaxSteps) {
    if (p.cols % 8 == 0 && Prog::aligned(p, 16) && is_aligned(p.out, 8))
      quantize_tile_cached_body<Prog, Q>(p);
    else
      quantize_tile_reread_body<Prog, Q>(p);
  } else {
    quantize_tile_reread_body<Prog, Q>(p);
  }
}

//===----------------------------------------------------------------------===//
// Quantize, any granularity: amax per block, scales, codes
//===----------------------------------------------------------------------===//

/// Pass 1: the amax of every block, as atomicMax of the |x| bits. Threads
/// of a warp share a block when column blocks are whole or multiples of 32
/// (a warp reduces first); the whole CTA shares it when they are whole or
/// multiples of the CTA's width (one atomic per CTA and block row). Block
/// boundaries depend on the row only, so every thread of the CTA flushes at
/// the same rows and the reductions are uniform.
template <class Prog, class Q>
__device__ __forceinline__ void quantize_amax_body(const EwParams &p) {
  constexpr bool kWarpUniform = Q::kBlockCols == 0 || Q::kBlockCols % 32 == 0;
  constexpr bool kCtaUniform =
      Q::kBlockCols == 0 || Q::kBlockCols % kColsPerCta == 0;
  __shared__ u32 ctaMax;
  if (Q::kBlockRows == 0 && Q::kBlockCols == 0) {
    quantize_amax_tensor_body<Prog, Q>(p);
    return;
  }
  if (p.cols == 0)
    return;
  const i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = c < p.cols;
  const i64 total = p.batch * p.rows;
  for (i64 chunk = blockIdx.y; chunk * kRowChunk < total; chunk += gridDim.y) {
    const i64 r0 = chunk * kRowChunk;
    const i64 r1 = r0 + kRowChunk < total ? r0 + kRowChunk : total;
    BlockWalk<Q> w(p, r0, c);
    for (i64 r = r0; r < r1;) {
      const i64 blk = w.block();
      u32 m = 0;
      do { // the rows of this block in the chunk
        if (active) {
          const u32 bits = abs_bits(Prog::eval(p, r * p.cols + c));
          m = bits > m ? bits : m;
        }
        w.next();
        ++r;
      } while (r < r1 && !w.startsBlock());
      if (kWarpUniform)
        m = warp_max(m);
      if (kCtaUniform) {
        if (threadIdx.x == 0)
          ctaMax = 0;
        __syncthreads();
        if ((threadIdx.x & 31) == 0 && m)
          atomicMax(&ctaMax, m);
        __syncthreads();
        if (threadIdx.x == 0 && ctaMax)
          atomicMax(&p.amax[blk], ctaMax);
        __syncthreads();
      } else if (kWarpUniform) {
        if ((threadIdx.x & 31) == 0 && m)
          atomicMax(&p.amax[blk], m);
      } else if (active && m) {
        atomicMax(&p.amax[blk], m);
      }
    }
  }
}

/// Pass 2: one thread per block turns its amax into a scale (through the
/// amax history for delayed scaling) and resets the amax for the next call.
template <class Q>
__device__ __forceinline__ void quantize_scales_body(const EwParams &p) {
  const i64 n = p.batch * p.scaleRows * p.scaleCols;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const u32 bits = p.amax[i];
    u8 code;
    float s;
    if (Q::kDelayed) {
      // Delayed scaling is per tensor (fp8::checkScalingMode): n == 1.
      AmaxHistoryState *st = static_cast<AmaxHistoryState *>(p.history);
      float *values = reinterpret_cast<float *>(st + 1);
      s = delayed_scale_step(st, values, Q::kHistory, Q::kInterval, Q::kMargin,
                             Q::kAlgo, bits, Q::kFormat, Q::kScaleFmt, &code);
    } else {
      s = scale_from_amax(u2f(bits), Q::kFormat, Q::kScaleFmt, 0, &code);
    }
    store_scale<Q>(p.scale, i, s, code);
    if (p.scaleMirror) {
      const i64 r = i / p.scaleCols;
      store_scale_mirror<Q>(p, r, i - r * p.scaleCols, s, code);
    }
    p.amax[i] = 0;
  }
}

/// Pass 3: the codes, with the scale of each element's block (delayed
/// scaling: only when pass 1's were not made with the step's scale).
template <class Prog, class Q>
__device__ __forceinline__ void quantize_apply_body(const EwParams &p) {
  if (Q::kDelayed && !static_cast<const AmaxHistoryState *>(p.history)->refit)
    return;
  if (Q::kBlockRows == 0 && Q::kBlockCols == 0) {
    for (i64 b = 0; b < p.batch; ++b)
      tensor_codes<Prog, Q>(p, b, load_scale<Q>(p.scale, b));
    return;
  }
  const i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.cols) // also p.cols == 0
    return;
  u8 *codes = static_cast<u8 *>(p.out);
  const i64 total = p.batch * p.rows;
  for (i64 chunk = blockIdx.y; chunk * kRowChunk < total; chunk += gridDim.y) {
    const i64 r0 = chunk * kRowChunk;
    const i64 r1 = r0 + kRowChunk < total ? r0 + kRowChunk : total;
    BlockWalk<Q> w(p, r0, c);
    float s = load_scale<Q>(p.scale, w.block());
    for (i64 r = r0; r < r1; ++r) {
      if (r != r0 && w.startsBlock())
        s = load_scale<Q>(p.scale, w.block());
      const i64 i = r * p.cols + c;
      codes[i] = quantize_value(Prog::eval(p, i), s, Q::kFormat);
      w.next();
    }
  }
}

} // namespace fp8k
