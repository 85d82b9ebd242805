//===- Arrays.cpp - Array arguments of the extension, checked -------------===//

#include "python/src/Arrays.h"

#include "core/RecipeRules.h"

namespace nb = nanobind;

namespace fp8::python {

namespace {
namespace dl = nb::dlpack;

/// DLPack device types (dlpack.h): host memory and CUDA device memory.
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3;

struct DTypeName {
  uint8_t code, bits;
  std::optional<DType> type;
  const char *name;
};
constexpr DTypeName kNames[] = {
    {uint8_t(dl::dtype_code::Float), 32, DType::F32, "float32"},
    {uint8_t(dl::dtype_code::Float), 16, DType::F16, "float16"},
    {uint8_t(dl::dtype_code::Bfloat), 16, DType::BF16, "bfloat16"},
    {uint8_t(dl::dtype_code::Float8_E4M3FN), 8, DType::E4M3FN, "float8_e4m3fn"},
    {uint8_t(dl::dtype_code::Float8_E5M2), 8, DType::E5M2, "float8_e5m2"},
    {uint8_t(dl::dtype_code::Float8_E8M0FNU), 8, DType::UE8M0,
     "float8_e8m0fnu"},
    {uint8_t(dl::dtype_code::Int), 32, DType::I32, "int32"},
    {uint8_t(dl::dtype_code::UInt), 8, std::nullopt, "uint8"},
    {uint8_t(dl::dtype_code::Float), 64, std::nullopt, "float64"},
    {uint8_t(dl::dtype_code::Int), 64, std::nullopt, "int64"},
    {uint8_t(dl::dtype_code::Int), 8, std::nullopt, "int8"},
    {uint8_t(dl::dtype_code::Int), 16, std::nullopt, "int16"},
    {uint8_t(dl::dtype_code::UInt), 16, std::nullopt, "uint16"},
    {uint8_t(dl::dtype_code::Bool), 8, std::nullopt, "bool"},
};

} // namespace

const char *torchName(DType t) {
  for (const DTypeName &n : kNames)
    if (n.type == t)
      return n.name;
  return "?";
}

int64_t Array::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string Array::deviceName() const {
  return where == Where::Host ? "cpu" : "cuda:" + std::to_string(device);
}

void fail(const Array &a, const std::string &what) {
  throw nb::value_error((a.label() + ": " + what).c_str());
}

void throwIfError(const Status &s, const char *fn) {
  if (!s)
    throw nb::value_error((std::string(fn) + ": " + s.message()).c_str());
}

void throwIfFailed(const Status &s, const char *fn) {
  if (!s)
    throw std::runtime_error(std::string(fn) + ": " + s.message());
}

void nameDType(Array &v, const std::string &name) {
  v.dtypeName = name;
  for (const DTypeName &n : kNames)
    if (name == n.name) {
      v.dtype = n.type;
      v.rawBits = n.code == uint8_t(dl::dtype_code::UInt) ? n.bits : 0;
    }
}

Array viewArray(const nb::ndarray<> &a, const char *fn, const char *name) {
  Array v;
  v.fn = fn;
  v.name = name;
  const dl::dtype t = a.dtype();
  v.dtypeName = "an unsupported element type (DLPack code " +
                std::to_string(t.code) + ", " + std::to_string(t.bits) +
                " bits)";
  for (const DTypeName &n : kNames)
    if (n.code == t.code && n.bits == t.bits && t.lanes == 1)
      nameDType(v, n.name);
  v.itemBytes = (int64_t(t.bits) * t.lanes + 7) / 8;
  v.data = a.data();
  const int64_t rank = int64_t(a.ndim());
  v.shape.assign(a.shape_ptr(), a.shape_ptr() + rank);
  if (a.stride_ptr()) {
    v.strides.assign(a.stride_ptr(), a.stride_ptr() + rank);
  } else { // compact row-major (DLPack leaves the strides out)
    v.strides.assign(size_t(rank), 1);
    for (int64_t i = rank - 2; i >= 0; --i)
      v.strides[size_t(i)] = v.strides[size_t(i + 1)] * v.shape[size_t(i + 1)];
  }
  const int type = a.device_type();
  if (type == kDLCPU || type == kDLCUDAHost) {
    v.where = Where::Host;
  } else if (type == kDLCUDA) {
    v.where = Where::Cuda;
    v.device = a.device_id();
  } else {
    fail(v, "expected an array in host memory or on a CUDA device, found "
            "one on DLPack device type " +
                std::to_string(type));
  }
  return v;
}

void expectDType(const Array &a, DType t) {
  const int raw = isFP8(t) || t == DType::UE8M0 ? 8 : t == DType::BF16 ? 16 : 0;
  if (a.dtype == t || (raw && a.rawBits == raw))
    return;
  const char *alt = raw == 8    ? " (or uint8 bytes)"
                    : raw == 16 ? " (or uint16 bit patterns)"
                                : "";
  fail(a, std::string("expected ") + torchName(t) + alt + ", found " +
              a.dtypeName);
}

DType expectWide(const Array &a) {
  if (a.dtype && isWide(*a.dtype))
    return *a.dtype;
  fail(a, "expected bfloat16, float16 or float32, found " + a.dtypeName);
}

void expectRank(const Array &a, int64_t lo, int64_t hi) {
  if (a.rank() >= lo && a.rank() <= hi)
    return;
  fail(a, "expected " +
              (lo == hi ? std::to_string(lo)
                        : std::to_string(lo) + " to " + std::to_string(hi)) +
              " dimensions, found " + std::to_string(a.rank()) + " (shape " +
              formatShape(a.shape) + ")");
}

void expectShape(const Array &a, const std::vector<int64_t> &shape) {
  if (a.shape != shape)
    fail(a, "expected shape " + formatShape(shape) + ", found " +
                formatShape(a.shape));
}

void expectContiguous(const Array &a) {
  // No elements: nothing is laid out (NumPy gives such arrays any strides).
  for (int64_t extent : a.shape)
    if (extent == 0)
      return;
  int64_t stride = 1;
  for (int64_t i = a.rank() - 1; i >= 0; --i) {
    if (a.shape[size_t(i)] != 1 && a.strides[size_t(i)] != stride)
      fail(a, "expected a contiguous (row-major, packed) array, found "
              "strides " +
                  formatShape(a.strides) + " for shape " +
                  formatShape(a.shape));
    stride *= a.shape[size_t(i)];
  }
}

int64_t expectRowPitch(const Array &a) {
  expectRank(a, 2, 2);
  if (a.shape[0] == 0) // no rows: any strides (NumPy's), the packed pitch
    return a.shape[1];
  if (a.shape[1] > 1 && a.strides[1] != 1)
    fail(a, "expected a row-major array (unit stride along its last "
            "dimension), found strides " +
                formatShape(a.strides));
  const int64_t pitch = a.shape[0] > 1 ? a.strides[0] : a.shape[1];
  if (pitch < a.shape[1])
    fail(a, "expected rows that do not overlap (a row stride of at least " +
                std::to_string(a.shape[1]) + "), found strides " +
                formatShape(a.strides));
  return pitch;
}

int64_t expectStackedRowPitch(const Array &a) {
  expectRank(a, 3, 3);
  const int64_t rows = a.shape[1], cols = a.shape[2];
  if (a.shape[0] == 0 || rows == 0) // no rows: the packed pitch
    return cols;
  if (cols > 1 && a.strides[2] != 1)
    fail(a, "expected row-major matrices (unit stride along the last "
            "dimension), found strides " +
                formatShape(a.strides));
  const int64_t pitch = rows > 1 ? a.strides[1] : cols;
  if (pitch < cols)
    fail(a, "expected rows that do not overlap (a row stride of at least " +
                std::to_string(cols) + "), found strides " +
                formatShape(a.strides));
  if (a.shape[0] > 1 && rows > 0 && a.strides[0] != rows * pitch)
    fail(a, "expected the groups' matrices one after the other (a stride of " +
                std::to_string(rows * pitch) +
                " = rows x row stride along the first dimension), found "
                "strides " +
                formatShape(a.strides));
  return pitch;
}

void expectSameDevice(const Array &ref, const Array &a) {
  if (a.where != ref.where || a.device != ref.device)
    fail(a, "expected it on " + ref.deviceName() + ", as " + ref.name +
                ", found " + a.deviceName());
}

void expectBytes(const Array &a, int64_t bytes) {
  if (a.elements() * a.itemBytes < bytes)
    fail(a, "expected at least " + std::to_string(bytes) + " bytes, found " +
                std::to_string(a.elements() * a.itemBytes));
}

Array viewArg(nb::handle h, const char *fn, const char *name) {
  if (isTorchTensor(h))
    return viewTorch(h, fn, name);
  nb::ndarray<> a;
  if (!nb::try_cast(h, a)) {
    Array v;
    v.fn = fn;
    v.name = name;
    fail(v, "expected an array (a torch tensor, a NumPy array or an object "
            "with __dlpack__), found " +
                nb::cast<std::string>(nb::str(h.type().attr("__name__"))));
  }
  return viewArray(a, fn, name);
}

} // namespace fp8::python
