//===- Quantize.cpp - FP8 quantize and transpose on the GPU ---------------===//

#include "runtime/Quantize.h"

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "codegen/kernels/fp8_delayed.h"
#include "core/RecipeRules.h"
#include "runtime/CudaDriver.h"
#include "runtime/ElementwiseLaunch.h"

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace fp8 {

namespace {
/// The largest rows, columns and batch a call takes: as the plans' dims.
constexpr int64_t kMaxExtent = int64_t(1) << 40;
/// And elements in all: the plans' largest buffer.
constexpr int64_t kMaxElements = int64_t(1) << 47;

/// The block path's amax scratch (one u32 per scale, zero between calls:
/// the kernels reset it), one per stream, grown on demand.
struct Scratch {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
};
std::mutex gScratchMutex;
std::unordered_map<CUstream, Scratch> gScratch;

Expected<CUdeviceptr> amaxScratch(const CudaDriver &d, CUstream stream,
                                  size_t bytes) {
  std::lock_guard<std::mutex> lock(gScratchMutex);
  Scratch &s = gScratch[stream];
  if (s.bytes >= bytes)
    return s.ptr;
  if (s.ptr) {
    // Earlier launches on this stream may still use the old scratch.
    FP8_RETURN_IF_ERROR(
        cuCheck(d.cuStreamSynchronize(stream), "cuStreamSynchronize"));
    d.cuMemFree(s.ptr);
    s = Scratch{};
  }
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuMemAlloc(&s.ptr, bytes), "cuMemAlloc(amax scratch)"));
  s.bytes = bytes;
  FP8_RETURN_IF_ERROR(cuCheck(d.cuMemsetD8Async(s.ptr, 0, bytes, stream),
                              "cuMemsetD8Async(amax scratch)"));
  return s.ptr;
}

bool misaligned(const void *p, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % uint64_t(bytes) != 0;
}

/// The shape rules of both entry points: the plans' bounds.
Status checkExtents(int64_t rows, int64_t cols, int64_t batch) {
  if (rows < 0 || cols < 0 || rows >= kMaxExtent || cols >= kMaxExtent)
    return errorf("expected rows and cols in [0, 2^40), found ", rows, " x ",
                  cols);
  if (batch < 1 || batch >= kMaxExtent)
    return errorf("expected a batch in [1, 2^40), found ", batch);
  int64_t elements = 0;
  if (__builtin_mul_overflow(batch, rows, &elements) ||
      __builtin_mul_overflow(elements, cols, &elements) ||
      elements > kMaxElements)
    return errorf("expected at most 2^47 elements, found a batch of ", batch,
                  " matrices of ", rows, " x ", cols);
  return Status::ok();
}

/// The runtime's device and the arch of the kernels it runs.
struct KernelDevice {
  const CudaDevice *dev;
  Arch arch;
};

Expected<KernelDevice> kernelDevice() {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  const CudaDevice &d = **dev;
  if (d.ccMajor == 9 && d.ccMinor == 0)
    return KernelDevice{&d, Arch::SM90a};
  if (d.ccMajor == 10 && d.ccMinor == 0)
    return KernelDevice{&d, Arch::SM100a};
  return errorf("expected an sm_90a or sm_100a device for the quantize and "
                "transpose kernels, found device ",
                d.ordinal, " (", d.name, ") of compute capability ", d.ccMajor,
                ".", d.ccMinor);
}
} // namespace

int64_t amaxHistoryBytes(int64_t length) {
  return fp8k::amax_history_bytes(length);
}

bool quantizeWritesTransposed(const QuantRecipe &recipe) {
  // The kernels' rule: the column path is the one that transposes.
  ElementwiseSpec column;
  column.kind = AuxKind::Quantize;
  column.quant = recipe;
  return quantizeUsesColumnPath(column);
}

Status checkQuantizeArgs(const QuantRecipe &r, int64_t rows, int64_t cols,
                         const QuantizeTensors &t) {
  FP8_RETURN_IF_ERROR(checkQuantRecipe(r, "x"));
  if (!isWide(t.xType))
    return errorf("expected x to be bf16, f16 or f32, found ",
                  toString(t.xType));
  FP8_RETURN_IF_ERROR(checkExtents(rows, cols, t.batch));
  // An empty tensor has no codes and, where its blocks are whole rows,
  // columns or the tensor, scales of blocks of no elements: those would be
  // of an amax of nothing (and delayed scaling would record it), refused.
  // Otherwise its scales are empty too: nothing to write, and the pointers
  // may be null (an empty tensor's data pointer is).
  const bool empty = rows == 0 || cols == 0;
  const int64_t scaleCount =
      r.granularity.scaleRows(rows) * r.granularity.scaleCols(cols);
  if (empty && scaleCount > 0)
    return errorf("expected a non-empty tensor for ", toString(r.granularity),
                  " scales (", scaleCount,
                  " of them, each of an amax of no elements), found ", rows,
                  " x ", cols);
  if (!empty && (!t.x || !t.codes || !t.scales))
    return errorf("expected pointers to x, codes and scales, found x = ", t.x,
                  ", codes = ", t.codes, ", scales = ", t.scales);
  if (misaligned(t.x, sizeOf(t.xType)))
    return errorf("expected x to be aligned to its element size (",
                  sizeOf(t.xType), " bytes), found ", t.x);
  if (r.granularity.scale != ScaleFormat::UE8M0 && misaligned(t.scales, 4))
    return errorf("expected the f32 scales to be 4-byte aligned, found ",
                  t.scales);
  const bool delayed = r.mode == ScalingMode::Delayed;
  if (delayed && !t.history)
    return errorf("expected an amax history state (history: ",
                  amaxHistoryBytes(r.delayed.historyLength),
                  " bytes, zeroed before the first call) with delayed "
                  "scaling");
  if (!delayed && t.history)
    return errorf("expected no amax history with current scaling");
  if (delayed && t.batch != 1)
    return errorf("expected one matrix with delayed scaling (one amax "
                  "history), found a batch of ",
                  t.batch);
  if (t.transposed && !quantizeWritesTransposed(r))
    return errorf("expected blocks of several rows by one column (R x 1, "
                  "R > 1, such as 128x1) with current scaling for "
                  "transposed codes and scales, found ",
                  toString(r.granularity), delayed ? " delayed" : "");
  if (t.amax && !takesGivenAmax(r))
    return errorf("expected per-tensor current scaling with a given amax "
                  "(amax), found ",
                  toString(r.granularity), delayed ? " delayed" : "");
  if (misaligned(t.amax, 4))
    return errorf("expected the given amax to be 4-byte aligned (f32), "
                  "found ",
                  static_cast<const void *>(t.amax));
  if (delayed && misaligned(t.history, 4))
    return errorf("expected the amax history to be 4-byte aligned, found ",
                  t.history);
  return Status::ok();
}

