//===- Elementwise.h - Quantize, transpose and elementwise kernels -*- C++ -*-//
//
// The plan's non-GEMM kernels, as data and as CUDA: an ElementwiseSpec says
// what one step computes, emitElementwise() writes the translation unit that
// instantiates codegen/kernels/elementwise.cuh for it, and
// elementwiseLaunch() (ElementwiseGrid.cpp) gives each entry point's grid
// for a shape.
//
//   - Quantize: x -> FP8 codes + scales at any granularity, current or
//     delayed (per-tensor) scaling, optionally fused with the elementwise
//     program that produces x (SwiGLU, GELU, add ... straight into FP8, one
//     pass over memory saved). Row blocks (1 x C, per-row, MX) take one
//     kernel; per-tensor blocks two (amax, codes; one of them makes the
//     scale); any other granularity three (amax, scales, codes).
//   - Elementwise: out = program(inputs) in bf16, f16 or f32.
//   - Transpose: FP8 codes [R, C] -> [C, R] with their scales (the Hopper
//     on-demand transpose of K-major-only FP8 operands).
//   - Reduce: the f32 sum of a program over each row (a norm's statistics),
//     in one stated order (reduceRow).
//
// A program is a straight-line list of float operations over the inputs,
// each rounded to its element type; the device code and the CPU oracle
// (evalProgram) run the same functions of codegen/kernels/fp8_math.h, so they
// agree bit for bit. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_ELEMENTWISE_H
#define FP8_CODEGEN_ELEMENTWISE_H

#include "codegen/GeneratedKernel.h"
#include "core/EwProgram.h"
#include "core/KernelSpec.h"
#include "core/Recipe.h"
#include "core/RecipeRules.h"
#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fp8 {

/// What an auxiliary (non-GEMM) kernel does.
enum class AuxKind : uint8_t {
  Elementwise,
  Quantize,
  Transpose,
  /// MoE: route tokens to experts (ids -> offsets, positions, rows) and
  /// gather their rows into expert order, quantized (row blocks) in the
  /// same pass.
  Permute,
  /// MoE: each token's expert rows, weighted and summed back.
  Unpermute,
  /// The sum of the program over each row, in f32 ([batch, rows, cols] ->
  /// [batch, rows]; reduceRow's order): an RMSNorm's sum of squares, a
  /// LayerNorm's sums.
  Reduce,
  /// The rows of two [rows, cols] matrices in alternating blocks, [2 rows,
  /// cols] (a gate and an up projection's weights, for one GEMM whose
  /// epilogue pairs them: KernelSpec::epilogue); the block is a launch
  /// value (EwParams::scaleCols).
  Interleave,
};

/// Everything that determines one quantize, transpose or elementwise kernel.
/// Shapes are launch arguments: one kernel serves every shape.
struct ElementwiseSpec {
  AuxKind kind = AuxKind::Quantize;
  Arch arch = Arch::SM90a;
  /// Elementwise, Quantize: the value of each element. Permute,
  /// Unpermute: the identity over the rows' element type.
  EwProgram program = EwProgram::identity(DType::BF16);
  /// Elementwise, Unpermute, Interleave: the output element type (Reduce:
  /// f32; Interleave: the rows').
  DType out = DType::BF16;
  /// Quantize, Permute: format, granularity (over each [rows, cols]
  /// matrix; Permute: row blocks, current scaling), scaling.
  /// Transpose: the format and granularity of the input.
  QuantRecipe quant;
  /// Quantize: when set, the program's last input is no tensor but its
  /// row's sum of this program (over the program's other inputs, which it
  /// takes in the same order and types), in reduceRow's order: an RMSNorm's
  /// sum of squares computed by the kernel that normalizes and quantizes, so
  /// the row is read once and the sums never reach memory. Row blocks of 8
  /// to 256 columns (a power of two) or whole rows, current scaling.
  std::optional<EwProgram> rowSum;
  /// Quantize: the codes and scales written transposed, [batch, cols, rows]
  /// and [batch, scaleCols, scaleRows] of the input's [batch, rows, cols]:
  /// the FP8 transpose that follows the quantize (the on-demand transpose
  /// of a K-major-only operand: the weight gradients' tokens) done by the
  /// kernel that quantizes, so the codes are written once. The column path
  /// only (R x 1 blocks, current scaling), whose blocks become 1 x R.
  bool transposed = false;
  /// Quantize: the amax of each matrix is given, not computed
  /// (EwParams::scaleIn: [batch] f32), so x is read once: the GEMM whose
  /// epilogue wrote x computed it (KernelSpec::amaxOut). Per-tensor blocks
  /// with current scaling; the scale is made from the amax as from a
  /// computed one, and values it does not bound saturate.
  bool amaxIn = false;

