//===- Elementwise.h - Quantize, transpose and elementwise kernels -*- C++ -*-//
//
// The plan's non-GEMM kernels, as data and as CUDA: an ElementwiseSpec says
// what one step computes, emitElementwise() writes the translation unit that
// instantiates codegen/kernels/elementwise.cuh for it, and
// elementwiseLaunch() gives each entry point's grid for a shape.
//
//   - Quantize: x -> FP8 codes + scales at any granularity, current or
//     delayed (per-tensor) scaling, optionally fused with the elementwise
//     program that produces x (SwiGLU, GELU, add ... straight into FP8, one
//     pass over memory saved). Row blocks (1 x C, per-row, MX) take one
//     kernel; any other granularity three (amax, scales, codes).
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
#include "core/Recipe.h"
#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// Operations of an elementwise program (the arith/math ops they come from
/// in docs/pipeline.md).
enum class EwOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Fma,
  Neg,
  Abs,
  Maximum, ///< NaN-propagating (arith.maximumf)
  Minimum,
  MaxNum, ///< NaN-ignoring (arith.maxnumf)
  MinNum,
  Exp,
  Tanh,
  Erf,
  Sqrt,
  Rsqrt,
  Convert, ///< the operand rounded to the instruction's type (extf/truncf)
};

/// One operand: an input tensor's element, an earlier result, or a
/// constant (a float; exact in JSON and in the emitted source).
struct EwArg {
  enum class Kind : uint8_t { Input, Value, Constant };
  Kind kind = Kind::Input;
  int index = 0;
  float value = 0;

  static EwArg input(int i) { return {Kind::Input, i, 0}; }
  static EwArg result(int i) { return {Kind::Value, i, 0}; }
  static EwArg constant(float v) { return {Kind::Constant, 0, v}; }
  bool operator==(const EwArg &o) const;
};

/// One instruction: op(args) computed in FP32, rounded to `type` (f32,
/// bf16 or f16).
struct EwInstr {
  EwOp op = EwOp::Add;
  std::vector<EwArg> args;
  DType type = DType::F32;
  bool operator==(const EwInstr &o) const;
};

/// How a program input is indexed against the grid of elements the program
/// is evaluated over, [batch, rows, cols] (flat index i; cols the last
/// dimension): a bias, a norm's per-row statistic, its per-column gain.
enum class EwBroadcast : uint8_t {
  None, ///< the grid's shape: element i
  Row,  ///< a value per row, shape [batch, rows]: element i / cols
  Col,  ///< a value per column, shape [cols]: element i % cols
};

/// A straight-line program over the elements of its inputs. The result is
/// `result` (an instruction or an input). Input 0 has the grid's shape; the
/// others have it too, or broadcast along it.
struct EwProgram {
  std::vector<DType> inputs; ///< bf16, f16 or f32
  std::vector<EwInstr> instrs;
  EwArg result = EwArg::input(0);
  /// Per input; empty (the usual case): none broadcasts.
  std::vector<EwBroadcast> broadcast;

  /// How input `i` is indexed.
  EwBroadcast broadcastOf(size_t i) const {
    return i < broadcast.size() ? broadcast[i] : EwBroadcast::None;
  }
  /// True when an input broadcasts.
  bool broadcasts() const;

  /// The identity over one input of type `t`.
  static EwProgram identity(DType t);
  /// The element type of the result.
  DType resultType() const;
  bool operator==(const EwProgram &o) const;
};

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
};

/// Everything that determines one quantize, transpose or elementwise kernel.
/// Shapes are launch arguments: one kernel serves every shape.
struct ElementwiseSpec {
  AuxKind kind = AuxKind::Quantize;
  Arch arch = Arch::SM90a;
  /// Elementwise, Quantize: the value of each element. Permute,
  /// Unpermute: the identity over the rows' element type.
  EwProgram program = EwProgram::identity(DType::BF16);
  /// Elementwise, Unpermute: the output element type (Reduce: f32).
  DType out = DType::BF16;
  /// Quantize, Permute: format, granularity (over each [rows, cols]
  /// matrix; Permute: row blocks, current scaling), scaling.
  /// Transpose: the format and granularity of the input.
  QuantRecipe quant;

  /// A readable, unique C identifier: kind, format, granularity and a hash
  /// of the whole spec.
  std::string kernelName() const;
  bool operator==(const ElementwiseSpec &o) const;
};

