//===- elementwise_transpose.cuh - FP8 transpose ---------------*- CUDA -*-===//
//
// The on-demand transpose of FP8 codes and their scales.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fp8/elementwise_common.cuh"

namespace fp8k {

//===----------------------------------------------------------------------===//
// Transpose of FP8 codes and their scales (the on-demand transpose)
//===----------------------------------------------------------------------===//

/// The transpose's tile in shared memory: kTransposeTile rows of
/// kTransposeTile bytes and a pitch of four more (the byte and word paths),
/// or of kTransposeTile / 4 words swizzled (the 16-byte path).
constexpr int kTransposePitch = kTransposeTile + 4;

/// Word w of tile row r on the 16-byte path: each 16-row band's 16-byte
/// groups XOR-ed by its band, so that the 32 lanes reading one word column
/// of the eight bands (transpose_tile_16) hit 32 banks.
__device__ __forceinline__ int transpose_word(int r, int w) {
  return r * (kTransposeTile / 4) + (w ^ (((r >> 4) & 7) << 2));
}

/// One tile, rows and columns multiples of 16 and 16-byte aligned tensors:
/// thread t loads 16 bytes of rows t / 8 + 32 i (four loads in flight),
/// then takes the 4 x 16 block of output rows 4 (t / 8) .. + 3 and input
/// rows 16 (t % 8) .. + 15: 16 words from shared memory, transposed in
/// registers four by four (__byte_perm), out in four 16-byte stores (eight
/// lanes write one output row's 128 bytes).
__device__ __forceinline__ void transpose_tile_16(const EwParams &p,
                                                  const u8 *src, u8 *dst,
                                                  i64 r0, i64 c0, u32 *words) {
  constexpr int kT = kTransposeTile;
  static_assert(kT == 128, "256 threads: 16-byte chunks of 128-byte rows");
  const int t = int(threadIdx.x);
  {
    const int cw = (t & 7) * 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = (t >> 3) + 32 * i;
      if (r0 + r < p.rows && c0 + cw * 4 < p.cols)
        *reinterpret_cast<uint4 *>(&words[transpose_word(r, cw)]) =
            *reinterpret_cast<const uint4 *>(src + (r0 + r) * p.cols + c0 +
                                             cw * 4);
    }
  }
  __syncthreads();
  const int rr = (t & 7) * 16, cb = t >> 3;
  u32 col[4][4]; // [output row k][input rows 4 g .. 4 g + 3]
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const u32 w[4] = {words[transpose_word(rr + 4 * g, cb)],
                      words[transpose_word(rr + 4 * g + 1, cb)],
                      words[transpose_word(rr + 4 * g + 2, cb)],
                      words[transpose_word(rr + 4 * g + 3, cb)]};
    u32 out[4];
    transpose_4x4_bytes(w, out);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      col[k][g] = out[k];
  }
  if (r0 + rr < p.rows)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const i64 oc = c0 + cb * 4 + k;
      if (oc < p.cols)
        *reinterpret_cast<uint4 *>(dst + oc * p.rows + r0 + rr) =
            uint4{col[k][0], col[k][1], col[k][2], col[k][3]};
    }
}

/// One tile, rows and columns multiples of 4 and 4-byte aligned tensors: a
/// row's four columns in, an output row's four columns (four input rows)
/// out, 32 threads a row.
__device__ __forceinline__ void transpose_tile_4(const EwParams &p,
                                                 const u8 *src, u8 *dst, i64 r0,
                                                 i64 c0, u8 *tile) {
  constexpr int kT = kTransposeTile, kP = kTransposePitch;
  const int t = int(threadIdx.x);
  const int cc = (t % 32) * 4;
#pragma unroll 4
  for (int j = t / 32; j < kT; j += 8) {
    const i64 r = r0 + j, c = c0 + cc;
    if (r < p.rows && c < p.cols)
      *reinterpret_cast<u32 *>(&tile[j * kP + cc]) =
          *reinterpret_cast<const u32 *>(src + r * p.cols + c);
  }
  __syncthreads();
  const int rr = (t % 32) * 4;
#pragma unroll 4
  for (int o = t / 32; o < kT; o += 8) {
    const i64 oc = c0 + o, r = r0 + rr;
    if (oc < p.cols && r < p.rows)
      *reinterpret_cast<u32 *>(dst + oc * p.rows + r) =
          u32(tile[rr * kP + o]) | u32(tile[(rr + 1) * kP + o]) << 8 |
          u32(tile[(rr + 2) * kP + o]) << 16 |
          u32(tile[(rr + 3) * kP + o]) << 24;
  }
}

