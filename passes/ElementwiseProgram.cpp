//===- ElementwiseProgram.cpp - Elementwise ops as codegen programs -------===//

#include "passes/ElementwiseProgram.h"

#include "dialect/FP8Attrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

using namespace mlir;
using namespace mlir::fp8;
using ::fp8::EwArg;
using ::fp8::EwInstr;
using ::fp8::EwOp;

namespace {

/// The program op of an arith/math float op.
std::optional<EwOp> opOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<EwOp>>(op)
      .Case([](arith::AddFOp) { return EwOp::Add; })
      .Case([](arith::SubFOp) { return EwOp::Sub; })
      .Case([](arith::MulFOp) { return EwOp::Mul; })
      .Case([](arith::DivFOp) { return EwOp::Div; })
      .Case([](arith::NegFOp) { return EwOp::Neg; })
      .Case([](arith::MaximumFOp) { return EwOp::Maximum; })
      .Case([](arith::MinimumFOp) { return EwOp::Minimum; })
      .Case([](arith::MaxNumFOp) { return EwOp::MaxNum; })
      .Case([](arith::MinNumFOp) { return EwOp::MinNum; })
      .Case([](arith::ExtFOp) { return EwOp::Convert; })
      .Case([](arith::TruncFOp) { return EwOp::Convert; })
      .Case([](math::ExpOp) { return EwOp::Exp; })
      .Case([](math::TanhOp) { return EwOp::Tanh; })
      .Case([](math::ErfOp) { return EwOp::Erf; })
      .Case([](math::AbsFOp) { return EwOp::Abs; })
      .Case([](math::SqrtOp) { return EwOp::Sqrt; })
      .Case([](math::RsqrtOp) { return EwOp::Rsqrt; })
      .Case([](math::FmaOp) { return EwOp::Fma; })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<::fp8::DType> wideType(Type t) {
  if (auto s = dyn_cast<ShapedType>(t))
    t = s.getElementType();
  std::optional<::fp8::DType> d = toDType(t);
  if (d && (*d == ::fp8::DType::BF16 || *d == ::fp8::DType::F16 ||
            *d == ::fp8::DType::F32))
    return d;
  return std::nullopt;
}

/// A float constant (scalar, or a splat tensor), as the program's float.
std::optional<float> constantOf(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  Attribute a = cst.getValue();
  if (auto f = dyn_cast<FloatAttr>(a))
    return float(f.getValueAsDouble());
  if (auto d = dyn_cast<DenseFPElementsAttr>(a); d && d.isSplat())
    return float(d.getSplatValue<APFloat>().convertToDouble());
  return std::nullopt;
}

std::string opName(Operation *op) {
  return "'" + op->getName().getStringRef().str() + "'";
}

/// Builds the program of a body: `args` maps block arguments (and, for a
/// single op on tensors, its operands) to program operands.
class ProgramBuilder {
public:
  ElementwiseMatch match;

  /// The program input for tensor `v` (reused when read twice).
  FailureOr<EwArg> input(Value v, std::string &why) {
    auto it = inputIndex_.find(v);
    if (it != inputIndex_.end())
      return EwArg::input(it->second);
    std::optional<::fp8::DType> t = wideType(v.getType());
    if (!t) {
      why = "expected bf16, f16 or f32 inputs, found " + typeString(v);
      return failure();
    }
    if (match.inputs.size() >= 4) {
      why = "expected at most 4 input tensors";
      return failure();
    }
    const int index = int(match.inputs.size());
    match.inputs.push_back(v);
    match.program.inputs.push_back(*t);
    inputIndex_[v] = index;
    return EwArg::input(index);
  }

  /// Adds one instruction for `op`, with `operand` resolving its operands.
  template <typename Resolve>
  LogicalResult add(Operation *op, Resolve operand, std::string &why) {
    std::optional<EwOp> e = opOf(op);
    if (!e) {
      why = "the runtime has no elementwise kernel for " + opName(op) +
            " (supported: arith add/sub/mul/div/neg/maximum/minimum/maxnum/"
            "minnum/extf/truncf and math exp/tanh/erf/absf/sqrt/rsqrt/fma)";
      return failure();
    }
    std::optional<::fp8::DType> t = wideType(op->getResult(0).getType());
    if (!t) {
      why = "expected " + opName(op) +
            " to compute in bf16, f16 or f32, "
            "found " +
            typeString(op->getResult(0));
      return failure();
    }
    EwInstr instr;
    instr.op = *e;
    instr.type = *t;
    for (Value v : op->getOperands()) {
      FailureOr<EwArg> a = operand(v);
      if (failed(a))
        return failure();
      instr.args.push_back(*a);
    }
    values_[op->getResult(0)] = int(match.program.instrs.size());
    match.program.instrs.push_back(std::move(instr));
    return success();
  }

