//===- GroupedGemm.cpp - The runtime's grouped FP8 GEMMs (MoE) ------------===//

#include "runtime/GroupedGemm.h"
#include "runtime/CudaDriver.h"
#include "runtime/Sm90Launch.h"

#include <vector>

namespace fp8 {

namespace {

constexpr int64_t kMaxInt = (int64_t(1) << 31) - 1;

const char *formName(GemmKind k) {
  return k == GemmKind::GroupedContiguous ? "contiguous"
         : k == GemmKind::GroupedMasked   ? "masked"
                                          : "K-grouped";
}

/// The rows of A as stored: every group's (contiguous), G slabs of max_m
/// (masked) or M (along K).
int64_t storedRows(GemmKind kind, int64_t groups, int64_t m) {
  return kind == GemmKind::GroupedMasked ? groups * m : m;
}

/// The rows of D: A's, or G slabs of M (along K).
int64_t resultRows(GemmKind kind, int64_t groups, int64_t m) {
  return kind == GemmKind::GroupedK ? groups * m : storedRows(kind, groups, m);
}

/// Values of the group tensor: offsets (G + 1) or valid rows (G).
int64_t groupValues(GemmKind kind, int64_t groups) {
  return kind == GemmKind::GroupedMasked ? groups : groups + 1;
}

/// The spec of a recipe's grouped GEMM (M: the rows the tile is chosen for).
KernelSpec specOf(const GemmRecipe &r, const GroupedGemmShape &s) {
  return groupedSpec(recipeSpec(r, s.m, s.n, s.k), s);
}

/// The checks of a grouped call that the dense ones do not make.
Status checkGroupedShape(const KernelSpec &s, int64_t m,
                         const GroupedGemmTensors &t) {
  if (s.kind == GemmKind::Dense)
    return errorf("expected a grouped GEMM (contiguous or masked), found a "
                  "dense one: fp8::gemm runs those");
  if (s.groups < 1 || s.groups > kMaxInt)
    return errorf("expected G in [1, 2^31), found ", s.groups);
  if (m < 0 || resultRows(s.kind, s.groups, m) > kMaxInt)
    return errorf("expected the rows of D (", formName(s.kind), ": ",
                  s.kind == GemmKind::GroupedContiguous ? "M"
                  : s.kind == GemmKind::GroupedMasked   ? "G x max_m"
                                                        : "G x M",
                  ") in [0, 2^31), found ", resultRows(s.kind, s.groups, m));
  if (s.kind != GemmKind::GroupedK && s.groups * s.n > kMaxInt)
    return errorf("expected G x N below 2^31 (the rows of B), found ", s.groups,
                  " x ", s.n);
  if (!t.groups)
    return errorf("expected a device pointer to the group tensor (",
                  s.kind == GemmKind::GroupedMasked ? "valid rows, G int32"
                                                    : "offsets, G + 1 int32",
                  "), found null");
  if (reinterpret_cast<uintptr_t>(t.groups) % 4)
    return errorf("expected the group tensor to be 4-byte aligned (int32), "
                  "found ",
                  static_cast<const void *>(t.groups));
  if (t.scaleAGroupStride < 0 || t.scaleBGroupStride < 0)
    return errorf("expected non-negative group strides of the scales, found ",
                  t.scaleAGroupStride, " and ", t.scaleBGroupStride);
  if (s.kind != GemmKind::GroupedMasked && t.scaleAGroupStride)
    return errorf("expected no group stride for A's scales in the ",
                  formName(s.kind), " form (they cover all of A), found ",
                  t.scaleAGroupStride);
  if (s.kind == GemmKind::GroupedK && t.scaleBGroupStride)
    return errorf("expected no group stride for B's scales in the K-grouped "
                  "form (they cover all of B), found ",
                  t.scaleBGroupStride);
  return Status::ok();
}

Sm90Groups groupsOf(const KernelSpec &s, int64_t m,
                    const GroupedGemmTensors &t) {
  Sm90Groups g;
  g.data = t.groups;
  g.count = s.groups;
  g.rows = s.kind == GemmKind::GroupedMasked ? m : 0;
  g.saStride = t.scaleAGroupStride;
  g.sbStride = t.scaleBGroupStride;
  return g;
}

/// Every check that needs no GPU; `o` receives the operands as stored.
Status checkAll(const KernelSpec &s, int64_t m, const GroupedGemmTensors &t,
                Operands &o) {
  FP8_RETURN_IF_ERROR(checkGroupedShape(s, m, t));
  const int64_t rows = storedRows(s.kind, s.groups, m);
  o = operandsOf(s, rows, t, groupsOf(s, m, t));
  return checkSm90Tensors(s, rows, t, o);
}

} // namespace

KernelSpec groupedSpec(KernelSpec base, const GroupedGemmShape &shape) {
  base.kind = shape.kind;
  base.groups = shape.groups;
  base.m = shape.kind == GemmKind::GroupedMasked && shape.expectedM > 0
               ? shape.expectedM
               : shape.m;
  base.n = shape.n;
  base.k = shape.k;
  return base;
}

int64_t groupedTileRows(const KernelSpec &spec, int64_t m) {
  return spec.kind == GemmKind::GroupedMasked && spec.m > 0 ? spec.m : m;
}

Expected<KernelSpec>
groupedGemmKernelSpec(const GemmRecipe &r, const GroupedGemmShape &shape,
                      int smCount, const std::optional<TileConfig> &tile) {
  GemmOptions o;
  o.tile = tile;
  o.selectTile = true;
  KernelSpec s = specOf(r, shape);
  return gemmLaunchSpec(s, s.m, smCount, o);
}

Status checkGroupedGemmArgs(const GemmRecipe &r, const GroupedGemmShape &shape,
                            const GroupedGemmTensors &t) {
  Operands o;
  return checkGroupedGemmArgs(r, shape, t, o);
}

Status checkGroupedGemmArgs(const GemmRecipe &r, const GroupedGemmShape &shape,
                            const GroupedGemmTensors &t, Operands &o) {
  return checkAll(specOf(r, shape), shape.m, t, o);
}

Status groupedGemm(const KernelSpec &spec, int64_t m,
                   const GroupedGemmTensors &t, CUstream stream,
                   const GemmOptions &options, GemmReport *report) {
  if (spec.arch != Arch::SM90a)
    return errorf("expected a kernel spec for sm_90a (the runtime launches "
                  "Hopper kernels), found one for ",
                  toString(spec.arch));
  Operands o;
  FP8_RETURN_IF_ERROR(checkAll(spec, m, t, o));
  if (m == 0)
    return Status::ok();
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  if (options.checkExtents)
    FP8_RETURN_IF_ERROR(checkDeviceExtent(
        *(*dev)->driver, t.groups, groupValues(spec.kind, spec.groups) * 4,
        "the group tensor"));
  // The tile is chosen for the rows a group is expected to hold (masked)
  // or for all rows (contiguous; along K, M).
  const int64_t hint = groupedTileRows(spec, m);
  const char *source = "";
  Expected<KernelSpec> s =
      gemmLaunchSpec(spec, hint, **dev, stream, options, &source);
  if (!s)
    return s.status();
  FP8_RETURN_IF_ERROR(launchSm90(**dev, *s,
                                 storedRows(spec.kind, spec.groups, m), t, o,
                                 stream, options, report));
  if (report)
    report->tileSource = source;
  return Status::ok();
}

Status groupedGemm(const GemmRecipe &r, const GroupedGemmShape &shape,
                   const GroupedGemmTensors &t, CUstream stream,
                   const GemmOptions &options, GemmReport *report) {
  GemmOptions o = options;
  o.selectTile = true;
  return groupedGemm(specOf(r, shape), shape.m, t, stream, o, report);
}

Status checkGroupValues(const GroupedGemmShape &shape, const int32_t *groups,
                        int64_t count) {
  const bool contiguous = shape.kind != GemmKind::GroupedMasked;
  const bool alongK = shape.kind == GemmKind::GroupedK;
  const int64_t end = alongK ? shape.k : shape.m;
  const int64_t want = groupValues(shape.kind, shape.groups);
  if (count != want)
    return errorf("expected ", want, " group values (",
                  contiguous ? "offsets, G + 1" : "valid rows, G", "), found ",
                  count);
  for (int64_t g = 0; g < count; ++g) {
    const int64_t v = groups[g];
    if (contiguous) {
      const int64_t prev = g == 0 ? 0 : groups[g - 1];
      if (g == 0 && v != 0)
        return errorf("expected offsets[0] == 0, found ", v);
      if (v < prev || v > end)
        return errorf("expected offsets[", g, "] in [", prev, ", ", end,
                      "] (non-decreasing, at most ", alongK ? "K" : "M",
                      "), found ", v);
      if (alongK && v % 128 != 0)
        return errorf("expected offsets[", g,
                      "] to be a multiple of 128 (a group along K starts at a "
                      "scale block), found ",
                      v);
    } else if (v < 0 || v > shape.m) {
      return errorf("expected valid_rows[", g, "] in [0, ", shape.m,
                    "] (max_m), found ", v);
    }
  }
  return Status::ok();
}

Status checkGroupTensor(const GroupedGemmShape &shape, const int32_t *groups,
                        CUstream stream) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  const CudaDriver &d = *(*dev)->driver;
  const int64_t count = groupValues(shape.kind, shape.groups);
  FP8_RETURN_IF_ERROR(
      checkDeviceExtent(d, groups, count * 4, "the group tensor"));
  FP8_RETURN_IF_ERROR(waitStream(stream, 60.0, "the group tensor's producer"));
  std::vector<int32_t> host(static_cast<size_t>(count));
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuMemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(groups),
                             size_t(count) * 4),
              "cuMemcpyDtoH(group tensor)"));
  return checkGroupValues(shape, host.data(), count);
}

} // namespace fp8