  /// A readable, unique C identifier: kind, format, granularity and a hash
  /// of the whole spec.
  std::string kernelName() const;
  bool operator==(const ElementwiseSpec &o) const;
};

/// Checks a spec (its program, an FP8 format and valid recipe for quantize
/// and transpose, a bf16/f16/f32 output for elementwise, a row sum's
/// program and granularity).
Status checkElementwiseSpec(const ElementwiseSpec &spec);

/// The tensors a step of this spec reads for its program: one per program
/// input, but for the row sum the kernel computes (ElementwiseSpec::rowSum).
size_t programTensorInputs(const ElementwiseSpec &spec);

/// The shapes of the codes and of the scales a quantize spec writes for an
/// input of `input` ([rows, cols] or [batch, rows, cols]): the input's and
/// scaleShapeFor's, or both with their last two dimensions swapped when
/// the spec writes them transposed (ElementwiseSpec::transposed).
std::pair<Shape, Shape> quantizeOutputShapes(const ElementwiseSpec &spec,
                                             const Shape &input);

/// True when a quantize spec takes the one-kernel row path (block rows of 1,
/// current scaling).
bool quantizeUsesRowPath(const ElementwiseSpec &spec);
/// True when a quantize spec takes the one-kernel column path (R x 1 blocks,
/// R > 1 and not whole: 128x1; current scaling; transposed or not).
bool quantizeUsesColumnPath(const ElementwiseSpec &spec);
/// True when a quantize spec takes the one-kernel tile path: R x C blocks,
/// R > 1, C from 8 to 256 dividing 256 (128x128; current scaling;
/// codegen/kernels/elementwise_params.h, tile_path).
bool quantizeUsesTilePath(const ElementwiseSpec &spec);
/// True when a quantize computes its rows' sums itself (rowSum): a CTA per
/// row, the reduce kernel's order (elementwise_quantize_rows.cuh,
/// quantize_rows_sum_body).
bool quantizeUsesRowSumPath(const ElementwiseSpec &spec);
/// True when a quantize reads its matrices' amax (ElementwiseSpec::amaxIn):
/// one kernel, the codes of per-tensor blocks with the scale made from it
/// (elementwise_quantize_tensor.cuh, quantize_tensor_given_amax_body).
bool quantizeReadsAmax(const ElementwiseSpec &spec);
/// Any of them: one kernel, no amax scratch.
bool quantizeIsOnePass(const ElementwiseSpec &spec);
/// True when the block path's pass 1 makes the scales itself, in its last
/// CTA (two kernels, elementwise_quantize_tensor.cuh): delayed scaling,
/// whose pass 1 has already reduced the history for its prediction. (With
/// current scaling that tail cost more than the scales kernel it saved:
/// 0.0124 -> 0.0132 ms on 1024x4096, H200,
/// docs/results/h200-2026-12-04-scales-in-pass-1/.)
bool quantizeScalesInAmaxPass(const ElementwiseSpec &spec);
/// True when the block path's codes pass makes the scales itself, every CTA
/// from pass 1's amax, the last to arrive resetting it (two kernels,
/// elementwise_quantize_tensor.cuh, tensor_codes_making_scales): per-tensor
/// current scaling.
bool quantizeScalesInCodesPass(const ElementwiseSpec &spec);
/// True when per-tensor current scaling also has the one-kernel path
/// ("resident", elementwise_quantize_tensor.cuh,
/// quantize_resident_tensor_body; it runs on the shapes of
/// fp8k::tensor_resident_path, the two passes on the others): a program
/// without a table, whose shared memory would not fit beside what the path
/// holds.
bool quantizeHasResidentPath(const ElementwiseSpec &spec);
/// True when the row path launches CTAs of kTableRowThreads (when they fill
/// the grid, elementwiseLaunch): a program with a table, in blocks of 1 x C
/// columns (the whole-row paths split a CTA of 256 among rows), on sm_90a
/// (sm_100a's ptxas spills the SwiGLU quantize at the 64 registers a
/// thread of 1024 allows). `table`: the spec has a tabulatedValue.
bool rowPathTableCtas(const ElementwiseSpec &spec, bool table);

/// The roles of the entry points emitElementwise returns, in launch order:
/// "elementwise"; "quantize" (row, column or tile path); "quantize",
/// "quantize_long_rows", "quantize_longest_rows" (row-sum path; the one of
/// fp8k::row_sum_entry runs); "amax", "scales",
/// "quantize" (block path; quantizeScalesInAmaxPass and
/// quantizeScalesInCodesPass: "amax", "quantize"; quantizeHasResidentPath:
/// "amax", "quantize", "resident", of which either the first two or the
/// last run);
/// "codes", "scales" (transpose); "count",
/// "route", "quantize" (permute); "unpermute"; "reduce"; "interleave".
std::vector<std::string> elementwiseEntries(const ElementwiseSpec &spec);