/// Checks a program: 1..4 inputs of bf16/f16/f32, operands that exist and
/// come earlier, arities, result types f32/bf16/f16, a broadcast per input
/// (or none) with input 0 unbroadcast.
Status checkProgram(const EwProgram &p);
/// Checks a spec (its program, an FP8 format and valid recipe for quantize
/// and transpose, a bf16/f16/f32 output for elementwise).
Status checkElementwiseSpec(const ElementwiseSpec &spec);

/// True when a quantize spec takes the one-kernel row path (block rows of 1,
/// current scaling).
bool quantizeUsesRowPath(const ElementwiseSpec &spec);
/// True when a quantize spec takes the one-kernel column path (R x 1 blocks,
/// R > 1 and not whole: 128x1; current scaling).
bool quantizeUsesColumnPath(const ElementwiseSpec &spec);
/// True when a quantize spec takes the one-kernel tile path: R x C blocks,
/// R > 1, C from 8 to 256 dividing 256 (128x128; current scaling;
/// codegen/kernels/elementwise_params.h, tile_path).
bool quantizeUsesTilePath(const ElementwiseSpec &spec);
/// Any of them: one kernel, no amax scratch.
bool quantizeIsOnePass(const ElementwiseSpec &spec);

/// The roles of the entry points emitElementwise returns, in launch order:
/// "elementwise"; "quantize" (row, column or tile path); "amax", "scales",
/// "quantize" (block path); "codes", "scales" (transpose); "route", "quantize"
/// (permute); "unpermute"; "reduce".
std::vector<std::string> elementwiseEntries(const ElementwiseSpec &spec);

/// One GeneratedKernel per entry point (elementwiseEntries order), all with
/// the same translation unit (NVRTC compiles it once: the cache key is the
/// source). Checks the spec first.
Expected<std::vector<GeneratedKernel>>
emitElementwise(const ElementwiseSpec &spec);

/// Grid and block of one entry point.
struct AuxLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
};

/// The launch of entry `entry` over `batch` matrices of [rows, cols]
/// elements (the input's shape; for a transpose, the input's) on a GPU of
/// `smCount` SMs. Permute: `batch` is E for the route and the tokens T for
/// the gather-quantize; unpermute: [T, H], the output's.
AuxLaunch elementwiseLaunch(const ElementwiseSpec &spec, size_t entry,
                            int64_t batch, int64_t rows, int64_t cols,
                            int smCount);

/// Evaluates the program on one element: `in[i]` is input i's element
/// widened to float. Bit-identical to the device's Prog::eval.
float evalProgram(const EwProgram &p, const float *in);

/// The flat index into input `i` of the grid's element `e` (a row of `cols`
/// columns): e, e / cols or e % cols by its broadcast.
inline int64_t programIndex(const EwProgram &p, size_t i, int64_t e,
                            int64_t cols) {
  switch (p.broadcastOf(i)) {
  case EwBroadcast::Row:
    return e / cols;
  case EwBroadcast::Col:
    return e % cols;
  case EwBroadcast::None:
    break;
  }
  return e;
}

/// The sum of one row's `n` values in the order of the reduce kernel
/// (elementwise.cuh, reduce_rows_body): value j goes to thread (j /
/// kReduceChunk) % kReduceThreads, which adds its values in increasing j to +0;
/// the threads' sums are added pairwise within each warp (lanes l and l ^ 16,
/// then ^ 8, ^ 4, ^ 2, ^ 1), and the warps' sums in warp order.
float reduceRow(const float *v, int64_t n);

/// JSON forms (the plan's and the fp8.kernel attribute's).
std::string toJSON(const EwProgram &p, int indent = -1);
Expected<EwProgram> ewProgramFromJSON(const std::string &text);
std::string toJSON(const ElementwiseSpec &spec, int indent = -1);
Expected<ElementwiseSpec> elementwiseSpecFromJSON(const std::string &text);

/// "add", "exp", "convert", ...
std::string_view toString(EwOp op);
std::optional<EwOp> parseEwOp(std::string_view s);
/// "elementwise", "quantize", "transpose", "permute", "unpermute",
/// "reduce".
std::string_view toString(AuxKind k);
/// "none", "row", "col".
std::string_view toString(EwBroadcast b);
std::optional<EwBroadcast> parseEwBroadcast(std::string_view s);
std::optional<AuxKind> parseAuxKind(std::string_view s);
/// Operands an op takes.
int ewArity(EwOp op);

} // namespace fp8

#endif // FP8_CODEGEN_ELEMENTWISE_H
