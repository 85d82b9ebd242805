//===- RecipeRules.h - Target-independent rules of FP8 recipes --*- C++ -*-===//
//
// The rules a scaled FP8 GEMM and its quantization must obey on any target:
// scale shapes against operand shapes and granularity (the ceil-div rule),
// K blocks and the promotion interval, format pairs, MX pairing, grouped
// shapes, delayed-scaling parameters. One rule lives in one place: the `fp8`
// dialect's verifiers and the runtime's argument checks both call these
// functions and report their messages unchanged. Plain C++, no MLIR.
//
// Messages follow the LLVM style: lowercase, no trailing period, expected and
// actual values named.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_RECIPERULES_H
#define FP8_CODEGEN_RECIPERULES_H

#include "core/KernelSpec.h"
#include "core/Recipe.h"
#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8 {

/// A tensor shape as stored, outermost dimension first. kDynamic marks a size
/// known only at run time; checks that involve it are skipped.
using Shape = std::vector<int64_t>;

/// The K step of every FP8 MMA: a scale cannot change inside it, so K blocks
/// that vary along K and promotion intervals are multiples of it.
// NOTE: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions": wgmma with .e4m3/.e5m2 operands has shape m64nNk32 only.
// "TensorCore 5th Generation Family Instructions": tcgen05.mma
// kind::f8f6f4 and kind::mxf8f6f4 have K = 32, and "Block Scaling" with
// scale_vec::1X gives one UE8M0 scale per 32 K elements (the MX block).
inline constexpr int64_t kMmaK = 32;

/// Largest delayed-scaling margin: the scale is amax * 2^margin / format max
/// (x ~= q * scale), and an f32 scale has no room for more than 2^127.
inline constexpr int64_t kMaxMargin = 127;
/// Longest delayed-scaling amax history (a 4 MiB state) and longest update
/// interval: the kernels count both in 32-bit integers.
inline constexpr int64_t kMaxHistoryLength = int64_t(1) << 20;
inline constexpr int64_t kMaxUpdateInterval = (int64_t(1) << 31) - 1;

/// The most experts and the largest group padding of an MoE routing
/// (fp8.moe_permute, the plan's permute step): its kernel keeps one counter
/// per expert in shared memory (codegen/kernels/elementwise_params.h's
/// kMaxMoeExperts, checked equal where the runtime fills the kernel's
/// parameter).
inline constexpr int64_t kMaxMoeExperts = 1024;
inline constexpr int64_t kMaxMoeAlign = 1024;

/// "[512, 4096]", with "?" for a dynamic size.
std::string formatShape(const Shape &shape);

/// Number of scales along a dimension of `size` elements cut in blocks of
/// `block`: 1 for a whole block (whatever the size, even dynamic),
/// ceil(size / block) otherwise, kDynamic when the size is. Never overflows;
/// expects block >= 0 and size >= 0 or kDynamic.
int64_t scaleCount(int64_t block, int64_t size);

/// The scale shape of an operand stored as `operand`: [ceil(rows / br),
/// ceil(cols / bc)] for rank 2; for rank 3 (a stack of groups) the leading
/// group dimension is kept and each group is scaled on its own. Empty for any
/// other rank.
Shape scaleShapeFor(const Shape &operand, const Granularity &g);

/// The granularity in the operand's logical frame: A as [M, K], B as [N, K].
/// Unchanged for k_major; rows and columns swapped for mn_major (the swap is
/// its own inverse, so this also maps the logical frame back to storage).
Granularity logicalGranularity(const Granularity &stored, Layout layout);

/// The block extent along K of an operand stored with `layout`; kWhole when
/// its scales do not vary along K.
int64_t kBlock(const Granularity &stored, Layout layout);

/// True for MX scaling: one UE8M0 scale per 1x32 elements along K.
bool isMX(const Granularity &stored, Layout layout);

//===----------------------------------------------------------------------===//
// Rules on one quantized tensor.
//===----------------------------------------------------------------------===//

/// Block sizes are positive or kWhole. `name` names the granularity
/// ("A's granularity").
Status checkGranularity(const Granularity &g, std::string_view name);

/// Delayed-scaling parameters: history length in [1, kMaxHistoryLength],
/// update interval in [1, kMaxUpdateInterval], margin in [0, kMaxMargin].
Status checkDelayedScaling(const DelayedScaling &d);

