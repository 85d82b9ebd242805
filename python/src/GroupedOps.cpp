//===- GroupedOps.cpp - grouped_gemm on arrays ----------------------------===//
//
// fp8kit._core.grouped_gemm: the MoE grouped GEMMs (runtime/GroupedGemm.h,
// its three forms) on arrays. Every array is checked (Arrays.h) and the
// kernel's rules applied before any work; a CUDA array goes to
// fp8::groupedGemm on the stream given, a host array to the CPU oracle
// (fp8::groupedGemmOnHost), which also checks the group values.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"
#include "python/src/Bindings.h"
#include "python/src/Recipes.h"
#include "python/src/TensorOps.h"

#include "core/RecipeRules.h"
#include "runtime/GroupedGemm.h"
#include "runtime/HostOracle.h"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <optional>
#include <string>

namespace nb = nanobind;

namespace fp8::python {

namespace {

/// The scales of G stacked operands, [G, scale rows, scale cols] over each
/// group's [rows, cols], with any non-negative strides (each group's
/// row-major or column-major, groups at any distance).
void readGroupScales(const Array &s, const Array &ref, const Granularity &g,
                     int64_t groups, int64_t rows, int64_t cols,
                     int64_t &ldOuter, int64_t &ldK, int64_t &groupStride) {
  expectSameDevice(ref, s);
  expectDType(s, scaleTypeOf(g));
  expectShape(s, {groups, g.scaleRows(rows), g.scaleCols(cols)});
  if (s.elements() == 0) { // no scales (no rows): any strides, packed
    ldOuter = std::max<int64_t>(g.scaleCols(cols), 1);
    ldK = 1;
    groupStride = g.scaleRows(rows) * ldOuter;
    return;
  }
  for (int i = 0; i < 3; ++i)
    if (s.shape[size_t(i)] > 1 && s.strides[size_t(i)] <= 0)
      fail(s, "expected positive strides, found " + formatShape(s.strides) +
                  " (elements)");
  ldOuter = s.shape[1] > 1 ? s.strides[1] : 1;
  ldK = s.shape[2] > 1 ? s.strides[2] : 1;
  groupStride = groups > 1 ? s.strides[0] : 0;
}

/// fp8kit.grouped_gemm: G GEMMs of one recipe in one launch
/// (runtime/GroupedGemm.h's three forms), on the GPU or the CPU oracle.
void groupedGemmArrays(nb::handle a, nb::handle aScale, nb::handle b,
                       nb::handle bScale, nb::handle groups, nb::handle d,
                       const MatmulRecipe &mr, const std::string &kind,
                       nb::handle c, int64_t expectedM, uintptr_t stream) {
  const char *fn = "fp8kit.grouped_gemm";
  const std::optional<GemmKind> gk = parseGemmKind(kind);
  if (!gk || *gk == GemmKind::Dense)
    throw nb::value_error(("fp8kit.grouped_gemm: kind: expected "
                           "'grouped_contiguous', 'grouped_masked' or "
                           "'grouped_k', found '" +
                           kind + "'")
                              .c_str());
  const bool masked = *gk == GemmKind::GroupedMasked;
  const bool alongK = *gk == GemmKind::GroupedK;
  if (expectedM != 0 && !masked)
    throw nb::value_error(("fp8kit.grouped_gemm: expected_m: expected None "
                           "outside the masked form, found " +
                           std::to_string(expectedM))
                              .c_str());
  if (expectedM < 0)
    throw nb::value_error(("fp8kit.grouped_gemm: expected_m: expected a "
                           "positive number of rows, found " +
                           std::to_string(expectedM))
                              .c_str());
  const GemmRecipe r = gemmRecipeOf(mr, !c.is_none());
  GroupedGemmShape s;
  s.kind = *gk;
  s.expectedM = expectedM;
  GroupedGemmTensors t;
  // A: [M, K] (every group's rows; along K, every group's K) or [G, max_m,
  // K] (masked).
  const Array A = viewArg(a, fn, "a");
  expectDType(A, r.a.format);
  if (masked) {
    t.lda = expectStackedRowPitch(A);
    s.groups = A.shape[0];
    s.m = A.shape[1];
    s.k = A.shape[2];
  } else {
    t.lda = expectRowPitch(A);
    s.m = A.shape[0];
    s.k = A.shape[1];
  }
  // B: [G, N, K], one matrix a group; along K, [N, K] holding every group's
  // K.
  const Array B = viewArg(b, fn, "b");
  expectSameDevice(A, B);
  expectDType(B, r.b.format);
  if (alongK) {
    t.ldb = expectRowPitch(B);
    s.n = B.shape[0];
  } else {
    t.ldb = expectStackedRowPitch(B);
    s.n = B.shape[1];
    if (masked && B.shape[0] != s.groups)
      fail(B, "expected [G, N, K] with a's G (" + std::to_string(s.groups) +
                  "), found shape " + formatShape(B.shape));
    s.groups = B.shape[0];
  }
  if (B.shape.back() != s.k)
    fail(B, std::string("expected ") + (alongK ? "[N, K]" : "[G, N, K]") +
                " with a's K (" + std::to_string(s.k) + "), found shape " +
                formatShape(B.shape));
  // The group tensor: offsets [G + 1] or valid rows [G], int32.
  const Array GR = viewArg(groups, fn, "groups");
  expectSameDevice(A, GR);
  expectDType(GR, DType::I32);
  expectRank(GR, 1, 1);
  expectContiguous(GR);
  if (alongK) {
    if (GR.shape[0] < 2)
      fail(GR, "expected G + 1 offsets along K (G >= 1), found " +
                   std::to_string(GR.shape[0]));
    s.groups = GR.shape[0] - 1;
  } else if (GR.shape[0] != (masked ? s.groups : s.groups + 1)) {
    fail(GR, masked ? "expected b's G (" + std::to_string(s.groups) +
                          ") valid row counts, found " +
                          std::to_string(GR.shape[0])
                    : "expected G + 1 = " + std::to_string(s.groups + 1) +
                          " offsets (b holds G = " + std::to_string(s.groups) +
                          " matrices), found " + std::to_string(GR.shape[0]));
  }
  t.groups = static_cast<const int32_t *>(GR.data);
  const Array SA = viewArg(aScale, fn, "a_scale");
  if (masked)
    readGroupScales(SA, A, r.a.granularity, s.groups, s.m, s.k, t.scaleALdOuter,
                    t.scaleALdK, t.scaleAGroupStride);
  else
    readScales(SA, A, r.a.granularity, s.m, s.k, t.scaleALdOuter, t.scaleALdK);
  const Array SB = viewArg(bScale, fn, "b_scale");
  if (alongK)
    readScales(SB, A, r.b.granularity, s.n, s.k, t.scaleBLdOuter, t.scaleBLdK);
  else
    readGroupScales(SB, A, r.b.granularity, s.groups, s.n, s.k, t.scaleBLdOuter,
                    t.scaleBLdK, t.scaleBGroupStride);
  // D, and C when given: [M, N] (contiguous) or [G, M, N] (masked: M =
  // max_m; along K), of the recipe's out type, beside a.
  auto result = [&](nb::handle h, const char *name, int64_t &ld) {
    const Array R = viewArg(h, fn, name);
    expectSameDevice(A, R);
    expectDType(R, r.out);
    if (*gk == GemmKind::GroupedContiguous) {
      expectShape(R, {s.m, s.n});
      ld = expectRowPitch(R);
    } else {
      expectShape(R, {s.groups, s.m, s.n});
      ld = expectStackedRowPitch(R);
    }
    return R.data;
  };
  t.d = result(d, "d", t.ldd);
  if (r.accumulate)
    t.c = result(c, "c", t.ldc);
  t.a = A.data;
  t.b = B.data;
  t.scaleA = SA.data;
  t.scaleB = SB.data;
  Status st;
  if (A.where == Where::Host) {
    // The oracle checks the arguments, the kernel's rules and the group
    // values before it computes: each refusal is the caller's.
    {
      nb::gil_scoped_release release;
      st = groupedGemmOnHost(r, s, t);
    }
    throwIfError(st, fn);
    return;
  }
  const int smCount = expectRuntimeDevice(A, fn).smCount;
  {
    nb::gil_scoped_release release;
    st = groupedGemm(r, s, t, toStream(stream));
  }
  // fp8::groupedGemm checks before it launches; its checks are run again
  // only to raise a refusal as the caller's error (ValueError).
  if (!st) {
    throwIfError(checkGroupedGemmArgs(r, s, t), fn);
    throwIfError(groupedGemmKernelSpec(r, s, smCount, std::nullopt).status(),
                 fn);
  }
  throwIfFailed(st, fn);
}

} // namespace

void bindGroupedOps(nb::module_ &m) {
  m.def("grouped_gemm", &groupedGemmArrays, nb::arg("a"), nb::arg("a_scale"),
        nb::arg("b"), nb::arg("b_scale"), nb::arg("groups"), nb::arg("d"),
        nb::arg("recipe"), nb::arg("kind"), nb::arg("c").none() = nb::none(),
        nb::arg("expected_m") = 0, nb::arg("stream") = 0,
        "G GEMMs of one recipe in one launch (MoE experts): kind "
        "'grouped_contiguous' (a [M, K], b [G, N, K], groups offsets [G + 1], "
        "d [M, N]), 'grouped_masked' (a [G, max_m, K], groups valid rows [G], "
        "d [G, max_m, N]) or 'grouped_k' (a [M, K], b [N, K], groups offsets "
        "along K [G + 1], d [G, M, N], c optional).");
}

} // namespace fp8::python
