//===- Npy.h - A small .npy reader and writer -------------------*- C++ -*-===//
//
// NumPy's .npy format (versions 1.0-3.0 read, 1.0 written), little-endian,
// C order. Element types:
//   '<f4' float32, '<f8' float64, '<f2' binary16, '<i4' int32,
//   '|u1' / '|i1' bytes (FP8 codes and UE8M0 scales are written '|u1'),
//   bf16: '<V2' (what NumPy writes for an ml_dtypes.bfloat16 array) is read
//   as bf16; we write bf16 as '<u2' (its bit patterns, loadable by plain
//   NumPy: np.load(f).view(ml_dtypes.bfloat16)), and '<u2' is read as bf16
//   when the caller asks for it.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_NPY_H
#define FP8_RUNTIME_NUMERICS_NPY_H

#include "core/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fp8::numerics {

/// The longest .npy header read: NumPy writes headers of a few hundred
/// bytes and itself refuses ones over 10000 bytes by default.
inline constexpr size_t kMaxNpyHeader = 65536;

/// An array as stored in a .npy file.
struct NpyArray {
  std::string descr;          ///< e.g. "<f4", "|u1", "<V2"
  std::vector<int64_t> shape; ///< C order
  std::vector<uint8_t> data;  ///< raw little-endian elements

  /// Product of the shape (1 for a 0-d array), saturating at INT64_MAX.
  int64_t elements() const;
};

/// Parses the bytes of a .npy file: the header (at most kMaxNpyHeader
/// bytes) and a shape whose element count fits in int64_t and whose data
/// the bytes hold.
Expected<NpyArray> parseNpy(const std::vector<uint8_t> &bytes);
/// Reads a .npy file; errors name the path. Only a regular file is read
/// (links are followed; a directory or a FIFO is refused, never waited
/// on), and its header is checked against the file's size before the data
/// is allocated.
Expected<NpyArray> readNpy(const std::string &path);
/// The bytes of a version 1.0 .npy file holding `a`.
std::vector<uint8_t> serializeNpy(const NpyArray &a);
/// Writes `a` to `path`, a regular file (created 0644 when missing); a
/// directory or a FIFO there is refused.
Status writeNpy(const std::string &path, const NpyArray &a);

/// How npyToFloat reads '<u2' arrays.
enum class U2As : uint8_t { Integer, BF16 };

/// The elements as float: f4, f8 (rounded), f2, bf16 ('<V2', or '<u2' with
/// U2As::BF16), integers (converted). Fails on any other descr.
Expected<std::vector<float>> npyToFloat(const NpyArray &a,
                                        U2As u2 = U2As::Integer);
/// The elements as bf16 bit patterns: '<V2' or '<u2'; f4 is rounded (RNE).
Expected<std::vector<uint16_t>> npyToBF16(const NpyArray &a);
/// The raw bytes of a '|u1' or '|i1' array (FP8 codes).
Expected<std::vector<uint8_t>> npyToBytes(const NpyArray &a);

NpyArray npyFromFloat(const float *data, std::vector<int64_t> shape);
NpyArray npyFromDouble(const double *data, std::vector<int64_t> shape);
NpyArray npyFromBF16(const uint16_t *data, std::vector<int64_t> shape);
NpyArray npyFromBytes(const uint8_t *data, std::vector<int64_t> shape);
NpyArray npyFromInt32(const int32_t *data, std::vector<int64_t> shape);

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_NPY_H
