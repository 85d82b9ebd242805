//===- EwProgram.h - Elementwise programs, as data --------------*- C++ -*-===//
//
// A program is a straight-line list of float operations over the elements of
// its inputs, each rounded to its element type: what a fused elementwise
// step, a quantize's producer or a GEMM's epilogue computes per element
// (SwiGLU, GELU, a norm's scaling, a residual add). This is the data and its
// rules and JSON; codegen/Elementwise.h writes it as CUDA and evaluates it on
// the CPU (evalProgram), with the same functions (codegen/kernels/fp8_math.h)
// so that both agree bit for bit. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CORE_EWPROGRAM_H
#define FP8_CORE_EWPROGRAM_H

#include "core/Recipe.h"
#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8 {

/// Most input tensors a program reads (the kernels' EwParams holds as many,
/// codegen/kernels/elementwise_params.h).
inline constexpr int kMaxProgramInputs = 4;

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

/// SwiGLU as a Llama-style feed-forward block writes it (examples/mlp.mlir,
/// read by the passes): in0 / (1 + e^-in0) * in1 over two bf16 inputs (the
/// gate and the up projection), in f32, rounded to bf16. The benches and the
/// tests of its kernels take this one.
EwProgram swigluProgram();
/// RMSNorm as Llama writes it (examples/llama-layer.mlir), in the order
/// the passes give a quantize that sums its rows (ElementwiseSpec::rowSum):
/// inputs x (bf16), the gain (bf16, broadcast along the columns) and the
/// row sums (f32, broadcast along the rows); x * rsqrt(sums * invCols +
/// eps) rounded to bf16, times the gain in bf16. The benches and the tests
/// of the row-sum quantize take this one and sumOfSquaresProgram.
EwProgram rmsnormProgram(float invCols, float eps);
/// The sums an RMSNorm reads: x^2 in f32 over rmsnormProgram's inputs but
/// the sums (x, and the gain it does not read).
EwProgram sumOfSquaresProgram();

/// Checks a program: 1..4 inputs of bf16/f16/f32, operands that exist and
/// come earlier, arities, result types f32/bf16/f16, a broadcast per input
/// (or none) with input 0 unbroadcast.
Status checkProgram(const EwProgram &p);

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

std::string toJSON(const EwProgram &p, int indent = -1);
Expected<EwProgram> ewProgramFromJSON(const std::string &text);

/// "add", "exp", "convert", ...
std::string_view toString(EwOp op);
std::optional<EwOp> parseEwOp(std::string_view s);
/// "none", "row", "col".
std::string_view toString(EwBroadcast b);
std::optional<EwBroadcast> parseEwBroadcast(std::string_view s);
/// Operands an op takes.
int ewArity(EwOp op);

} // namespace fp8

#endif // FP8_CORE_EWPROGRAM_H
