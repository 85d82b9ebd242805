//===- FP8Attrs.td - fp8 dialect attributes ----------------*- tablegen -*-===//
//
// The recipe vocabulary as attributes: granularity, scaling, the recipe of
// one tensor and of one GEMM. Each maps one-to-one onto a type of
// core/Recipe.h (helpers in dialect/FP8Attrs.h).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8ATTRS_TD
#define FP8_DIALECT_FP8ATTRS_TD

include "dialect/FP8Enums.td"
include "mlir/IR/AttrTypeBase.td"

class FP8_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FP8_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Granularity
//===----------------------------------------------------------------------===//

def FP8_GranularityAttr : FP8_Attr<"Granularity", "granularity"> {
  let summary = "one scale per block of rows x cols elements";
  let description = [{
    One scale factor per block of `rows` x `cols` elements of a tensor as it
    is stored (`rows` along dimension 0, `cols` along dimension 1; the last
    two dimensions of a rank-3 stack of groups), plus the format of the
    scales. A block dimension is a positive size or `whole` (the whole
    dimension). Edge blocks may be partial: a `[R, C]` tensor has a
    `[ceil(R / rows), ceil(C / cols)]` scale tensor, 1 where the block is
    whole.

    | Spelling | Block | Used for |
    |---|---|---|
    | `per_tensor` | whole x whole | classic FP8 |
    | `per_row` | 1 x whole | per-token activations, per-channel weights |
    | `per_column` | whole x 1 | |
    | `1x128` | 1 x 128 | DeepSeek-V3 activation tiles |
    | `128x128` | 128 x 128 | DeepSeek-V3 weight blocks |
    | `mx` = `1x32:ue8m0` | 1 x 32, UE8M0 | OCP MX |
    | `128xwhole`, `wholex128` | general form | |

    `:f32_pow2` or `:ue8m0` after the block selects the scale format (the
    default is `f32`).

    ```mlir
    #fp8.granularity<1x128>
    #fp8.granularity<per_row:f32_pow2>
    #fp8.granularity<mx>            // printed as #fp8.granularity<1x32:ue8m0>
    ```
  }];
  let parameters = (ins
    "int64_t":$rows,
    "int64_t":$cols,
    EnumParameter<FP8_ScaleFormat>:$scale
  );
  // A custom parser: `1x128` lexes as the integer `1` and the identifier
  // `x128`, and `wholex128` as one identifier, which no declarative format
  // reads. The spelling is codegen's (fp8::parseGranularity), the one JSON
  // plans use, so the parser reassembles the tokens and calls it.
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when both block dimensions are whole.
    bool isPerTensor() const {
      return getRows() == 0 && getCols() == 0;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Scaling
//===----------------------------------------------------------------------===//

class FP8_EnumParameterWithDefault<EnumAttrInfo info, string value>
    : EnumParameter<info> {
  let defaultValue = value;
}

def FP8_ScalingAttr : FP8_Attr<"Scaling", "scaling"> {
  let summary = "current or delayed scaling";
  let description = [{
    `current`: a scale comes from the amax of its block now.

    `delayed`: the amax is read off a history of the last `history` measured
    amax values (`algo = max` takes the largest, `most_recent` the last); a
    new amax is measured every `interval` steps and appended, dropping the
    oldest; the scale is divided by `2^margin` for headroom. Defaults:
    `history = 16`, `interval = 1`, `margin = 0`, `algo = max`; parameters
    equal to their default are not printed. Delayed scaling keeps one
    history per tensor, so it needs `per_tensor` granularity.

    ```mlir
    #fp8.scaling<current>
    #fp8.scaling<delayed, history = 1024, margin = 1>
    ```
  }];
  let parameters = (ins
    EnumParameter<FP8_ScalingMode>:$mode,
    DefaultValuedParameter<"int64_t", "16">:$history,
    DefaultValuedParameter<"int64_t", "1">:$interval,
    DefaultValuedParameter<"int64_t", "0">:$margin,
    FP8_EnumParameterWithDefault<FP8_AmaxAlgo,
                                 "::mlir::fp8::AmaxAlgo::Max">:$algo
  );
  let assemblyFormat = [{
    `<` $mode (`,` struct($history, $interval, $margin, $algo)^)? `>`
  }];
  let genVerifyDecl = 1;
  // DefaultValuedAttr<FP8_ScalingAttr, "<mode>"> builds its default so.
  let constBuilderCall =
      "::mlir::fp8::ScalingAttr::get($_builder.getContext(), $0)";
  let builders = [
    AttrBuilder<(ins "ScalingMode":$mode), [{
      return $_get($_ctxt, mode, 16, 1, 0, AmaxAlgo::Max);
    }]>
  ];
  let extraClassDeclaration = [{
    /// True for delayed scaling.
    bool isDelayed() const { return getMode() == ScalingMode::Delayed; }
  }];
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

def FP8_QuantRecipeAttr : FP8_Attr<"QuantRecipe", "quant"> {
  let summary = "how one tensor is quantized";
  let description = [{
    An FP8 element format, a granularity and a scaling mode (current when
    omitted): the recipe of one tensor, `fp8::QuantRecipe` in C++.

    ```mlir
    #fp8.quant<f8E4M3FN, <1x128>>
    #fp8.quant<f8E5M2, <per_tensor>, <delayed, history = 1024>>
    ```
  }];
  let parameters = (ins
    "::mlir::Type":$format,
    "GranularityAttr":$granularity,
    DefaultValuedParameter<"ScalingAttr",
      "ScalingAttr::get($_ctxt, ScalingMode::Current)">:$scaling
  );
  let assemblyFormat = "`<` $format `,` $granularity (`,` $scaling^)? `>`";
  let genVerifyDecl = 1;
}

def FP8_RecipeAttr : FP8_Attr<"Recipe", "recipe"> {
  let summary = "the FP8 recipe of one GEMM";
  let description = [{
    The recipe of `D = A * B^T`: how A and B are quantized, the promotion
    interval (K elements between promotions of the tensor-core partial sums
    into FP32; absent = tensor-core accumulation only) and the result type
    (`bf16`, the default, or `f32`). It annotates a high-precision matmul
    that a pass turns into `fp8.quantize` + `fp8.scaled_matmul`, so it names
    no layout: its granularities are stated in the logical frame, A as
    `[M, K]` and B as `[N, K]` (the pass transposes a block for an operand
    it stores MN-major). The GEMM rules of `fp8.scaled_matmul` that need no
    shapes apply (MX pairing, K blocks, promotion interval).

    ```mlir
    // DeepSeek-V3: 1x128 activation tiles, 128x128 weight blocks,
    // promotion into FP32 every 128 K elements.
    #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>,
                promotion_interval = 128>
    ```
  }];
  let parameters = (ins
    "QuantRecipeAttr":$a,
    "QuantRecipeAttr":$b,
    OptionalParameter<"std::optional<int64_t>">:$promotion_interval,
    DefaultValuedParameter<"::mlir::Type", "BFloat16Type::get($_ctxt)">:$out
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// GEMM kernel spec
//===----------------------------------------------------------------------===//

def FP8_GemmSpecAttr : FP8_Attr<"GemmSpec", "gemm"> {
  let summary = "the spec of one generated FP8 GEMM kernel";
  let description = [{
    Everything that determines one GEMM kernel and its launch: the target,
    the problem (shape, operand formats, layouts and granularities as
    stored, promotion interval, result type) and the tile configuration.
    The attribute holds codegen's `KernelSpec` (`core/KernelSpec.h`) itself:
    `--fp8-select-config` derives it from the matmul once, with its tile,
    `--fp8-outline-kernels` names it, and the plan export and the CUDA
    export hand it to codegen and the runtime as it is.

    Its text is a dictionary with the field names and spellings of the
    plan's kernel specs, read by the same reader and held to the same
    ranges (`promotion_interval = 0`: tensor-core accumulation only,
    `m = -1`: M known at launch; fields with a default may be left out).

    ```mlir
    #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128", layout = "k_major"},
               arch = "sm_90a", b = {format = "e4m3fn", granularity = "128x128",
               layout = "k_major"}, k = 7168, m = -1, n = 4096, out = "bf16",
               promotion_interval = 128,
               tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>
    ```
  }];
  let parameters = (ins "::fp8::KernelSpec":$spec);
  let hasCustomAssemblyFormat = 1;
}

#endif // FP8_DIALECT_FP8ATTRS_TD
