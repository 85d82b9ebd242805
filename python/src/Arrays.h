//===- Arrays.h - Array arguments of the extension, checked -----*- C++ -*-===//
//
// Every array the extension takes arrives through DLPack (a torch tensor,
// a NumPy or CuPy array: zero-copy) and is checked here before its pointer
// reaches the runtime or the CPU oracle: element type, rank, shape,
// strides, device. A failed check raises ValueError naming the function and
// the argument: "fp8kit.gemm: b: expected float8_e4m3fn (or uint8 codes),
// found bfloat16".
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PYTHON_ARRAYS_H
#define FP8_PYTHON_ARRAYS_H

#include "core/Recipe.h"
#include "core/Status.h"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8::python {

/// Where an array's memory is.
enum class Where : uint8_t { Host, Cuda };

/// One array argument.
struct Array {
  /// The function and the argument, for messages ("fp8kit.quantize", "x"):
  /// strings that outlive the view (literals), joined only on an error.
  const char *fn = "";
  const char *name = "";
  void *data = nullptr;
  /// The element type, when it is one of ours. Unsigned integers are raw
  /// bit patterns: uint8 FP8 codes, UE8M0 scales or a history state, uint16
  /// bf16 values (NumPy has no bf16), as the call says.
  std::optional<DType> dtype;
  int rawBits = 0;       ///< 8 for uint8, 16 for uint16, else 0
  std::string dtypeName; ///< as PyTorch spells it: "bfloat16"
  int64_t itemBytes = 0;
  std::vector<int64_t> shape, strides; ///< strides in elements
  Where where = Where::Host;
  int device = 0;

  int64_t rank() const { return int64_t(shape.size()); }
  /// "fp8kit.quantize: x"
  std::string label() const { return std::string(fn) + ": " + name; }
  int64_t elements() const;
  /// "cpu", "cuda:0".
  std::string deviceName() const;
};

/// The PyTorch name of an element type of ours ("bfloat16").
const char *torchName(DType t);

/// Raises ValueError("<label>: <what>").
[[noreturn]] void fail(const Array &a, const std::string &what);
/// Raises ValueError("<fn>: <status message>") for a failed check.
void throwIfError(const Status &s, const char *fn);
/// Raises RuntimeError("<fn>: <status message>") for a failed launch.
void throwIfFailed(const Status &s, const char *fn);

/// Views `a`, the argument `name` of `fn`. Raises for an array on neither
/// the host nor a CUDA device.
Array viewArray(const nanobind::ndarray<> &a, const char *fn, const char *name);
/// Views any array argument: a torch.Tensor through its attributes
/// (viewTorch), anything else through DLPack (viewArray).
Array viewArg(nanobind::handle h, const char *fn, const char *name);
/// True for a torch.Tensor (false while torch is not imported).
bool isTorchTensor(nanobind::handle h);
/// A torch.Tensor viewed without DLPack (TorchView.cpp).
Array viewTorch(nanobind::handle h, const char *fn, const char *name);
/// Sets v's element type from its PyTorch name ("bfloat16"; unknown names
/// leave dtype empty).
void nameDType(Array &v, const std::string &name);

/// The element type is `t`; FP8 and UE8M0 arrays may also be uint8, bf16
/// arrays uint16 bit patterns.
void expectDType(const Array &a, DType t);
/// bf16, f16 or f32.
DType expectWide(const Array &a);
/// The rank is between lo and hi.
void expectRank(const Array &a, int64_t lo, int64_t hi);
/// The shape is `shape`.
void expectShape(const Array &a, const std::vector<int64_t> &shape);
/// Packed row-major (C-contiguous).
void expectContiguous(const Array &a);
/// A 2-D array with unit column stride; returns its row pitch (elements).
int64_t expectRowPitch(const Array &a);
/// A 3-D array of G row-major matrices [G, rows, cols] with one row pitch,
/// each right after the other (a group stride of rows x pitch, as a stack
/// of one row-major [G x rows, cols] matrix); returns the row pitch.
int64_t expectStackedRowPitch(const Array &a);
/// On the same device as `ref`.
void expectSameDevice(const Array &ref, const Array &a);
/// At least `bytes` bytes.
void expectBytes(const Array &a, int64_t bytes);

} // namespace fp8::python

#endif // FP8_PYTHON_ARRAYS_H
