//===- FP8Dialect.td - The fp8 dialect ---------------------*- tablegen -*-===//
//
// The dialect definition, included by the enum, attribute and op files.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8DIALECT_TD
#define FP8_DIALECT_FP8DIALECT_TD

include "mlir/IR/DialectBase.td"

def FP8_Dialect : Dialect {
  let name = "fp8";
  let cppNamespace = "::mlir::fp8";
  let summary = "Scaled FP8 matrix multiplication recipes";
  let description = [{
    The `fp8` dialect states how a model multiplies in FP8: which element
    format each tensor is quantized to (`f8E4M3FN`, `f8E5M2`), at which
    granularity its scales are taken (per tensor, per row or column, 1x128
    tiles, 128x128 blocks, MX 1x32 blocks with UE8M0 scales), whether the
    scales come from the tensor itself (current scaling) or from an amax
    history (delayed scaling), and how often the tensor-core partial sums are
    promoted into FP32. The recipe is data: attributes carry it, ops
    (`fp8.quantize`, `fp8.dequantize`, `fp8.scaled_matmul`,
    `fp8.grouped_scaled_matmul`) use it, and verifiers reject every
    combination that no kernel could compute.

    Every attribute maps one-to-one onto the plain C++ types of
    `core/Recipe.h` and `core/KernelSpec.h` (helpers in
    `dialect/FP8Attrs.h`), and the verifiers' rules are the functions of
    `core/RecipeRules.h`, which the runtime also calls before a launch.

    Granularity is stated relative to a tensor as it is stored: a `br x bc`
    block spans `br` elements of dimension 0 and `bc` of dimension 1 (the
    last two dimensions of a rank-3 stack of groups, whose leading dimension
    the scale tensor keeps). An `[R, C]` tensor has an
    `[ceil(R / br), ceil(C / bc)]` scale tensor, 1 where the block is whole.
    A scale dequantizes: `x ~ q * scale`. GEMM operands follow the `D = A * B^T` convention: A is
    logically `[M, K]`, B `[N, K]`; `k_major` stores them so, `mn_major`
    stores A as `[K, M]` and B as `[K, N]`.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The discardable attributes the pipeline reads (fp8.recipe on matmuls and
  // functions, fp8.target on modules; fp8.weight and fp8.amax_history on
  // function arguments) are checked wherever they appear.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Adds the attributes; defined in FP8Attrs.cpp, where their storage
    /// classes are complete.
    void registerAttributes();
  }];
}

#endif // FP8_DIALECT_FP8DIALECT_TD