Status quantize(const QuantRecipe &r, int64_t rows, int64_t cols,
                const QuantizeTensors &t, CUstream stream) {
  FP8_RETURN_IF_ERROR(checkQuantizeArgs(r, rows, cols, t));
  if (rows == 0 || cols == 0)
    return Status::ok();
  Expected<KernelDevice> kd = kernelDevice();
  if (!kd)
    return kd.status();
  const CudaDevice &d = *kd->dev;
  ElementwiseSpec spec;
  spec.kind = AuxKind::Quantize;
  spec.arch = kd->arch;
  spec.program = EwProgram::identity(t.xType);
  spec.quant = r;
  spec.transposed = t.transposed;
  spec.amaxIn = t.amax != nullptr;
  FP8_RETURN_IF_ERROR(checkElementwiseSpec(spec));

  fp8k::EwParams p{};
  p.in[0] = t.x;
  p.out = t.codes;
  p.scale = t.scales;
  p.scaleIn = t.amax;
  p.history = t.history;
  p.batch = t.batch;
  p.rows = rows;
  p.cols = cols;
  p.scaleRows = r.granularity.scaleRows(rows);
  p.scaleCols = r.granularity.scaleCols(cols);
  if (!quantizeIsOnePass(spec)) {
    auto scratch = amaxScratch(
        *d.driver, stream,
        size_t(fp8k::amax_scratch_words(t.batch * p.scaleRows * p.scaleCols,
                                        quantizeScalesInCodesPass(spec))) *
            4);
    if (!scratch)
      return scratch.status();
    p.amax = reinterpret_cast<fp8k::u32 *>(*scratch);
  }
  return launchElementwise(
      spec, elementwiseLaunches(spec, t.batch, rows, cols, d.smCount), p,
      stream);
}

Status checkTransposeArgs(DType format, const Granularity &g, int64_t rows,
                          int64_t cols, const TransposeTensors &t) {
  if (!isFP8(format))
    return errorf("expected the codes to be FP8 (e4m3fn or e5m2), found ",
                  toString(format));
  FP8_RETURN_IF_ERROR(checkGranularity(g, "the codes' granularity"));
  FP8_RETURN_IF_ERROR(checkExtents(rows, cols, t.batch));
  if (!t.codes || !t.scales || !t.outCodes || !t.outScales)
    return errorf("expected device pointers for codes, scales, outCodes and "
                  "outScales, found codes = ",
                  t.codes, ", scales = ", t.scales, ", outCodes = ", t.outCodes,
                  ", outScales = ", t.outScales);
  if (g.scale != ScaleFormat::UE8M0 &&
      (misaligned(t.scales, 4) || misaligned(t.outScales, 4)))
    return errorf("expected the f32 scales to be 4-byte aligned, found "
                  "scales = ",
                  t.scales, ", outScales = ", t.outScales);
  return Status::ok();
}

Status transpose(DType format, const Granularity &g, int64_t rows, int64_t cols,
                 const TransposeTensors &t, CUstream stream) {
  FP8_RETURN_IF_ERROR(checkTransposeArgs(format, g, rows, cols, t));
  if (rows == 0 || cols == 0)
    return Status::ok();
  Expected<KernelDevice> kd = kernelDevice();
  if (!kd)
    return kd.status();
  const CudaDevice &d = *kd->dev;
  ElementwiseSpec spec;
  spec.kind = AuxKind::Transpose;
  spec.arch = kd->arch;
  spec.quant.format = format;
  spec.quant.granularity = g;
  FP8_RETURN_IF_ERROR(checkElementwiseSpec(spec));

  fp8k::EwParams p{};
  p.in[0] = t.codes;
  p.scaleIn = t.scales;
  p.out = t.outCodes;
  p.scale = t.outScales;
  p.batch = t.batch;
  p.rows = rows;
  p.cols = cols;
  p.scaleRows = g.scaleRows(rows);
  p.scaleCols = g.scaleCols(cols);
  return launchElementwise(
      spec, elementwiseLaunches(spec, t.batch, rows, cols, d.smCount), p,
      stream);
}

} // namespace fp8
