//===- TensorOps.cpp - quantize, transpose and gemm on arrays -------------===//
//
// The tensor API of fp8kit._core: outputs are given (python/fp8kit/ops.py
// allocates them), every array is checked (Arrays.h), then a CUDA array goes
// to the runtime (runtime/Quantize.h, Gemm.h: the JIT-compiled kernels, on
// the stream given: the caller's current one) and a host array to the CPU
// oracle (runtime/HostOracle.h: the same checks and results bit-identical to
// the kernels' for quantize and transpose).
//
//===----------------------------------------------------------------------===//

#include "python/src/TensorOps.h"
#include "python/src/Arrays.h"
#include "python/src/Bindings.h"
#include "python/src/Recipes.h"

#include "core/RecipeRules.h"
#include "core/Target.h"
#include "runtime/CudaDriver.h"
#include "runtime/Gemm.h"
#include "runtime/HostOracle.h"
#include "runtime/Quantize.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

namespace nb = nanobind;

namespace fp8::python {

// Opened once for the process and remembered here: CudaDevice::get() also
// makes its context current, which the launch that follows does itself (a
// driver call a GEMM's Python overhead need not pay twice).
const CudaDevice &expectRuntimeDevice(const Array &a, const char *fn) {
  static const CudaDevice *opened = nullptr;
  if (!opened) {
    Expected<const CudaDevice *> dev = CudaDevice::get();
    if (!dev)
      throw std::runtime_error(
          std::string(fn) + ": no GPU to run on: " + dev.message() +
          " (arrays in host memory run on the CPU oracle)");
    opened = *dev;
  }
  if (a.device != opened->ordinal)
    fail(a, "expected it on cuda:" + std::to_string(opened->ordinal) +
                " (the runtime's device, FP8_DEVICE), found " + a.deviceName());
  return *opened;
}

CUstream toStream(uintptr_t stream) {
  return reinterpret_cast<CUstream>(stream);
}

DType scaleTypeOf(const Granularity &g) {
  return g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32;
}

// Row-major scales, or column-major as torch._scaled_mm takes them.
void readScales(const Array &s, const Array &ref, const Granularity &g,
                int64_t rows, int64_t cols, int64_t &ldOuter, int64_t &ldK) {
  expectSameDevice(ref, s);
  expectDType(s, scaleTypeOf(g));
  const std::vector<int64_t> want = {g.scaleRows(rows), g.scaleCols(cols)};
  if (g.isPerTensor() && s.elements() == 1 && s.rank() <= 2) {
    ldOuter = ldK = 1;
    return;
  }
  expectShape(s, want);
  if (s.elements() == 0) { // no scales (no rows): any strides, packed
    ldOuter = std::max<int64_t>(want[1], 1);
    ldK = 1;
    return;
  }
  for (int i = 0; i < 2; ++i)
    if (s.shape[size_t(i)] > 1 && s.strides[size_t(i)] <= 0)
      fail(s, "expected positive strides, found " + formatShape(s.strides) +
                  " (elements)");
  ldOuter = s.shape[0] > 1 ? s.strides[0] : 1;
  ldK = s.shape[1] > 1 ? s.strides[1] : 1;
}

GemmRecipe gemmRecipeOf(const MatmulRecipe &mr, bool accumulate) {
  GemmRecipe r;
  r.a = {mr.a.format, Layout::KMajor, mr.a.granularity};
  r.b = {mr.b.format, Layout::KMajor, mr.b.granularity};
  r.promotionInterval = mr.promotionInterval;
  r.out = mr.out;
  r.accumulate = accumulate;
  return r;
}

namespace {

/// The leading batch dimension of a [batch,] rows, cols array and the
/// shape of its scales.
std::vector<int64_t> scaleShape(const Array &x, const Granularity &g) {
  const int64_t rows = x.shape[size_t(x.rank() - 2)];
  const int64_t cols = x.shape[size_t(x.rank() - 1)];
  std::vector<int64_t> s;
  if (x.rank() == 3)
    s.push_back(x.shape[0]);
  s.push_back(g.scaleRows(rows));
  s.push_back(g.scaleCols(cols));
  return s;
}

/// `shape` with its last two dimensions swapped: the shape of a transposed
/// [batch,] rows, cols array, or of its scales.
std::vector<int64_t> transposedShape(std::vector<int64_t> shape) {
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  return shape;
}

nb::dict statsDict(const numerics::QuantStats &s) {
  nb::dict d;
  d["elements"] = s.elements;
  d["blocks"] = s.blocks;
  d["zero_blocks"] = s.zeroBlocks;
  d["non_finite"] = s.nonFinite;
  d["nonzero"] = s.nonzero;
  d["underflow"] = s.underflow;
  d["overflow"] = s.overflow;
  d["underflow_ratio"] = s.underflowRatio;
  d["overflow_ratio"] = s.overflowRatio;
  d["range_collapse_ratio"] = s.rangeCollapseRatio;
  d["amax"] = s.amax;
  d["max_abs_error"] = s.maxAbsError;
  d["max_rel_error"] = s.maxRelError;
  d["mean_rel_error"] = s.meanRelError;
  d["rms_error"] = s.rmsError;
  d["used_history"] = s.usedHistory;
  d["scale_amax"] = s.scaleAmax;
  return d;
}

/// gemmKernelSpec, remembered per problem: the heuristic's choice and the
/// kernel's rules are a pure function of these, and a training loop asks
/// for the same few shapes every step (the Python call overhead budget).
/// Under the GIL; a refusal is not remembered.
Expected<KernelSpec> memoGemmKernelSpec(const GemmRecipe &r, int64_t m,
                                        int64_t n, int64_t k, int smCount) {
  using Key = std::array<int64_t, 14>;
  auto op = [](const OperandSpec &o, int64_t *p) {
    p[0] = int64_t(o.format);
    p[1] = o.granularity.rows;
    p[2] = o.granularity.cols;
    p[3] = int64_t(o.granularity.scale);
  };
  Key key{};
  op(r.a, &key[0]);
  op(r.b, &key[4]);
  key[8] = r.promotionInterval ? *r.promotionInterval : -1;
  key[9] = int64_t(r.out) * 2 + (r.accumulate ? 1 : 0);
  key[10] = m;
  key[11] = n;
  key[12] = k;
  key[13] = smCount;
  static std::map<Key, KernelSpec> memo;
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  Expected<KernelSpec> spec = gemmKernelSpec(r, m, n, k, smCount, std::nullopt);
  if (spec && memo.size() < 4096 && !r.epilogue &&
      r.a.layout == Layout::KMajor && r.b.layout == Layout::KMajor)
    memo.emplace(key, *spec);
  return spec;
}

nb::object quantizeArrays(nb::handle x, nb::handle codes, nb::handle scales,
                          nb::handle recipe, nb::handle history,
                          uintptr_t stream, bool stats, bool transposed,
                          nb::handle amax) {
  const char *fn = "fp8kit.quantize";
  const QuantRecipe r = toQuantRecipe(recipe, fn);
  const Array X = viewArg(x, fn, "x");
  expectRank(X, 2, 3);
  expectContiguous(X);
  QuantizeTensors t;
  t.xType = expectWide(X);
  const Array C = viewArg(codes, fn, "codes");
  expectSameDevice(X, C);
  expectDType(C, r.format);
  // Transposed: the codes [batch,] cols, rows and the scales of the
  // transposed granularity over them (checkQuantizeArgs says for which
  // recipes).
  expectShape(C, transposed ? transposedShape(X.shape) : X.shape);
  expectContiguous(C);
  const Array S = viewArg(scales, fn, "scales");
  expectSameDevice(X, S);
  expectDType(S, scaleTypeOf(r.granularity));
  const std::vector<int64_t> sshape = scaleShape(X, r.granularity);
  expectShape(S, transposed ? transposedShape(sshape) : sshape);
  expectContiguous(S);
  const bool delayed = r.mode == ScalingMode::Delayed;
  if (delayed == history.is_none())
    throw nb::value_error(
        delayed ? "fp8kit.quantize: history: expected the amax history state "
                  "of delayed scaling (a zeroed uint8 tensor of "
                  "recipe.history_bytes bytes), found None"
                : "fp8kit.quantize: history: expected None with current "
                  "scaling, found an array");
  if (!history.is_none()) {
    const Array H = viewArg(history, fn, "history");
    expectSameDevice(X, H);
    expectContiguous(H);
    expectBytes(H, amaxHistoryBytes(r.delayed.historyLength));
    t.history = H.data;
  }
  if (!amax.is_none()) {
    // The amax of each matrix, given (a GEMM epilogue's): f32, shaped as
    // per-tensor scales.
    const Array A = viewArg(amax, fn, "amax");
    expectSameDevice(X, A);
    expectDType(A, DType::F32);
    expectShape(A, scaleShape(X, Granularity::perTensor()));
    expectContiguous(A);
    t.amax = static_cast<const float *>(A.data);
  }
  t.x = X.data;
  t.codes = C.data;
  t.scales = S.data;
  t.batch = X.rank() == 3 ? X.shape[0] : 1;
  t.transposed = transposed;
  const int64_t rows = X.shape[size_t(X.rank() - 2)];
  const int64_t cols = X.shape[size_t(X.rank() - 1)];
  throwIfError(checkQuantizeArgs(r, rows, cols, t), fn);
  if (X.where == Where::Host) {
    numerics::QuantStats st;
    Status s;
    {
      nb::gil_scoped_release release;
      s = quantizeOnHost(r, rows, cols, t, stats ? &st : nullptr);
    }
    throwIfError(s, fn);
    return stats ? nb::object(statsDict(st)) : nb::none();
  }
  if (stats)
    throw nb::value_error("fp8kit.quantize: stats: the statistics are "
                          "computed by the CPU oracle; quantize a host copy "
                          "of x for them (fp8kit.quantize does)");
  expectRuntimeDevice(X, fn);
  Status s;
  {
    nb::gil_scoped_release release;
    s = quantize(r, rows, cols, t, toStream(stream));
  }
  throwIfFailed(s, fn);
  return nb::none();
}

void transposeArrays(nb::handle codes, nb::handle scales, nb::handle outCodes,
                     nb::handle outScales, const std::string &format,
                     nb::handle granularity, uintptr_t stream) {
  const char *fn = "fp8kit.transpose";
  const DType f = parseFormat(format, fn);
  const Granularity g = toGranularity(granularity, fn);
  const Array C = viewArg(codes, fn, "codes");
  expectRank(C, 2, 3);
  expectDType(C, f);
  expectContiguous(C);
  const Array S = viewArg(scales, fn, "scales");
  expectSameDevice(C, S);
  expectDType(S, scaleTypeOf(g));
  expectShape(S, scaleShape(C, g));
  expectContiguous(S);
  const std::vector<int64_t> tshape = transposedShape(C.shape);
  const std::vector<int64_t> tscales = transposedShape(S.shape);
  const Array OC = viewArg(outCodes, fn, "out_codes");
  expectSameDevice(C, OC);
  expectDType(OC, f);
  expectShape(OC, tshape);
  expectContiguous(OC);
  const Array OS = viewArg(outScales, fn, "out_scales");
  expectSameDevice(C, OS);
  expectDType(OS, scaleTypeOf(g));
  expectShape(OS, tscales);
  expectContiguous(OS);
  TransposeTensors t{C.data, S.data, OC.data, OS.data,
                     C.rank() == 3 ? C.shape[0] : 1};
  const int64_t rows = C.shape[size_t(C.rank() - 2)];
  const int64_t cols = C.shape[size_t(C.rank() - 1)];
  throwIfError(checkTransposeArgs(f, g, rows, cols, t), fn);
  Status s;
  if (C.where == Where::Host) {
    nb::gil_scoped_release release;
    s = transposeOnHost(f, g, rows, cols, t);
  } else {
    expectRuntimeDevice(C, fn);
    nb::gil_scoped_release release;
    s = transpose(f, g, rows, cols, t, toStream(stream));
  }
  throwIfFailed(s, fn);
}

void gemmArrays(nb::handle a, nb::handle aScale, nb::handle b,
                nb::handle bScale, nb::handle d, const MatmulRecipe &mr,
                nb::handle c, uintptr_t stream) {
  const char *fn = "fp8kit.gemm";
  const GemmRecipe r = gemmRecipeOf(mr, !c.is_none());
  GemmTensors t;
  const Array A = viewArg(a, fn, "a");
  expectDType(A, r.a.format);
  t.lda = expectRowPitch(A);
  const int64_t m = A.shape[0], k = A.shape[1];
  const Array B = viewArg(b, fn, "b");
  expectSameDevice(A, B);
  expectDType(B, r.b.format);
  t.ldb = expectRowPitch(B);
  const int64_t n = B.shape[0];
  if (B.shape[1] != k)
    fail(B, "expected [N, K] with a's K (" + std::to_string(k) +
                "), found shape " + formatShape(B.shape));
  const Array SA = viewArg(aScale, fn, "a_scale");
  readScales(SA, A, r.a.granularity, m, k, t.scaleALdOuter, t.scaleALdK);
  const Array SB = viewArg(bScale, fn, "b_scale");
  readScales(SB, A, r.b.granularity, n, k, t.scaleBLdOuter, t.scaleBLdK);
  // d, and c when given: [M, N] of the recipe's out type, beside a.
  auto result = [&](nb::handle h, const char *name, int64_t &ld) {
    const Array R = viewArg(h, fn, name);
    expectSameDevice(A, R);
    expectDType(R, r.out);
    expectShape(R, {m, n});
    ld = expectRowPitch(R);
    return R.data;
  };
  t.d = result(d, "d", t.ldd);
  if (r.accumulate)
    t.c = result(c, "c", t.ldc);
  t.a = A.data;
  t.b = B.data;
  t.scaleA = SA.data;
  t.scaleB = SB.data;
  const bool host = A.where == Where::Host;
  // The tensors' checks (checkGemmArgs) before any work; on the GPU path
  // fp8::gemm runs them itself before its launch, and they are run again
  // only to raise its refusal as the caller's error (ValueError).
  if (host || m == 0)
    throwIfError(checkGemmArgs(r, m, n, k, t), fn);
  if (m == 0)
    return;
  int smCount = targetInfo(Arch::SM90a).smCount;
  if (!host)
    smCount = expectRuntimeDevice(A, fn).smCount;
  // The kernel's rules (a refusal is the caller's error, raised as such),
  // and the tile the heuristic gives this M, which the launch takes as it is.
  Expected<KernelSpec> spec = memoGemmKernelSpec(r, m, n, k, smCount);
  throwIfError(spec.status(), fn);
  Status s;
  if (host) {
    nb::gil_scoped_release release;
    s = gemmOnHost(r, m, n, k, t);
  } else {
    GemmOptions options;
    // Tuning on first use: the runtime chooses at the launch (a tile not
    // measured yet is measured there).
    if (tuningOnFirstUse())
      options.selectTile = true;
    else
      options.tile = spec->tile;
    {
      nb::gil_scoped_release release;
      s = gemm(*spec, m, t, toStream(stream), options);
    }
    if (!s)
      throwIfError(checkGemmArgs(r, m, n, k, t), fn);
  }
  throwIfFailed(s, fn);
}

/// Host seconds per fp8::gemm call, `iters` calls in a loop after one
/// warm-up (the kernel compiled and loaded): the C++ side of the Python
/// call overhead that python/tests/test_gpu.py measures.
double gemmLaunchSeconds(nb::handle a, nb::handle aScale, nb::handle b,
                         nb::handle bScale, nb::handle d,
                         const MatmulRecipe &mr, uintptr_t stream, int iters) {
  const char *fn = "fp8kit._core.gemm_launch_seconds";
  if (iters < 1 || iters > 100000)
    throw nb::value_error("fp8kit._core.gemm_launch_seconds: expected iters "
                          "in [1, 100000]");
  const Array A = viewArg(a, fn, "a");
  if (A.where != Where::Cuda)
    fail(A, "expected a CUDA array");
  gemmArrays(a, aScale, b, bScale, d, mr, nb::none(), stream); // checks
  const GemmRecipe r = gemmRecipeOf(mr, false);
  GemmTensors t;
  t.a = A.data;
  t.lda = A.strides[0];
  const Array B = viewArg(b, fn, "b");
  t.b = B.data;
  t.ldb = B.strides[0];
  t.scaleA = viewArg(aScale, fn, "a_scale").data;
  t.scaleB = viewArg(bScale, fn, "b_scale").data;
  const Array D = viewArg(d, fn, "d");
  t.d = D.data;
  t.ldd = D.strides[0];
  const int64_t m = A.shape[0], n = B.shape[0], k = A.shape[1];
  nb::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    throwIfFailed(gemm(r, m, n, k, t, toStream(stream)), fn);
  const std::chrono::duration<double> took =
      std::chrono::steady_clock::now() - start;
  return took.count() / iters;
}

nb::dict deviceInfo() {
  Expected<const CudaDevice *> dev = CudaDevice::get();
  if (!dev)
    throw std::runtime_error("fp8kit.device: no GPU: " + dev.message());
  nb::dict out;
  out["name"] = (*dev)->name;
  out["ordinal"] = (*dev)->ordinal;
  out["sm_count"] = (*dev)->smCount;
  out["compute_capability"] = nb::make_tuple((*dev)->ccMajor, (*dev)->ccMinor);
  return out;
}

} // namespace

void bindTensorOps(nb::module_ &m) {
  m.def("quantize", &quantizeArrays, nb::arg("x"), nb::arg("codes"),
        nb::arg("scales"), nb::arg("recipe"),
        nb::arg("history").none() = nb::none(), nb::arg("stream") = 0,
        nb::arg("stats") = false, nb::arg("transposed") = false,
        nb::arg("amax").none() = nb::none(),
        "Quantizes x ([rows, cols] or [batch, rows, cols]; bf16, f16 or f32) "
        "into codes and scales as the recipe says (transposed: codes [batch, "
        "cols, rows] and their scales, for R x 1 blocks with current "
        "scaling; amax: each matrix's amax given, f32 shaped as per-tensor "
        "scales, for per-tensor current scaling); returns the statistics "
        "(host arrays, stats=True) or None.");
  m.def("transpose", &transposeArrays, nb::arg("codes"), nb::arg("scales"),
        nb::arg("out_codes"), nb::arg("out_scales"), nb::arg("format"),
        nb::arg("granularity"), nb::arg("stream") = 0,
        "The FP8 transpose of quantized codes and their scales.");
  m.def("gemm", &gemmArrays, nb::arg("a"), nb::arg("a_scale"), nb::arg("b"),
        nb::arg("b_scale"), nb::arg("d"), nb::arg("recipe"),
        nb::arg("c").none() = nb::none(), nb::arg("stream") = 0,
        "d = a b^T (+ c) with the recipe's scaling: a [M, K] and b [N, K] "
        "FP8 codes, their scales, d [M, N] of the recipe's out type.");
  m.def("gemm_launch_seconds", &gemmLaunchSeconds, nb::arg("a"),
        nb::arg("a_scale"), nb::arg("b"), nb::arg("b_scale"), nb::arg("d"),
        nb::arg("recipe"), nb::arg("stream"), nb::arg("iters"),
        "Host seconds per fp8::gemm call from C++ (packed row-major scales; "
        "a benchmark of the call overhead).");
  m.def(
      "amax_history_bytes",
      [](int64_t length) {
        DelayedScaling d;
        d.historyLength = length;
        throwIfError(checkDelayedScaling(d), "fp8kit.amax_history_bytes");
        return amaxHistoryBytes(length);
      },
      nb::arg("length"),
      "Bytes of a delayed-scaling amax history state of `length` values.");
  m.def("device", &deviceInfo,
        "The runtime's GPU (FP8_DEVICE); RuntimeError where there is none.");
}

} // namespace fp8::python
