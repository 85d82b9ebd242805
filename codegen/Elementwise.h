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

/// A straight-line program over the elements of its inputs (all of one
/// shape). The result is `result` (an instruction or an input).
struct EwProgram {
  std::vector<DType> inputs; ///< bf16, f16 or f32
  std::vector<EwInstr> instrs;
  EwArg result = EwArg::input(0);

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
};

/// Everything that determines one quantize, transpose or elementwise kernel.
/// Shapes are launch arguments: one kernel serves every shape.
struct ElementwiseSpec {
  AuxKind kind = AuxKind::Quantize;
  Arch arch = Arch::SM90a;
  /// Elementwise, Quantize: the value of each element. Permute,
  /// Unpermute: the identity over the rows' element type.
  EwProgram program = EwProgram::identity(DType::BF16);
  /// Elementwise, Unpermute: the output element type.
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
/// come earlier, arities, result types f32/bf16/f16.
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
/// (permute); "unpermute".
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

/// JSON forms (the plan's and the fp8.kernel attribute's).
std::string toJSON(const EwProgram &p, int indent = -1);
Expected<EwProgram> ewProgramFromJSON(const std::string &text);
std::string toJSON(const ElementwiseSpec &spec, int indent = -1);
Expected<ElementwiseSpec> elementwiseSpecFromJSON(const std::string &text);

/// "add", "exp", "convert", ...
std::string_view toString(EwOp op);
std::optional<EwOp> parseEwOp(std::string_view s);
/// "elementwise", "quantize", "transpose".
std::string_view toString(AuxKind k);
std::optional<AuxKind> parseAuxKind(std::string_view s);
/// Operands an op takes.
int ewArity(EwOp op);

} // namespace fp8

#endif // FP8_CODEGEN_ELEMENTWISE_H
