//===- FP8Ops.td - fp8 dialect operations ------------------*- tablegen -*-===//
//
// Quantize, dequantize, scaled GEMM, grouped scaled GEMM. Type constraints
// are declared here; the target-independent recipe rules are
// core/RecipeRules.h, called from the verifiers in FP8Ops.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_DIALECT_FP8OPS_TD
#define FP8_DIALECT_FP8OPS_TD

include "dialect/FP8Attrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class FP8_Op<string mnemonic, list<Trait> traits = []>
    : Op<FP8_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

defvar FP8_Formats = [F8E4M3FN, F8E5M2];

/// FP8 data: a matrix or a rank-3 stack of group matrices.
def FP8_FP8Tensor : TensorRankOf<FP8_Formats, [2, 3]>;
def FP8_FP8Matrix : TensorRankOf<FP8_Formats, [2]>;
/// What FP8 data is quantized from and dequantized to.
def FP8_WideTensor : TensorRankOf<[BF16, F16, F32], [2, 3]>;
/// Scales: f32 (f32, f32_pow2 formats) or f8E8M0FNU (ue8m0).
def FP8_ScaleTensor : TensorRankOf<[F32, F8E8M0FNU], [2, 3]>;
def FP8_ResultMatrix : TensorRankOf<[BF16, F32], [2]>;
def FP8_ResultTensor : TensorRankOf<[BF16, F32], [2, 3]>;
def FP8_AmaxHistory : 1DTensorOf<[F32]>;
def FP8_GroupTensor : 1DTensorOf<[I32]>;
/// MoE routing: token rows, ids, positions and weights.
def FP8_WideMatrix : TensorRankOf<[BF16, F16, F32], [2]>;
def FP8_I32Matrix : TensorRankOf<[I32], [2]>;
def FP8_F32Matrix : TensorRankOf<[F32], [2]>;
def FP8_StatsTensor : Type<
    And<[RankedTensorOf<[F32]>.predicate,
         CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getShape() == "
               "::llvm::ArrayRef<int64_t>{3}">]>,
    "tensor<3xf32> (amax, underflow count, range-collapse count)",
    "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// fp8.quantize
//===----------------------------------------------------------------------===//