/// One GeneratedKernel per entry point (elementwiseEntries order), all with
/// the same translation unit (NVRTC compiles it once: the cache key is the
/// source). Checks the spec first.
Expected<std::vector<GeneratedKernel>>
emitElementwise(const ElementwiseSpec &spec);

/// The part of a GEMM translation unit its quantizing epilogue
/// (codegen/kernels/gemm_quantize.cuh) reads, in namespace fp8k: struct Epi
/// (the tile's `blockN` columns, the pair block, the scale block, the GEMM's
/// result type `gemmOut` and the FP8 and scale formats) and struct EpiProg
/// (the program, EpiProg::apply(in0[, in1])). The GEMM generators and
/// EmulatedEpilogueTest emit it.
std::string emitEpilogueSource(const GemmEpilogue &e, DType gemmOut,
                               int blockN);

/// Grid and block of one entry point.
struct AuxLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
};

/// The launch of entry `entry` over `batch` matrices of [rows, cols]
/// elements (the input's shape; for a transpose, the input's) on a GPU of
/// `smCount` SMs. Permute: `batch` is the routing slots T * topK for the
/// count and the route, the tokens T for the gather-quantize; unpermute:
/// [T, H], the output's. grid[0] == 0: the entry does not run on this shape
/// (the row-sum quantize has entries for rows that fit its registers and
/// one for the others). `aligned`: the tensors are aligned as the vector
/// paths need (vectorInputs 16 bytes, the output 8); the row-sum
/// quantize's entries that keep rows in registers serve aligned tensors
/// only (fp8k::row_sum_entry).
AuxLaunch elementwiseLaunch(const ElementwiseSpec &spec, size_t entry,
                            int64_t batch, int64_t rows, int64_t cols,
                            int smCount, bool aligned = true);

/// The program inputs the kernels read in 16-byte vectors where aligned
/// (Prog::aligned checks them): those read per element, not per row, by
/// the program or its row sum.
std::vector<bool> vectorInputs(const ElementwiseSpec &spec);

/// One kernel launch of a spec: the entry point, its index in
/// emitElementwise's list, and its grid.
struct ElementwiseEntryLaunch {
  std::string kernel;
  size_t entry = 0;
  AuxLaunch launch;
};

/// The launches of `spec` over `batch` matrices of [rows, cols] (the
/// input's), in order, the entries that run on this shape with their grids
/// from elementwiseLaunch (an MoE
/// step's batches differ per entry: runtime/plan/PlanKernels.h).
std::vector<ElementwiseEntryLaunch>
elementwiseLaunches(const ElementwiseSpec &spec, int64_t batch, int64_t rows,
                    int64_t cols, int smCount, bool aligned = true);

/// Evaluates the program on one element: `in[i]` is input i's element
/// widened to float. Bit-identical to the device's Prog::eval.
float evalProgram(const EwProgram &p, const float *in);

/// The values a quantizing GEMM epilogue quantizes (gemm_quantize.cuh):
/// each element of the GEMM's result `d` ([rows, n], FP32, scales applied)
/// rounded to `gemmOut`, then the program, over one input, or over the two
/// halves of each block pair (input 0 from the first pairBlock columns of
/// every 2 pairBlock, input 1 from the next); [rows, e.outCols(n)].
std::vector<float> evalEpilogue(const GemmEpilogue &e, DType gemmOut,
                                const float *d, int64_t rows, int64_t n);

/// The sum of one row's `n` values in the order of the reduce kernel
/// (elementwise.cuh, reduce_rows_body): value j goes to thread (j /
/// kReduceChunk) % kReduceThreads, which adds its values in increasing j to +0;
/// the threads' sums are added pairwise within each warp (lanes l and l ^ 16,
/// then ^ 8, ^ 4, ^ 2, ^ 1), and the warps' sums in warp order.
float reduceRow(const float *v, int64_t n);

/// JSON forms (the plan's and the fp8.kernel attribute's).
std::string toJSON(const ElementwiseSpec &spec, int indent = -1);
Expected<ElementwiseSpec> elementwiseSpecFromJSON(const std::string &text);

/// "elementwise", "quantize", "transpose", "permute", "unpermute",
/// "reduce", "interleave".
std::string_view toString(AuxKind k);
std::optional<AuxKind> parseAuxKind(std::string_view s);

} // namespace fp8

#endif // FP8_CODEGEN_ELEMENTWISE_H