/// One tile, byte by byte.
__device__ __forceinline__ void transpose_tile_1(const EwParams &p,
                                                 const u8 *src, u8 *dst, i64 r0,
                                                 i64 c0, u8 *tile) {
  constexpr int kT = kTransposeTile, kP = kTransposePitch;
  const int t = int(threadIdx.x);
  const int cc = t % kT;
  for (int j = t / kT; j < kT; j += 256 / kT) {
    const i64 r = r0 + j, c = c0 + cc;
    if (r < p.rows && c < p.cols)
      tile[j * kP + cc] = src[r * p.cols + c];
  }
  __syncthreads();
  for (int o = t / kT; o < kT; o += 256 / kT) {
    const i64 oc = c0 + o, r = r0 + cc;
    if (oc < p.cols && r < p.rows)
      dst[oc * p.rows + r] = tile[cc * kP + o];
  }
}

/// [batch, rows, cols] codes -> [batch, cols, rows], through a kTransposeTile
/// square tile in shared memory; a CTA of 256 threads per tile, grid
/// (cols / tile, rows / tile, batch). Rows and columns multiples of 16 and
/// 16-byte aligned tensors move 16 bytes a thread access, multiples of 4
/// and 4-byte alignment four, else one.
__device__ __forceinline__ void transpose_codes_body(const EwParams &p) {
  constexpr int kT = kTransposeTile;
  alignas(16) __shared__ u32 words[kT * kTransposePitch / 4];
  u8 *tile = reinterpret_cast<u8 *>(words);
  const u8 *in = static_cast<const u8 *>(p.in[0]);
  u8 *out = static_cast<u8 *>(p.out);
  const i64 plane = p.rows * p.cols;
  const bool vec16 = p.rows % 16 == 0 && p.cols % 16 == 0 &&
                     is_aligned(in, 16) && is_aligned(out, 16);
  const bool vec = p.rows % 4 == 0 && p.cols % 4 == 0 && is_aligned(in, 4) &&
                   is_aligned(out, 4);
  for (i64 b = blockIdx.z; b < p.batch; b += gridDim.z) {
    for (i64 ty = blockIdx.y; ty * kT < p.rows; ty += gridDim.y) {
      for (i64 tx = blockIdx.x; tx * kT < p.cols; tx += gridDim.x) {
        const i64 r0 = ty * kT, c0 = tx * kT;
        const u8 *src = in + b * plane;
        u8 *dst = out + b * plane;
        if (vec16)
          transpose_tile_16(p, src, dst, r0, c0, words);
        else if (vec)
          transpose_tile_4(p, src, dst, r0, c0, tile);
        else
          transpose_tile_1(p, src, dst, r0, c0, tile);
        __syncthreads(); // the tile is reused by the next one
      }
    }
  }
}

/// [batch, scaleRows, scaleCols] scales -> [batch, scaleCols, scaleRows].
template <int kScaleBytes>
__device__ __forceinline__ void transpose_scales_body(const EwParams &p) {
  const i64 sr = p.scaleRows, sc = p.scaleCols;
  const i64 n = p.batch * sr * sc;
  const i64 stride = i64(gridDim.x) * blockDim.x;
  // (row_of: 32-bit divisions where the sizes allow)
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const i64 b = row_of(i, sr * sc), rem = i - b * sr * sc;
    const i64 r = row_of(rem, sc), c = rem - r * sc;
    const i64 o = b * sr * sc + c * sr + r;
    if (kScaleBytes == 1)
      static_cast<u8 *>(p.scale)[o] = static_cast<const u8 *>(p.scaleIn)[i];
    else
      static_cast<float *>(p.scale)[o] =
          static_cast<const float *>(p.scaleIn)[i];
  }
}

} // namespace fp8k
