//===- sm100_scale_layout.cuh - UE8M0 scale layout of the sm_100a GEMM ----===//
//
// Where the sm_100a kernels find the UE8M0 block scale of row r and 32-element
// K block kb of an operand (A: rows = M, B: rows = N; both K-major). Plain
// constexpr C++ shared by the host (codegen/Sm100ScaleLayout.h includes this
// file; the packer and its tests use it) and the device (sm100_gemm.cuh
// computes its TMA coordinates with it), so the two cannot drift apart.
//
// The scales are cut into *atoms* of 128 rows x 4 K blocks (128 rows x 128 K
// elements: one kernel k-block of one 128-row tile), 512 bytes each:
//
//   atom (rt, kt) = rows [128 rt, 128 rt + 128) x K blocks [4 kt, 4 kt + 4)
//   atom index    = kt * rowTiles + rt,   rowTiles = ceil(rows / 128)
//   inside:       32 lines of 16 bytes; row rr = r % 128, kk = kb % 4:
//                 byte (rr % 32) * 16 + (rr / 32) * 4 + kk
//
// So line l holds the 4-byte words of rows l, l + 32, l + 64, l + 96, each
// word the scales of 4 consecutive K blocks. Atoms of one k-tile are
// contiguous, so the atoms of consecutive 128-row tiles (B tiles wider than
// 128) are one TMA box.
//
// NOTE: PTX ISA, tcgen05 "Tensor Memory" data movement (tcgen05.cp shapes)
// and "Block Scaling" for tcgen05.mma (scale factor A/B layouts): an
// atom is exactly the 32x128b source of `tcgen05.cp.32x128b.warpx4`, which
// copies line l to tensor-memory lane l of each of the four 32-lane
// sub-partitions and word c to column c; the block-scaled MMA with M = 128
// reads the scale of row rr from lane rr % 32, column rr / 32, and the byte
// of its K block from the instruction descriptor's scale-factor ID (kk).
// Never run on a Blackwell GPU: docs/blackwell.md says what is verified.
//
// Bytes past the end of the data (rows >= rows, K blocks >= ceil(K / 32))
// hold 127 (scale 1.0) when written by the host packer.
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FP8_SF_HD __host__ __device__
#else
#define FP8_SF_HD
#endif

namespace fp8k {
namespace sf {

/// Rows of one atom (one M tile of the kernel; one TMEM lane each).
constexpr int kAtomRows = 128;
/// 32-element K blocks of one atom (one 128-element kernel k-block).
constexpr int kAtomKBlocks = 4;
/// K elements per scale (the MX block).
constexpr int kKBlock = 32;
/// Lines of an atom and bytes per line (the tcgen05.cp 32x128b source).
constexpr int kAtomLines = 32;
constexpr int kLineBytes = 16;
/// Bytes of one atom.
constexpr int kAtomBytes = kAtomLines * kLineBytes;

/// 128-row tiles of an operand of `rows` rows.
FP8_SF_HD constexpr long long row_tiles(long long rows) {
  return (rows + kAtomRows - 1) / kAtomRows;
}

/// 32-element K blocks of a K extent (the last one may be partial).
FP8_SF_HD constexpr long long k_blocks(long long k) {
  return (k + kKBlock - 1) / kKBlock;
}

/// Atoms along K (128-element k-tiles).
FP8_SF_HD constexpr long long k_tiles(long long k) {
  return (k_blocks(k) + kAtomKBlocks - 1) / kAtomKBlocks;
}

/// Index of atom (row tile rt, k-tile kt).
FP8_SF_HD constexpr long long atom_index(long long rows, long long rt,
                                         long long kt) {
  return kt * row_tiles(rows) + rt;
}

/// Byte of row rr (0..127) and K block kk (0..3) inside an atom.
FP8_SF_HD constexpr int byte_in_atom(int rr, int kk) {
  return (rr % kAtomLines) * kLineBytes + (rr / kAtomLines) * 4 + kk;
}

/// Byte offset of the scale of row r, 32-element K block kb.
FP8_SF_HD constexpr long long offset(long long rows, long long r,
                                     long long kb) {
  return atom_index(rows, r / kAtomRows, kb / kAtomKBlocks) * kAtomBytes +
         byte_in_atom(int(r % kAtomRows), int(kb % kAtomKBlocks));
}

/// Total bytes of the scales of a [rows, k] operand (whole atoms).
FP8_SF_HD constexpr long long total_bytes(long long rows, long long k) {
  return row_tiles(rows) * k_tiles(k) * kAtomBytes;
}

/// The scales viewed as the 2-D byte tensor the TMA descriptors describe:
/// total_bytes / 16 lines of 16 bytes; atom a is lines [32 a, 32 a + 32).
FP8_SF_HD constexpr long long tma_lines(long long rows, long long k) {
  return total_bytes(rows, k) / kLineBytes;
}

static_assert(kAtomBytes == 512, "an atom is 128 rows x 4 scale bytes");
static_assert(offset(300, 0, 0) == 0, "first byte");
static_assert(offset(300, 32, 0) == 4, "row 32 is word 1 of line 0");
static_assert(offset(300, 1, 3) == 19, "row 1, K block 3");
static_assert(offset(300, 128, 0) == 512, "next row tile, same k-tile");
static_assert(offset(300, 0, 4) == 3 * 512, "next k-tile after 3 row tiles");

} // namespace sf
} // namespace fp8k