  std::optional<EwArg> value(Value v) const {
    auto it = values_.find(v);
    if (it == values_.end())
      return std::nullopt;
    return EwArg::result(it->second);
  }

  static std::string typeString(Value v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << v.getType();
    return s;
  }

private:
  llvm::DenseMap<Value, int> inputIndex_;
  llvm::DenseMap<Value, int> values_;
};

} // namespace

bool mlir::fp8::isElementwiseCandidate(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return false;
  if (auto l = dyn_cast<linalg::LinalgOp>(op))
    return llvm::all_of(l.getIteratorTypesArray(), [](utils::IteratorType t) {
      return t == utils::IteratorType::parallel;
    });
  return isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         !isa<arith::ConstantOp>(op);
}

FailureOr<ElementwiseMatch> mlir::fp8::matchElementwise(Operation *op,
                                                        std::string &why) {
  ProgramBuilder b;
  b.match.result = op->getResult(0);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp) {
    // One arith/math op on tensors: its tensor operands are the inputs.
    auto resolve = [&](Value v) -> FailureOr<EwArg> {
      if (std::optional<float> c = constantOf(v))
        return EwArg::constant(*c);
      return b.input(v, why);
    };
    if (failed(b.add(op, resolve, why)))
      return failure();
    b.match.program.result = EwArg::result(0);
    return b.match;
  }

  if (linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics()) {
    why = "expected one tensor result";
    return failure();
  }
  for (AffineMap m : linalgOp.getIndexingMapsArray())
    if (!m.isIdentity()) {
      why = "expected identity indexing maps (the runtime's elementwise "
            "kernels do not broadcast or transpose)";
      return failure();
    }
  Block *body = linalgOp.getBlock();
  auto resolve = [&](Value v) -> FailureOr<EwArg> {
    if (std::optional<EwArg> r = b.value(v))
      return *r;
    if (std::optional<float> c = constantOf(v))
      return EwArg::constant(*c);
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body)
      return b.input(linalgOp->getOperand(arg.getArgNumber()), why);
    why = "the body uses a value defined outside the op that is not a float "
          "constant";
    return failure();
  };
  for (Operation &inner : body->without_terminator()) {
    if (isa<arith::ConstantOp>(inner) && constantOf(inner.getResult(0)))
      continue;
    if (inner.getNumResults() != 1) {
      why = "unsupported op " + opName(&inner) + " in the body";
      return failure();
    }
    if (failed(b.add(&inner, resolve, why)))
      return failure();
  }
  Operation *yield = body->getTerminator();
  if (yield->getNumOperands() != 1) {
    why = "expected one yielded value";
    return failure();
  }
  FailureOr<EwArg> r = resolve(yield->getOperand(0));
  if (failed(r))
    return failure();
  if (r->kind == EwArg::Kind::Constant) {
    why = "a constant fill is not an elementwise kernel";
    return failure();
  }
  b.match.program.result = *r;
  // The result is stored as the op's element type.
  std::optional<::fp8::DType> out = wideType(op->getResult(0).getType());
  if (!out) {
    why = "expected a bf16, f16 or f32 result, found " +
          ProgramBuilder::typeString(op->getResult(0));
    return failure();
  }
  if (b.match.program.resultType() != *out) {
    EwInstr convert;
    convert.op = EwOp::Convert;
    convert.args = {*r};
    convert.type = *out;
    b.match.program.instrs.push_back(convert);
    b.match.program.result =
        EwArg::result(int(b.match.program.instrs.size()) - 1);
  }
  ::fp8::Status s = ::fp8::checkProgram(b.match.program);
  if (!s) {
    why = s.message();
    return failure();
  }
  return b.match;
}