/// Delayed scaling keeps one amax history per tensor, so it needs per-tensor
/// granularity; current scaling takes any.
Status checkScalingMode(ScalingMode mode, const Granularity &g);

/// True where a quantize can take its amax given rather than compute it
/// (a GEMM epilogue's: ElementwiseSpec::amaxIn, QuantizeTensors::amax,
/// numerics::QuantizeOptions::givenAmax): per-tensor blocks with current
/// scaling, one amax a matrix.
bool takesGivenAmax(const QuantRecipe &q);

/// The amax history of delayed scaling is [historyLength] f32 values.
Status checkAmaxHistory(const DelayedScaling &d, const Shape &history);

/// The recipe of one tensor: an FP8 format, a valid granularity, a scaling
/// mode it allows and, for delayed scaling, valid parameters. `name` names
/// the tensor.
Status checkQuantRecipe(const QuantRecipe &q, std::string_view name);

/// The scale tensor of an operand has shape scaleShapeFor(operand, g); sizes
/// that are dynamic on either side are not compared.
Status checkScaleShape(const Shape &operand, const Granularity &g,
                       const Shape &scale, std::string_view name);

/// Scales are f32 for the f32 and f32_pow2 formats, ue8m0 for ue8m0.
Status checkScaleType(const Granularity &g, DType scaleType,
                      std::string_view name);

//===----------------------------------------------------------------------===//
// Rules on a scaled GEMM D = A * B^T (+ C).
//===----------------------------------------------------------------------===//

/// Both inputs FP8 (any e4m3fn/e5m2 pair multiplies), the result bf16 or f32.
Status checkFormatPair(DType a, DType b, DType out);

/// MX granularity is on both operands or on neither: a block-scaled MMA
/// scales both.
Status checkMXPair(const OperandSpec &a, const OperandSpec &b);

/// A K block that varies along K is a multiple of kMmaK, and when both
/// operands' scales vary along K their K blocks are equal.
Status checkKBlocks(const OperandSpec &a, const OperandSpec &b);

/// The promotion interval (K elements between promotions of the tensor-core
/// partial sums into FP32; nullopt = tensor-core accumulation only):
/// a positive multiple of kMmaK when present; required when scales vary
/// along K (unless both operands are MX, whose MMA applies the scales
/// itself), and then a divisor of the K block.
Status checkPromotionInterval(std::optional<int64_t> interval,
                              const OperandSpec &a, const OperandSpec &b);

/// Every rule above that needs no shapes: the recipe of one GEMM.
Status checkGemmRecipe(const OperandSpec &a, const OperandSpec &b,
                       std::optional<int64_t> promotionInterval, DType out);

/// The arguments of one scaled GEMM as a caller holds them: what a verifier
/// sees on an op, and what the runtime sees before a launch.
struct ScaledGemmArgs {
  GemmKind kind = GemmKind::Dense;
  OperandSpec a; ///< A: [M, K] k_major, [K, M] mn_major (masked: [G, ...])
  /// B: [N, K] k_major, [K, N] mn_major (contiguous, masked: [G, ...])
  OperandSpec b;
  Shape aShape, aScaleShape, bShape, bScaleShape;
  DType aScaleType = DType::F32;
  DType bScaleType = DType::F32;
  /// D: [M, N] (masked: [G, maxM, N]; along K: [G, M, N]); C, when present,
  /// has D's type.
  Shape dShape;
  DType out = DType::BF16;
  /// Group offsets ([G + 1], contiguous and along K) or valid rows ([G],
  /// masked).
  Shape groupShape;
  std::optional<int64_t> promotionInterval;
};

/// The recipe a matmul's `#fp8.recipe` states: each operand's recipe
/// (checkQuantRecipe), bf16 or f32 out, then checkGemmRecipe over the
/// operands K-major (the recipe's logical frame).
Status checkMatmulRecipe(const MatmulRecipe &r);

/// checkGemmRecipe, then ranks, M/N/K/G consistency, scale shapes and types,
/// and the group tensor's shape.
Status checkScaledGemm(const ScaledGemmArgs &args);

} // namespace fp8

#endif // FP8_CODEGEN_RECIPERULES_H
