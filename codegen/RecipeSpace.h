//===- RecipeSpace.h - The space of dense GEMM recipes, enumerated --------===//
//
// Every recipe a dense scaled GEMM can state, along each axis the dialect
// has: the operands' formats, granularities, scale formats and layouts, the
// promotion interval and the result type. The axes are listed here and
// nowhere else; test/codegen/RecipeSpaceTest.cpp walks the whole product
// (every point the dialect's verifier accepts is either generated with
// constants that match it or refused by --fp8-verify-target's
// checkTargetRecipe) and the GPU tests run one point of every class the
// sm_90a target accepts against the oracle.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_RECIPESPACE_H
#define FP8_CODEGEN_RECIPESPACE_H

#include "core/KernelSpec.h"

#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// One recipe of a dense scaled GEMM, operands as stored.
struct RecipePoint {
  OperandSpec a, b;
  std::optional<int64_t> promotionInterval; ///< nullopt: no promotion
  DType out = DType::BF16;
};

/// The values of each axis.
struct RecipeAxes {
  std::vector<DType> formats;
  /// Block shapes (rows x cols as stored; Granularity::kWhole for whole).
  std::vector<std::pair<int64_t, int64_t>> blocks;
  std::vector<ScaleFormat> scaleFormats;
  std::vector<Layout> layouts;
  std::vector<std::optional<int64_t>> intervals;
  std::vector<DType> outs;
};

/// The axes: both FP8 formats; per-tensor, per-row, per-column, 1x128,
/// 128x1, 128x128, MX's 1x32 and 32x1, 1x64, 1x256, 64x64; every scale
/// format; both layouts; no promotion and 32, 64, 96, 128, 160, 192, 256,
/// 384, 512; bf16, f16 and f32 results.
const RecipeAxes &recipeAxes();

/// The product of the axes (both operands range independently).
std::vector<RecipePoint> recipeSpace();

/// The point as the generator sees it after --fp8-verify-target: MN-major
/// operands transposed to K-major, their scale blocks with them.
RecipePoint kMajorView(const RecipePoint &p);

/// The kernel spec of `p` (K-major) for an M x N x K problem on `arch`,
/// without a tile.
KernelSpec recipeSpec(const RecipePoint &p, Arch arch, int64_t m, int64_t n,
                      int64_t k);

/// "A e4m3fn 1x128:f32 k_major, B ..., p128 -> bf16".
std::string describe(const RecipePoint &p);

/// The code-path class of a K-major point: how each operand's scales enter
/// the kernel (constant, per row or column, along K; UE8M0 bytes or
/// floats), the promotion schedule (none, within a k-block, every few
/// k-blocks, at run-time steps) and the result type. Points of one class
/// take the same paths through the generated kernel but for the MMA's
/// operand formats.
std::string recipeClass(const RecipePoint &kMajor);

/// One K-major point of every class that `arch` accepts (the dialect's
/// rules and checkTargetRecipe), the classes' format pairs rotating through
/// the four: what the GPU tests run against the oracle.
std::vector<RecipePoint> recipeSample(Arch arch);

} // namespace fp8

#endif // FP8_CODEGEN_RECIPESPACE_H
