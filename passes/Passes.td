//===- Passes.td - fp8 passes ------------------------------*- tablegen -*-===//
//
// Every pass of the toolkit, declared here (STYLE.md): name `fp8-<verb>-<noun>`,
// options in `let options` (kebab-case on the command line), complete
// `dependentDialects`, one .cpp per pass. The registered pipeline
// `fp8-compile` (passes/Pipelines.cpp) runs them in order; registerFP8Passes
// is called by tools/common/RegisterAll.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_PASSES_TD
#define FP8_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8FuseResidual : Pass<"fp8-fuse-residual", "ModuleOp"> {
  let summary = "folds a residual add into the matmul before it: the GEMM "
                "accumulates into the residual";
  let description = [{
    `x + matmul(a, b)`, where the matmul (`linalg.matmul`, rank 2) starts
    from zeros and the add is its only user, becomes `matmul(a, b)` with
    `x` as its init: the GEMM's epilogue adds `x` (accumulate-into-C), so
    the product never goes to memory and the add needs no kernel.

    The add is `linalg.add`, `arith.addf` on tensors, or a `linalg.generic`
    with identity maps whose body adds the two elements in the result type
    (directly, or widened to f32 and rounded back). `x` must have the
    matmul's type and be defined before it.

    Rounding: the GEMM rounds `acc + x` once, where the graph rounds the
    product and then the sum. `--verify` holds the GEMM step to the
    oracle's GEMM with the same C and the outputs to the unquantized graph.

    Left alone: a product with a second user, an add with a broadcast or
    any other operation, a matmul that already accumulates, a batched one.

    Not in `fp8-compile` unless `fuse-residual=true`: the sm_90a kernel
    reads C in its epilogue, element by element and not overlapped with
    the main loop, which costs more than the add step it saves
    (README, "Memory-bound steps").
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FP8QuantizeAnnotated : Pass<"fp8-quantize-annotated", "ModuleOp"> {
  let summary = "turns matmuls annotated with an FP8 recipe into "
                "fp8.quantize + fp8.scaled_matmul";
  let description = [{
    Every matmul-family op (`linalg.matmul` with or without indexing maps,
    `linalg.batch_matmul`, any linalg contraction with one M, N and K
    dimension and at most one batch dimension) that carries an
    `fp8.recipe = #fp8.recipe<...>` attribute, or sits in a function that
    carries one as its default, becomes:

    * an `fp8.quantize` of each operand with the recipe's format,
      granularity (stated in the logical frame, A as `[M, K]`, B as
      `[N, K]`, mapped to the operand as stored) and scaling. Activations
      are quantized on every call; an operand quantized for several matmuls
      with the same recipe is quantized once. Delayed scaling adds an amax
      history to the function (an argument marked `{fp8.amax_history}` and
      the matching result).
    * operands that are weights (function arguments marked `{fp8.weight}`)
      are quantized once, at the top of the function (a prepare step of the
      plan); constant weights (`arith.constant dense<...>`) are quantized at
      compile time into FP8 and scale constants (`fold-constants`), with the
      original kept as `fp8.source` for the reference.
    * an `fp8.scaled_matmul` (or, for batched matmuls, an
      `fp8.grouped_scaled_matmul masked` whose every group is full) with the
      recipe's promotion interval, accumulating into the matmul's init when
      that is not a zero fill.

    Unannotated ops are left alone. A recipe on an op that is not a matmul,
    operands that are not bf16/f16/f32, a result type other than the
    recipe's `out`, or shapes the recipe cannot cover are errors naming the
    op.

    ```mlir
    // Before:
    %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
           ins(%x, %w : tensor<?x4096xbf16>, tensor<11008x4096xbf16>)
           outs(%zero : tensor<?x11008xbf16>) -> tensor<?x11008xbf16>
    // After (DeepSeek recipe):
    %wq, %ws = fp8.quantize %w granularity <128x128> ...
    %xq, %xs = fp8.quantize %x granularity <1x128> ...
    %y = fp8.scaled_matmul %xq scale %xs granularity <1x128>,
                           %wq scale %ws granularity <128x128>
           promotion_interval 128 : ...
    ```
  }];
  let dependentDialects = [
    "::mlir::fp8::FP8Dialect",
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"foldConstants", "fold-constants", "bool", /*default=*/"true",
           "Quantize constant weights at compile time (else in the plan's "
           "prepare steps)">,
  ];
}

def FP8VerifyTarget : Pass<"fp8-verify-target", "ModuleOp"> {
  let summary = "checks FP8 ops against a GPU target and makes operands "
                "K-major";
  let description = [{
    Checks every `fp8.scaled_matmul` and `fp8.grouped_scaled_matmul` against
    what the target's tensor cores and TMA can do, with a diagnostic naming
    the op and the rule:

    * MX (1x32 blocks with UE8M0 scales along K) needs `sm_100a`: Hopper's
      FP8 `wgmma` has no block-scaled form;
    * K is a multiple of 16: TMA moves rows of 16-byte multiples;
    * the target's generator implements the recipe (`checkTargetRecipe`,
      codegen/Gemm.h: formats, scale blocks and formats, promotion
      interval, result type, on the K-major operands). On `sm_90a` scales
      that vary along K change at most once per 128-wide k-block, B's scale
      blocks along N are 1, whole or a multiple of 8, and any promotion
      interval that is a multiple of 32 runs (dividing the scales' K block
      when they vary along K); on `sm_100a` scales that vary along K are
      powers of two and the interval is 32 or none. A recipe accepted here
      runs as stated (test/codegen/RecipeSpaceTest.cpp walks the whole
      space); the diagnostic of one refused says what the target expects.

    FP8 `wgmma` (and the toolkit's `tcgen05` kernels) read both operands
    K-major from shared memory, so an operand stored MN-major gets an
    `fp8.transpose` (codes and scales) in front of the GEMM, which then
    reads it K-major: the on-demand transpose (of a weight, it runs once,
    in the plan's prepare steps). The module records the target as
    `fp8.target`.
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect", "::mlir::arith::ArithDialect"];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "Target architecture: sm_90a (Hopper) or sm_100a (Blackwell)">,
  ];
}

def FP8FuseEpilogue : Pass<"fp8-fuse-epilogue", "ModuleOp"> {
  let summary = "quantizes GEMM results in the GEMM's epilogue";
  let description = [{
    Where the result of an `fp8.scaled_matmul` reaches an `fp8.quantize`
    only through elementwise ops, the GEMM's epilogue can compute them and
    quantize, writing FP8 codes and scales: the high-precision result never
    reaches memory, and the elementwise-and-quantize step goes away. This
    pass finds those chains and marks their matmul `fp8.epilogue`; the
    matmul's GEMM spec then carries the epilogue (`--fp8-select-config`
    chooses a tile for it) and `--fp8-outline-kernels` folds the chain into
    the GEMM's kernel (passes/EpilogueChain.h).

    A chain is the matmul (no C), its result's only user, an elementwise op
    (`linalg.generic`, named linalg and arith/math ops, as the outliner reads
    them) reading that result and nothing else, and that op's only user, an
    `fp8.quantize` with current scaling in row blocks (`1xC` or `per_row`),
    without statistics; or the matmul and the quantize alone. The target's
    generator must have a tile that holds whole scale blocks of the result
    (`codegen/Gemm.h`, checkGemmSpec with the tile it would choose): on
    sm_90a, blocks of at most 256 columns (128 for pairs), whole rows of at
    most that; sm_100a has no quantizing epilogue.

    Gate and up projections (with `pairs`): two matmuls with the same A
    and recipe whose B are quantizes of two `[N, K]` tensors (weights) with
    the same recipe, whose results feed one elementwise op (a SwiGLU) and
    nothing else, become one GEMM over `fp8.interleave_rows` of the two
    (128-row blocks, so B's scale blocks stay whole: its blocks must divide
    128) whose result `fp8.deinterleave_cols` separates for the elementwise
    op: each output tile then holds a block of gate columns next to its up
    columns, and the epilogue computes the SwiGLU and quantizes it.

    ```mlir
    // Before (after --fp8-quantize-annotated, DeepSeek recipe):
    %gate = fp8.scaled_matmul %xq scale %xs ..., %wgq scale %wgs ...
    %up = fp8.scaled_matmul %xq scale %xs ..., %wuq scale %wus ...
    %h = linalg.generic ... ins(%gate, %up ...) { SwiGLU }
    %hq, %hs = fp8.quantize %h granularity <1x128> ...
    // After:
    %w = fp8.interleave_rows %w_gate, %w_up block 128 ...
    %wq, %ws = fp8.quantize %w granularity <128x128> ...
    %gu = fp8.scaled_matmul %xq scale %xs ..., %wq scale %ws ...
          {fp8.epilogue} : ... -> tensor<?x22016xbf16>
    %gate, %up = fp8.deinterleave_cols %gu block 128 ...
    %h = linalg.generic ... ins(%gate, %up ...) { SwiGLU }
    %hq, %hs = fp8.quantize %h granularity <1x128> ...
    ```

    Left alone: a result with a second user, a non-elementwise op on the
    way (a row sum, a transpose), an elementwise op reading another tensor
    (a residual, a bias), a quantize of delayed scaling, with statistics or
    in blocks of several rows, and scale blocks wider than any tile. Needs
    the module's `fp8.target` (run `--fp8-verify-target` first). Not in
    `fp8-compile` unless `fuse-epilogue=true`: the fused sm_90a kernels
    are verified on the CPU (the epilogue's code under the CUDA emulator,
    NVRTC) but not yet measured on a GPU.
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
  let options = [
    Option<"pairs", "pairs", "bool", /*default=*/"true",
           "Make gate and up projections that share an input one GEMM over "
           "interleaved weights">,
  ];
}

def FP8SelectConfig : Pass<"fp8-select-config", "ModuleOp"> {
  let summary = "chooses the tile configuration of every FP8 GEMM";
  let description = [{
    Derives the GEMM spec of every `fp8.scaled_matmul` (and full-batch
    grouped matmul), the one place it is derived, and gives it a tile
    configuration. Both are recorded as `fp8.gemm = #fp8.gemm<{...}>` (a
    KernelSpec, core/KernelSpec.h, with its `tile`), the tile's origin as
    `fp8.tile_source`:

    * from the tuning database `tuning-db` when it has the op's recipe: the
      entry with the same N and K and the nearest M, else the nearest shape
      (checked against the generator's rules; an illegal entry is a warning
      and falls back to the heuristic);
    * else the runtime's heuristic (codegen/Sm90Heuristics.h) for `sm-count`
      SMs.

    A dynamic M is configured for `m-hint` rows, and the plan then runs
    every M with that tile (fp8-run notes where the runtime's heuristic
    would pick another); `m-hint=0` leaves the choice to the runtime at
    launch, for the actual M (`fp8.tile_source = "runtime"`; the tile
    recorded is the one for M = 4096, which the recipe and shape must
    suit). A grouped GEMM with
    data-dependent groups (an MoE layer's experts) always leaves it to the
    runtime: its rows are the routing's. Needs the module's `fp8.target`
    (run `--fp8-verify-target` first).
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
  let options = [
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"\"\"",
           "Tuning database (JSON, docs/pipeline.md); empty: the heuristic">,
    Option<"smCount", "sm-count", "int",
           /*default=*/"::fp8::targetInfo(::fp8::Arch::SM90a).smCount",
           "SMs of the target GPU (default: an H100 SXM's, core/Target.h)">,
    Option<"mHint", "m-hint", "int64_t", /*default=*/"4096",
           "Rows a dynamic M is configured for; 0: let the runtime choose">,
  ];
}

def FP8OutlineKernels : Pass<"fp8-outline-kernels", "ModuleOp"> {
  let summary = "gives every step of the graph its kernel spec";
  let description = [{
    Attaches to every op that becomes a kernel its spec, in codegen's terms,
    as `fp8.kernel = {kind = ..., name = ..., spec = ...}`:

    * `fp8.scaled_matmul` (and full-batch grouped matmuls): its `fp8.gemm`
      spec from `--fp8-select-config`, checked by the generator, named, and
      moved into the kernel (`spec = #fp8.gemm<{...}>`);
    * `fp8.quantize`, `fp8.transpose`: an ElementwiseSpec
      (codegen/Elementwise.h);
    * elementwise ops (`linalg.generic` and named linalg ops whose maps are
      identities and iterators parallel, arith/math ops on tensors; bodies
      of arith and math float ops): an elementwise program. With
      `fuse-elementwise`, an elementwise op whose only user is an
      `fp8.quantize` is fused into it (one pass over memory saved): it is
      marked `fp8.fused_into = "<kernel>"` and the quantize kernel computes
      it.
    * With `fuse-transpose`, an `fp8.transpose` that alone reads the codes
      and scales of an `fp8.quantize` taking R x 1 blocks with current
      scaling (the weight gradients' tokens, transposed on demand for
      Hopper's K-major-only FP8 operands) is fused into it: the quantize's
      kernel writes the transposed codes and scales (`transposed` in its
      spec) and the transpose is marked `fp8.fused_into`.
    * With `amax-from-epilogue`, an `fp8.quantize` of per-tensor blocks with
      current scaling whose input is an `fp8.scaled_matmul`'s result, as
      stored (no elementwise op between), reads D's amax, which the GEMM's
      epilogue writes (`amax_out` in the GEMM's spec, `amax_in` in the
      quantize's): the quantize reads D once, not twice. Only where the
      GEMM's kernel can write it (sm_90a, a dense GEMM without a quantizing
      epilogue).

    Every other op in a function must be one the plan needs no kernel for
    (`tensor.empty`, `tensor.dim`, constants, index casts, `tensor.splat`,
    `func.return`); anything else is an error naming the op: the runtime
    could not execute it.
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
  let options = [
    Option<"fuseElementwise", "fuse-elementwise", "bool", /*default=*/"true",
           "Fuse an elementwise op into the fp8.quantize that is its only "
           "user">,
    Option<"fuseTranspose", "fuse-transpose", "bool", /*default=*/"true",
           "Fuse an fp8.transpose into the R x 1 fp8.quantize whose codes "
           "and scales it alone reads">,
    Option<"amaxFromEpilogue", "amax-from-epilogue", "bool",
           /*default=*/"true",
           "A per-tensor current-scaling fp8.quantize of a GEMM's result "
           "reads the amax the GEMM's epilogue writes">,
  ];
}

#endif // FP8_PASSES_PASSES_TD