def FP8_QuantizeOp : FP8_Op<"quantize", [
    Pure, AttrSizedResultSegments, AllShapesMatch<["input", "output"]>]> {
  let summary = "quantizes a tensor to FP8 with one scale per block";
  let description = [{
    Cuts `input` into blocks of the given granularity and quantizes each to
    the element type of `output` with its own scale: `scale = amax / max`
    (448 for `f8E4M3FN`, 57344 for `f8E5M2`), rounded up to a power of two
    for `f32_pow2` and `ue8m0` scales, and `output = saturate(input /
    scale)`, so that `input ~ output * scale`. The scale tensor has shape
    `[ceil(R / rows), ceil(C / cols)]` (the leading group dimension of a
    rank-3 input is kept) for `rows x cols` blocks of an `[R, C]` input,
    element type `f32` or `f8E8M0FNU` (`ue8m0`).

    With `scaling <current>` (the default) the amax is that of the block now.
    With `scaling <delayed, ...>` it is read off the amax history operand, a
    `tensor<Lxf32>` with `L` the attribute's history length; the op measures
    the amax of `input` and returns the history rolled by one with it
    appended as `new_history`. (On the steps the attribute's `interval`
    skips, the pass that schedules quantization passes the history on
    unchanged.) Delayed scaling needs `per_tensor` granularity.

    The optional `stats` result feeds training monitors: the amax of
    `input`, the number of non-zero elements that quantize to zero
    (underflow), and the number of distinct input values lost because they
    quantize to the same value as another element of their block (range
    collapse), as `f32` (counts are exact below 2^24).

    ```mlir
    // DeepSeek-V3 activations: one scale per token per 128 channels.
    %q, %s = fp8.quantize %x granularity <1x128>
        : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>

    // Per-tensor delayed scaling, with the monitor statistics.
    %q, %s, %h1, %st = fp8.quantize %x history %h0 granularity <per_tensor>
        scaling <delayed, history = 16>
        : tensor<128x4096xbf16>, tensor<16xf32>
        -> tensor<128x4096xf8E5M2>, tensor<1x1xf32>, tensor<16xf32>
           stats tensor<3xf32>
    ```
  }];
  let arguments = (ins
    FP8_WideTensor:$input,
    Optional<FP8_AmaxHistory>:$history,
    FP8_GranularityAttr:$granularity,
    DefaultValuedAttr<FP8_ScalingAttr,
                      "::mlir::fp8::ScalingMode::Current">:$scaling
  );
  let results = (outs
    FP8_FP8Tensor:$output,
    FP8_ScaleTensor:$scale,
    Optional<FP8_AmaxHistory>:$new_history,
    Optional<FP8_StatsTensor>:$stats
  );
  let assemblyFormat = [{
    $input (`history` $history^)? `granularity` $granularity
    (`scaling` $scaling^)? attr-dict
    `:` type($input) (`,` type($history)^)?
    `->` type($output) `,` type($scale) (`,` type($new_history)^)?
    (`stats` type($stats)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

def FP8_DequantizeOp : FP8_Op<"dequantize", [
    Pure, AllShapesMatch<["input", "output"]>]> {
  let summary = "multiplies FP8 data back by its block scales";
  let description = [{
    The inverse of `fp8.quantize`: `output = input * scale` of the element's
    block, in `bf16`, `f16` or `f32`. The scale tensor's shape and element
    type follow from the input's shape and the granularity as for
    `fp8.quantize`.

    ```mlir
    %w = fp8.dequantize %q scale %s granularity <128x128>
        : tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<4096x7168xbf16>
    ```
  }];
  let arguments = (ins
    FP8_FP8Tensor:$input,
    FP8_ScaleTensor:$scale,
    FP8_GranularityAttr:$granularity
  );
  let results = (outs FP8_WideTensor:$output);
  let assemblyFormat = [{
    $input `scale` $scale `granularity` $granularity attr-dict
    `:` type($input) `,` type($scale) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// fp8.transpose
//===----------------------------------------------------------------------===//

def FP8_TransposeOp : FP8_Op<"transpose", [Pure]> {
  let summary = "transposes FP8 data together with its block scales";
  let description = [{
    Swaps the last two dimensions of FP8 data and of its scale tensor: an
    `[R, C]` tensor with `rows x cols` blocks becomes a `[C, R]` tensor with
    `cols x rows` blocks (a leading group dimension is kept). The codes move
    unchanged, so the result dequantizes to the exact transpose of the input
    (partial edge blocks included). `granularity` is the input's; the
    result's is the swapped one.

    Hopper's FP8 `wgmma` reads both operands K-major, so an operand stored
    MN-major is transposed in FP8 before the GEMM (the on-demand transpose
    of the Ling 2.0 article): `--fp8-verify-target{arch=sm_90a}` inserts it.

    ```mlir
    // A weight stored [K, N] with 128x128 blocks, made K-major for sm_90a.
    %t, %ts = fp8.transpose %w scale %ws granularity <128x128>
        : tensor<7168x4096xf8E4M3FN>, tensor<56x32xf32>
        -> tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32>
    ```
  }];
  let arguments = (ins
    FP8_FP8Tensor:$input,
    FP8_ScaleTensor:$scale,
    FP8_GranularityAttr:$granularity
  );
  let results = (outs FP8_FP8Tensor:$output, FP8_ScaleTensor:$output_scale);
  let assemblyFormat = [{
    $input `scale` $scale `granularity` $granularity attr-dict
    `:` type($input) `,` type($scale) `->` type($output) `,` type($output_scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The granularity of the result: the input's, rows and columns swapped.
    GranularityAttr getResultGranularity();
  }];
}

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul
//===----------------------------------------------------------------------===//

def FP8_ScaledMatmulOp : FP8_Op<"scaled_matmul", [
    Pure, OptionalTypesMatchWith<"C has the result's type", "d", "c", "$_self">
  ]> {
  let summary = "D = (A * scale A) * (B * scale B)^T (+ C)";
  let description = [{
    Multiplies two FP8 matrices, each with its block scales, accumulating in
    FP32: `D = A * B^T (+ C)` with A logically `[M, K]`, B `[N, K]`, D
    `[M, N]` in `bf16` or `f32` (C, when given, has D's type). Any pair of
    `f8E4M3FN` and `f8E5M2` multiplies.

    Per operand: `layout` (`k_major`, the default, stores A as `[M, K]` and B
    as `[N, K]`; `mn_major` stores A as `[K, M]` and B as `[K, N]`) and
    `granularity`, stated against the operand as stored; the scale tensor's
    shape follows from both (the ceil-div rule, so K need not be a multiple
    of a K block: the last block is partial).

    `promotion_interval` is the number of K elements the tensor cores
    accumulate (in their reduced-precision accumulator, about 14 bits on
    Hopper) before the partial sum is scaled and added to the FP32
    accumulator; absent means tensor-core accumulation only. Rules:
    * when present it is a positive multiple of 32, the K step of FP8 MMAs;
    * when an operand's scales vary along K (its K block is not whole) it is
      required and divides that K block, which is itself a multiple of 32
      (no MMA can change scales inside a k32 step); if both operands' scales
      vary along K, their K blocks are equal;
    * MX (`1x32:ue8m0` along K) is on both operands or neither: a
      block-scaled MMA applies both scales itself, so MX needs no
      promotion interval (and accepts only 32).

    ```mlir
    // DeepSeek-V3: 1x128 activation tiles, 128x128 weight blocks.
    %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                           %b scale %bs granularity <128x128>
           promotion_interval 128
        : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
          tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<?x4096xbf16>

    // MX, B stored [K, N], accumulating into C.
    %d = fp8.scaled_matmul %a scale %as granularity <mx>,
                           %b scale %bs granularity <32x1:ue8m0> layout mn_major
           acc %c
        : tensor<128x4096xf8E4M3FN>, tensor<128x128xf8E8M0FNU>,
          tensor<4096x256xf8E5M2>, tensor<128x256xf8E8M0FNU> -> tensor<128x256xf32>
    ```
  }];
  let arguments = (ins
    FP8_FP8Matrix:$a,
    FP8_ScaleTensor:$a_scale,
    FP8_FP8Matrix:$b,
    FP8_ScaleTensor:$b_scale,
    Optional<FP8_ResultMatrix>:$c,
    FP8_GranularityAttr:$a_granularity,
    FP8_GranularityAttr:$b_granularity,
    DefaultValuedAttr<FP8_LayoutAttr, "::mlir::fp8::Layout::KMajor">:$a_layout,
    DefaultValuedAttr<FP8_LayoutAttr, "::mlir::fp8::Layout::KMajor">:$b_layout,
    // Not a ConfinedAttr: checkPromotionInterval (core/RecipeRules.h)
    // holds the rule, shared with the runtime, and names the bad value.
    OptionalAttr<I64Attr>:$promotion_interval
  );
  let results = (outs FP8_ResultMatrix:$d);
  // `` before an enum attribute: its printer starts with a space.
  let assemblyFormat = [{
    $a `scale` $a_scale `granularity` $a_granularity
    (`layout` `` $a_layout^)? `,`
    $b `scale` $b_scale `granularity` $b_granularity
    (`layout` `` $b_layout^)?
    (`acc` $c^)? (`promotion_interval` $promotion_interval^)? attr-dict
    `:` type($a) `,` type($a_scale) `,` type($b) `,` type($b_scale)
    `->` type($d)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op's recipe and shapes in codegen's terms, as the rules of
    /// core/RecipeRules.h (and the runtime) see them.
    ::fp8::ScaledGemmArgs getGemmArgs();
  }];
}

//===----------------------------------------------------------------------===//
// fp8.grouped_scaled_matmul
//===----------------------------------------------------------------------===//

def FP8_GroupedScaledMatmulOp : FP8_Op<"grouped_scaled_matmul", [Pure]> {
  let summary = "one scaled FP8 GEMM per group (MoE experts)";
  let description = [{
    `G` scaled GEMMs `D_g = A_g * B_g^T` sharing a recipe, one per expert,
    in one of three forms. In the first two (the experts' forward and input
    gradient) B is a `[G, N, K]` stack (`[G, K, N]` when `mn_major`) whose
    scales have a leading `G` too, and the groups split M:

    * `contiguous(%offsets)`: A `[sumM, K]` and D `[sumM, N]` stack the
      groups along M; group `g` is rows `offsets[g]` to `offsets[g + 1]`,
      given by a `tensor<(G + 1) x i32>`. A's scales cover all of A.
    * `masked(%valid_rows)`: A `[G, maxM, K]`, D `[G, maxM, N]`; only the
      first `valid_rows[g]` rows of group `g` are computed (a
      `tensor<G x i32>`); A's scales have a leading `G`.

    In the third (the experts' weight gradients, `dW_g = dY_g^T X_g`) the
    groups split K, the tokens:

    * `along_k(%offsets)`: A `[M, sumK]` and B `[N, sumK]` (`[sumK, M]`,
      `[sumK, N]` when `mn_major`, as the gradients and activations are
      stored) stack the groups along K; group `g` is K `offsets[g]` to
      `offsets[g + 1]`. D `[G, M, N]` holds one result per group (zeros for
      an empty group). The scales cover all of A and all of B, in K blocks
      of 128 (or constant along K), and the offsets are multiples of 128
      (`fp8.moe_permute ... align 128` pads the groups so): the runtime
      checks that.

    Layouts, granularities and `promotion_interval` follow the rules of
    `fp8.scaled_matmul`. With a row block larger than 1 on A, each group's
    first row is expected at a multiple of it; offsets are run-time values,
    so the runtime checks that.

    ```mlir
    %d = fp8.grouped_scaled_matmul contiguous(%offsets : tensor<9xi32>)
           %a scale %as granularity <1x128>,
           %b scale %bs granularity <128x128>
           promotion_interval 128
        : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
          tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32> -> tensor<?x4096xbf16>

    %d = fp8.grouped_scaled_matmul masked(%valid_rows : tensor<8xi32>)
           %a scale %as granularity <1x128>,
           %b scale %bs granularity <128x128>
           promotion_interval 128
        : tensor<8x256x7168xf8E4M3FN>, tensor<8x256x56xf32>,
          tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32>
          -> tensor<8x256x4096xbf16>

    %dw = fp8.grouped_scaled_matmul along_k(%offsets : tensor<9xi32>)
           %dy_t scale %dys granularity <1x128>,
           %x_t scale %xs granularity <1x128>
           promotion_interval 128
        : tensor<4096x?xf8E5M2>, tensor<4096x?xf32>,
          tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
    ```
  }];
  let arguments = (ins
    FP8_GroupModeAttr:$mode,
    FP8_GroupTensor:$groups,
    FP8_FP8Tensor:$a,
    FP8_ScaleTensor:$a_scale,
    FP8_FP8Tensor:$b,
    FP8_ScaleTensor:$b_scale,
    FP8_GranularityAttr:$a_granularity,
    FP8_GranularityAttr:$b_granularity,
    DefaultValuedAttr<FP8_LayoutAttr, "::mlir::fp8::Layout::KMajor">:$a_layout,
    DefaultValuedAttr<FP8_LayoutAttr, "::mlir::fp8::Layout::KMajor">:$b_layout,
    OptionalAttr<I64Attr>:$promotion_interval
  );
  let results = (outs FP8_ResultTensor:$d);
  // `` before an enum attribute: its printer starts with a space.
  let assemblyFormat = [{
    `` $mode `(` $groups `:` type($groups) `)`
    $a `scale` $a_scale `granularity` $a_granularity
    (`layout` `` $a_layout^)? `,`
    $b `scale` $b_scale `granularity` $b_granularity
    (`layout` `` $b_layout^)?
    (`promotion_interval` $promotion_interval^)? attr-dict
    `:` type($a) `,` type($a_scale) `,` type($b) `,` type($b_scale)
    `->` type($d)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op's recipe and shapes in codegen's terms, as the rules of
    /// core/RecipeRules.h (and the runtime) see them.
    ::fp8::ScaledGemmArgs getGemmArgs();
  }];
}

//===----------------------------------------------------------------------===//
// MoE routing: fp8.moe_permute, fp8.grouped_matmul, fp8.moe_unpermute
//===----------------------------------------------------------------------===//

def FP8_MoePermuteOp : FP8_Op<"moe_permute", [Pure]> {
  let summary = "gathers routed tokens into expert order (MoE dispatch)";
  let description = [{
    Token `t` of `x` (`[T, H]`) goes to the experts `ids[t, 0..topK)`
    (`ids`: `[T, topK]` of `i32` in `[0, experts)`, each token's distinct).
    `rows` holds the routed copies grouped by expert, experts in order and
    each expert's tokens in token order; group `e` is rows `offsets[e]` to
    `offsets[e + 1]` of the result (`offsets`: `tensor<(experts + 1) x
    i32>`), `positions[t, j]` the row token `t`'s `j`-th copy went to. With
    `align` > 1 every group is padded with zero rows to a multiple of it (Ling
    2.0's routing-map padding); `rows` then has `topK * T + experts * (align -
    1)` rows, the rows after the last group zero too.

    The grouped GEMMs take `rows` and `offsets`; `fp8.moe_unpermute` brings
    the results back with `positions`. On the runtime, the permute is one
    step that also quantizes `rows` for the GEMMs (row blocks, `1x128`) in
    the same pass.

    ```mlir
    %rows, %offsets, %positions = fp8.moe_permute %x, %ids experts 16
        : tensor<?x7168xbf16>, tensor<?x8xi32>
        -> tensor<?x7168xbf16>, tensor<17xi32>, tensor<?x8xi32>
    ```
  }];
  let arguments = (ins
    FP8_WideMatrix:$x,
    FP8_I32Matrix:$ids,
    I64Attr:$experts,
    DefaultValuedAttr<I64Attr, "1">:$align
  );
  let results = (outs
    FP8_WideMatrix:$rows,
    FP8_GroupTensor:$offsets,
    FP8_I32Matrix:$positions
  );
  let assemblyFormat = [{
    $x `,` $ids `experts` $experts (`align` $align^)? attr-dict
    `:` type($x) `,` type($ids) `->` type($rows) `,` type($offsets) `,`
    type($positions)
  }];
  let hasVerifier = 1;
}

def FP8_GroupedMatmulOp : FP8_Op<"grouped_matmul", [Pure]> {
  let summary = "one matmul per expert on its rows (before quantization)";
  let description = [{
    One matmul per group, before quantization, in the three forms of
    `fp8.grouped_scaled_matmul`, with D in `bf16` or `f32`. In the forward
    forms B is the experts' weights `[E, N, K]` (PyTorch's `[out, in]` per
    expert):

    * `contiguous(%offsets)`: `d[r] = a[r] * b[e]^T` for the rows `r` of
      group `e` (`offsets[e]` to `offsets[e + 1]`, as `fp8.moe_permute`
      gives them); A `[R, K]`, D `[R, N]`, rows outside every group zero.
    * `masked(%valid_rows)`: A `[E, maxM, K]`, D `[E, maxM, N]`; the first
      `valid_rows[e]` rows of group `e` are computed, the others are zero
      (decode: a few tokens per expert, counts from the router).

    The weight gradient takes the gradients and the activations of the
    experts' rows, both as stored (rows in expert order):

    * `along_k(%offsets)`: `d[e] = a[rows of e]^T * b[rows of e]`, A `[R, M]`
      (the gradients), B `[R, N]` (the activations), D `[E, M, N]` (PyTorch's
      `[out, in]` weight gradient per expert; zeros for an empty group).
      The offsets are multiples of 128 (`align 128` on `fp8.moe_permute`).

    Like a `linalg.matmul`, it takes the `fp8.recipe` on it or on its
    function (granularities in the GEMM's frame: along K is along the rows
    here): `--fp8-quantize-annotated` turns it into `fp8.quantize` of both
    operands and an `fp8.grouped_scaled_matmul` of the same form.

    ```mlir
    %gate = fp8.grouped_matmul contiguous(%offsets : tensor<17xi32>)
              %rows, %w_gate
        : tensor<?x7168xbf16>, tensor<16x2048x7168xbf16> -> tensor<?x2048xbf16>
    %d = fp8.grouped_matmul masked(%counts : tensor<16xi32>) %x, %w
        : tensor<16x?x7168xbf16>, tensor<16x2048x7168xbf16>
          -> tensor<16x?x2048xbf16>
    %dw = fp8.grouped_matmul along_k(%offsets : tensor<17xi32>) %dy, %h
        : tensor<?x7168xbf16>, tensor<?x2048xbf16> -> tensor<16x7168x2048xf32>
    ```
  }];
  let arguments = (ins
    FP8_GroupModeAttr:$mode,
    FP8_GroupTensor:$groups,
    FP8_WideTensor:$a,
    FP8_WideTensor:$b
  );
  let results = (outs FP8_ResultTensor:$d);
  // `` before an enum attribute: its printer starts with a space.
  let assemblyFormat = [{
    `` $mode `(` $groups `:` type($groups) `)` $a `,` $b attr-dict
    `:` type($a) `,` type($b) `->` type($d)
  }];
  let hasVerifier = 1;
}

def FP8_MoeUnpermuteOp : FP8_Op<"moe_unpermute", [Pure]> {
  let summary = "each token's expert rows, weighted and summed (MoE combine)";
  let description = [{
    `out[t] = sum over j of weights[t, j] * y[positions[t, j]]`, in FP32 in
    `j` order, rounded to the result's element type: `y` `[R, H]` the
    experts' rows, `positions` and `weights` `[T, topK]` (`i32`, `f32`; the
    positions from `fp8.moe_permute`), `out` `[T, H]`.

    ```mlir
    %y = fp8.moe_unpermute %down, %positions, %weights
        : tensor<?x7168xbf16>, tensor<?x8xi32>, tensor<?x8xf32>
        -> tensor<?x7168xbf16>
    ```
  }];
  let arguments = (ins
    FP8_WideMatrix:$y,
    FP8_I32Matrix:$positions,
    FP8_F32Matrix:$weights
  );
  let results = (outs FP8_WideMatrix:$out);
  let assemblyFormat = [{
    $y `,` $positions `,` $weights attr-dict
    `:` type($y) `,` type($positions) `,` type($weights) `->` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// fp8.interleave_rows, fp8.deinterleave_cols
//===----------------------------------------------------------------------===//

def FP8_InterleaveRowsOp : FP8_Op<"interleave_rows", [
    Pure, AllTypesMatch<["a", "b"]>
  ]> {
  let summary = "the rows of two matrices in alternating blocks";
  let description = [{
    Two `[R, C]` matrices become one `[2R, C]`: rows `[2kB, 2kB + B)` of the
    result are rows `[kB, kB + B)` of `a`, the `B` rows after them those of
    `b` (`B` is `block`, a divisor of R). The weights of a gate and an up
    projection interleaved this way make one GEMM whose output tiles hold
    each block of gate columns next to the up columns it pairs with, so
    that the GEMM's epilogue can compute `silu(gate) * up` and quantize it
    (`--fp8-fuse-epilogue`); `fp8.deinterleave_cols` separates the result's
    columns again.

    ```mlir
    %w = fp8.interleave_rows %w_gate, %w_up block 128
        : tensor<11008x4096xbf16> -> tensor<22016x4096xbf16>
    ```
  }];
  let arguments = (ins
    FP8_WideMatrix:$a,
    FP8_WideMatrix:$b,
    ConfinedAttr<I64Attr, [IntPositive]>:$block
  );
  let results = (outs FP8_WideMatrix:$result);
  let assemblyFormat = [{
    $a `,` $b `block` $block attr-dict `:` type($a) `->` type($result)
  }];
  let hasVerifier = 1;
}

def FP8_DeinterleaveColsOp : FP8_Op<"deinterleave_cols", [
    Pure, AllTypesMatch<["first", "second"]>
  ]> {
  let summary = "a matrix's columns in alternating blocks, as two matrices";
  let description = [{
    An `[R, 2C]` matrix becomes two `[R, C]`: its columns `[2kB, 2kB + B)`
    are `first`'s columns `[kB, kB + B)`, the `B` columns after them
    `second`'s. The result of a GEMM with `fp8.interleave_rows`'d weights,
    so separated, is the two GEMMs' results. The runtime runs it only inside
    the epilogue of the GEMM that produces its input, which
    `--fp8-fuse-epilogue` arranges.

    ```mlir
    %gate, %up = fp8.deinterleave_cols %gu block 128
        : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
    ```
  }];
  let arguments = (ins
    FP8_WideMatrix:$input,
    ConfinedAttr<I64Attr, [IntPositive]>:$block
  );
  let results = (outs FP8_WideMatrix:$first, FP8_WideMatrix:$second);
  let assemblyFormat = [{
    $input `block` $block attr-dict `:` type($input) `->` type($first)
  }];
  let hasVerifier = 1;
}

#endif // FP8_DIALECT_FP8OPS_TD
