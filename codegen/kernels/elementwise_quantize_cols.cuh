//===- elementwise_quantize_cols.cuh - Quantize, R x 1 blocks --*- CUDA -*-===//
//
// The column path of quantize: R x 1 blocks (the weight gradients' 128x1
// activations), one pass, a block's amax, scale and codes in one kernel,
// the codes in place or transposed. Its tasks (ColTasks), the vector body
// (eight columns a thread, values kept in registers), the lane-per-column
// body, and the body of blocks taller than 256 rows (read twice).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"

namespace fp8k {

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

/// The vector column path's codes: thread (g, q)'s kJ rows of chunk q, a
/// pair of columns at a time (their divisors from shared memory: eight live
/// divisors cost 24 registers), four to a word. kFast: every column's
/// divisor takes quantize_pair's fast form (ScaleDivisor::fast), so the
/// slow form is not compiled in. A conversion-only program (!kKeep)
/// converts each pair again from its loads (the compiler drops the other
/// six).
template <class Prog, class Q, int kJ, bool kKeep, bool kFast>
__device__ __forceinline__ void
cols_vec_codes(const float (*x)[8], const typename Prog::template Raw<8> *raw,
               const float *scales, const float *recips, int q,
               u32 (*codeWords)[2]) {
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    const float2 s2 = *reinterpret_cast<const float2 *>(&scales[q * 8 + k]);
    const float2 r2 = *reinterpret_cast<const float2 *>(&recips[q * 8 + k]);
    const ScaleDivisor d0 = {s2.x, r2.x, kFast};
    const ScaleDivisor d1 = {s2.y, r2.y, kFast};
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      float y[8];
      if (!kKeep)
        Prog::template eval_raw<8>(raw[j], y);
      const float *v = kKeep ? x[j] : y;
      const u32 pair = quantize_pair(v[k], d0, v[k + 1], d1, Q::kFormat);
      if (k % 4 == 0)
        codeWords[j][k / 4] = pair;
      else
        codeWords[j][k / 4] |= pair << 16;
    }
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
    bool colFast = true; // the join's column divisor (lane k0 == 0)
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
        colFast = d.fast;
      }
    }
    // Whether every column's divisor takes quantize_pair's fast form: one
    // test a task, the codes' loop compiled for each answer (quantize_pair
    // tested each pair: 16 branches a task).
    const bool allFast = __syncthreads_and(colFast);
    u32 codeWords[kJ][2];
    if (allFast)
      cols_vec_codes<Prog, Q, kJ, kKeep, true>(x, raw, scales, recips, q,
                                               codeWords);
    else
      cols_vec_codes<Prog, Q, kJ, kKeep, false>(x, raw, scales, recips, q,
                                                codeWords);
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
  if constexpr (keeps_block_values(Q::kBlockRows))
    quantize_cols_cached_tasks<Prog, Q, 1>(p);
  else
    quantize_cols_long_body<Prog, Q>(p);
}

} // namespace fp8k
