//===- Sm90Launch.h - Launching one sm_90a GEMM kernel ----------*- C++ -*-===//
//
// What fp8::gemm (runtime/Gemm.h) and fp8::groupedGemm (runtime/
// GroupedGemm.h) share below their own argument checks: the operands'
// geometry as stored, the pointer and alignment checks, the driver's extent
// checks, the kernel variant and its TMA descriptors, the grid, the kernel
// parameter and the launch (the operands and their checks in
// Sm90Operands.cpp, the rest in Sm90Launch.cpp). Internal to runtime/.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_SM90LAUNCH_H
#define FP8_RUNTIME_SM90LAUNCH_H

#include "core/KernelSpec.h"
#include "core/Status.h"
#include "runtime/CudaDriver.h"
#include "runtime/Gemm.h"

#include <cstdint>

namespace fp8 {

/// The dense spec of a recipe's GEMM (the runtime launches sm_90a kernels);
/// its tile is left to be chosen.
KernelSpec recipeSpec(const GemmRecipe &r, int64_t m, int64_t n, int64_t k);

/// One group's scale tensor as stored: [rows, cols] with element strides.
struct ScaleGeometry {
  int64_t rows = 0, cols = 0, ldOuter = 0, ldK = 0;
};

/// The groups of a grouped launch; a dense launch has one group and no
/// group tensor.
struct Sm90Groups {
  const int32_t *data = nullptr; ///< offsets [G + 1] or valid rows [G]
  int64_t count = 1;             ///< G
  int64_t rows = 0;              ///< masked: rows per group (max_m)
  /// Elements between consecutive groups' scales (resolved: never 0 for a
  /// stack of groups). A's only in the masked form.
  int64_t saStride = 0, sbStride = 0;
};

/// The operands of one launch as stored: rows and columns (A: all groups'
/// rows, B: all groups' stacked [N, K] matrices; along K both are shared),
/// D's rows and columns, pitches in elements, the output's element size
/// (1 for the codes of a quantizing epilogue), and one group's scale
/// geometry.
struct Operands {
  int64_t ar = 0, ac = 0, br = 0, bc = 0, dRows = 0;
  int64_t lda = 0, ldb = 0, ldd = 0, ldc = 0, ob = 0;
  /// D's columns: N, or a quantizing epilogue's (outCols), and then the
  /// geometry of D's scales.
  int64_t dCols = 0;
  ScaleGeometry sa, sb, sd;
  Sm90Groups groups;
};

/// Checks with the driver that [p, p + bytes) lies in one device
/// allocation; errors name `what`.
Status checkDeviceExtent(const CudaDriver &d, const void *p, int64_t bytes,
                         const char *what);

/// The operands of `s` with `m` rows of A as stored (a grouped GEMM: every
/// group's rows; masked, G * max_m; along K, M) and the groups of `g`,
/// whose scale strides are resolved here (0: packed).
Operands operandsOf(const KernelSpec &s, int64_t m, const GemmTensors &t,
                    const Sm90Groups &g = {});

/// The checks of one launch that need no GPU: M, N and K in range, the
/// pointers, the pitches and the alignments TMA needs.
Status checkSm90Tensors(const KernelSpec &s, int64_t m, const GemmTensors &t,
                        const Operands &o);

/// Asks the driver whether every buffer is device memory as large as the
/// shape needs.
Status checkExtents(const CudaDriver &d, const KernelSpec &s,
                    const GemmTensors &t, const Operands &o);

/// Launches the checked spec `s` (tile chosen) over `m` rows of A as
/// stored, on `stream`.
Status launchSm90(const CudaDevice &dev, const KernelSpec &s, int64_t m,
                  const GemmTensors &t, const Operands &o, CUstream stream,
                  const GemmOptions &options, GemmReport *report);

} // namespace fp8

#endif // FP8_RUNTIME_SM90LAUNCH_H
