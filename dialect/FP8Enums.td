//===- FP8Enums.td - fp8 dialect enums ---------------------*- tablegen -*-===//
//
// Each enum mirrors the enum of the same name in core/Recipe.h (or
// core/KernelSpec.h) case for case; dialect/FP8Attrs.h converts.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8ENUMS_TD
#define FP8_DIALECT_FP8ENUMS_TD

include "dialect/FP8Dialect.td"
include "mlir/IR/EnumAttr.td"

def FP8_ScaleFormat : I32EnumAttr<"ScaleFormat",
    "how a scale factor is stored and rounded", [
      I32EnumAttrCase<"F32", 0, "f32">,
      I32EnumAttrCase<"F32Pow2", 1, "f32_pow2">,
      I32EnumAttrCase<"UE8M0", 2, "ue8m0">
    ]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
  let description = [{
    `f32`: any FP32 value (amax / format max). `f32_pow2`: FP32 rounded up to
    a power of two, so rescaling is exact. `ue8m0`: one exponent-only byte
    (`f8E8M0FNU`), the MX scale format. Scale tensors hold `f32` for the
    first two and `f8E8M0FNU` for `ue8m0`.
  }];
}

def FP8_ScalingMode : I32EnumAttr<"ScalingMode",
    "where the amax of a scale comes from", [
      I32EnumAttrCase<"Current", 0, "current">,
      I32EnumAttrCase<"Delayed", 1, "delayed">
    ]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
  let description = [{
    `current`: the amax of the block now. `delayed`: an amax predicted from
    a history of earlier steps, so quantization need not wait for a
    reduction over the tensor.
  }];
}

def FP8_AmaxAlgo : I32EnumAttr<"AmaxAlgo",
    "how delayed scaling reads the amax history", [
      I32EnumAttrCase<"Max", 0, "max">,
      I32EnumAttrCase<"MostRecent", 1, "most_recent">
    ]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
}

def FP8_Layout : I32EnumAttr<"Layout", "physical layout of a GEMM operand", [
      I32EnumAttrCase<"KMajor", 0, "k_major">,
      I32EnumAttrCase<"MNMajor", 1, "mn_major">
    ]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
  let description = [{
    A is logically `[M, K]` and B `[N, K]` (`D = A * B^T`). `k_major`: K is
    contiguous, A stored `[M, K]`, B stored `[N, K]`. `mn_major`: A stored
    `[K, M]`, B stored `[K, N]`.
  }];
}

def FP8_GroupMode : I32EnumAttr<"GroupMode",
    "how a grouped GEMM finds its groups", [
      I32EnumAttrCase<"Contiguous", 0, "contiguous">,
      I32EnumAttrCase<"Masked", 1, "masked">,
      I32EnumAttrCase<"AlongK", 2, "along_k">
    ]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
  let description = [{
    `contiguous`: groups are stacked along M in one A and one D, delimited by
    `G + 1` offsets. `masked`: A and D hold `maxM` rows per group, of which
    only the first `valid_rows[g]` are computed. `along_k`: groups are
    stacked along K in one A and one B (the experts' weight gradients),
    delimited by `G + 1` offsets; D holds one `[M, N]` result per group.
  }];
}

// In op formats both print as a bare keyword (`layout mn_major`,
// `contiguous(...)`); standalone, as `#fp8<layout mn_major>`.
def FP8_LayoutAttr : EnumAttr<FP8_Dialect, FP8_Layout, "layout"> {
  let assemblyFormat = "$value";
}

def FP8_GroupModeAttr : EnumAttr<FP8_Dialect, FP8_GroupMode, "group_mode"> {
  let assemblyFormat = "$value";
}

#endif // FP8_DIALECT_FP8ENUMS_TD
