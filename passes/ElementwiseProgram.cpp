//===- ElementwiseProgram.cpp - Elementwise ops as codegen programs -------===//

#include "passes/ElementwiseProgram.h"

#include "dialect/FP8Attrs.h"
#include "dialect/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::fp8;
using ::fp8::EwArg;
using ::fp8::EwBroadcast;
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

  /// The program input for tensor `v`, indexed by `bc` (reused when read
  /// twice the same way).
  FailureOr<EwArg> input(Value v, std::string &why,
                         EwBroadcast bc = EwBroadcast::None) {
    auto it = inputIndex_.find(v);
    if (it != inputIndex_.end()) {
      if (match.program.broadcastOf(size_t(it->second)) != bc) {
        why = "expected each input tensor to be read through one indexing "
              "map";
        return failure();
      }
      return EwArg::input(it->second);
    }
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
    match.program.broadcast.push_back(bc);
    inputIndex_[v] = index;
    return EwArg::input(index);
  }

  /// Puts the inputs that have the op's shape first (the program's input 0
  /// gives the grid it runs over), renumbering the operands; drops the
  /// broadcast list when nothing broadcasts.
  LogicalResult finishInputs(std::string &why) {
    ::fp8::EwProgram &p = match.program;
    std::vector<size_t> order; // new position -> old index
    for (EwBroadcast want :
         {EwBroadcast::None, EwBroadcast::Row, EwBroadcast::Col})
      for (size_t i = 0; i < p.inputs.size(); ++i)
        if (p.broadcastOf(i) == want)
          order.push_back(i);
    if (!p.inputs.empty() && p.broadcastOf(order[0]) != EwBroadcast::None) {
      why = "expected an input with the op's shape (every input broadcasts)";
      return failure();
    }
    std::vector<int> newIndex(p.inputs.size());
    for (size_t k = 0; k < order.size(); ++k)
      newIndex[order[k]] = int(k);
    auto renumber = [&](EwArg &a) {
      if (a.kind == EwArg::Kind::Input)
        a.index = newIndex[size_t(a.index)];
    };
    for (EwInstr &in : p.instrs)
      for (EwArg &a : in.args)
        renumber(a);
    renumber(p.result);
    std::vector<::fp8::DType> types;
    std::vector<EwBroadcast> bcs;
    llvm::SmallVector<Value> values;
    for (size_t old : order) {
      types.push_back(p.inputs[old]);
      bcs.push_back(p.broadcastOf(old));
      values.push_back(match.inputs[old]);
    }
    p.inputs = types;
    p.broadcast =
        llvm::any_of(bcs, [](EwBroadcast b) { return b != EwBroadcast::None; })
            ? bcs
            : std::vector<EwBroadcast>{};
    match.inputs = values;
    return success();
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

/// How an input read through `m` indexes the iteration space ([..., rows,
/// cols]: the last dimension the row): identity, the rows (every dimension
/// but the last), or the last dimension alone.
std::optional<EwBroadcast> broadcastOfMap(AffineMap m) {
  if (m.isIdentity())
    return EwBroadcast::None;
  const unsigned n = m.getNumDims();
  if (n < 2 || m.getNumSymbols() != 0)
    return std::nullopt;
  if (m == AffineMap::getMinorIdentityMap(n, 1, m.getContext()))
    return EwBroadcast::Col;
  if (m == AffineMap::getMultiDimIdentityMap(n, m.getContext())
               .getMajorSubMap(n - 1))
    return EwBroadcast::Row;
  return std::nullopt;
}

/// The program of a linalg op's body, yielding its one value (a reduction:
/// the value added to the accumulator `acc`, whose add is not part of the
/// program). Inputs are read through identity maps or broadcast along the
/// rows or the columns.
FailureOr<EwArg> matchBody(linalg::LinalgOp linalgOp, ProgramBuilder &b,
                           Operation *accAdd, std::string &why) {
  Block *body = linalgOp.getBlock();
  auto resolve = [&](Value v) -> FailureOr<EwArg> {
    if (std::optional<EwArg> r = b.value(v))
      return *r;
    if (std::optional<float> c = constantOf(v))
      return EwArg::constant(*c);
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body) {
      OpOperand &operand = linalgOp->getOpOperand(arg.getArgNumber());
      if (linalgOp.isDpsInit(&operand)) {
        why = "the body reads the result's initial value";
        return failure();
      }
      std::optional<EwBroadcast> bc =
          broadcastOfMap(linalgOp.getMatchingIndexingMap(&operand));
      if (!bc) {
        why = "expected identity indexing maps, or inputs broadcast along the "
              "rows ((d0, d1) -> (d0)) or the columns ((d0, d1) -> (d1)); the "
              "runtime's kernels do not transpose";
        return failure();
      }
      return b.input(operand.get(), why, *bc);
    }
    why = "the body uses a value defined outside the op that is not a float "
          "constant";
    return failure();
  };
  for (Operation &inner : body->without_terminator()) {
    if (&inner == accAdd)
      continue;
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
  if (!accAdd)
    return resolve(yield->getOperand(0));
  Value acc =
      body->getArgument(linalgOp.getDpsInitOperand(0)->getOperandNumber());
  Value other = accAdd->getOperand(0) == acc ? accAdd->getOperand(1)
                                             : accAdd->getOperand(0);
  return resolve(other);
}

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
    if (failed(b.add(op, resolve, why)) || failed(b.finishInputs(why)))
      return failure();
    b.match.program.result = EwArg::result(0);
    return b.match;
  }

  if (linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics()) {
    why = "expected one tensor result";
    return failure();
  }
  if (!linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0))
           .isIdentity()) {
    why = "expected an identity indexing map for the result (the runtime's "
          "elementwise kernels do not transpose)";
    return failure();
  }
  FailureOr<EwArg> r = matchBody(linalgOp, b, /*acc=*/nullptr, why);
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
  if (failed(b.finishInputs(why)))
    return failure();
  ::fp8::Status s = ::fp8::checkProgram(b.match.program);
  if (!s) {
    why = s.message();
    return failure();
  }
  return b.match;
}

/// True when `v` is a tensor of float zeros (+0.0): a linalg.fill of it, or a
/// splat constant.
static bool isPositiveZeroFill(Value v, Operation *&fill) {
  auto positiveZero = [](std::optional<float> c) {
    return c && *c == 0.0f && !std::signbit(*c);
  };
  if (auto f = v.getDefiningOp<linalg::FillOp>()) {
    fill = f;
    return positiveZero(constantOf(f.getInputs()[0]));
  }
  fill = v.getDefiningOp();
  return positiveZero(constantOf(v));
}

bool mlir::fp8::isReductionCandidate(Operation *op) {
  auto l = dyn_cast<linalg::LinalgOp>(op);
  if (!l || op->getNumResults() != 1)
    return false;
  auto it = l.getIteratorTypesArray();
  if (it.size() < 2 || it.back() != utils::IteratorType::reduction)
    return false;
  if (!llvm::all_of(llvm::ArrayRef(it).drop_back(), [](utils::IteratorType t) {
        return t == utils::IteratorType::parallel;
      }))
    return false;
  // Inputs over the whole iteration space (or broadcast along it): a
  // contraction such as a matmul is not a row sum.
  return llvm::all_of(l.getDpsInputOperands(), [&](OpOperand *in) {
    return broadcastOfMap(l.getMatchingIndexingMap(in)).has_value();
  });
}

FailureOr<ElementwiseMatch> mlir::fp8::matchReduction(Operation *op,
                                                      std::string &why) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !isReductionCandidate(op)) {
    why = "expected a linalg op reducing along its last dimension";
    return failure();
  }
  if (linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics()) {
    why = "expected one tensor result";
    return failure();
  }
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  const unsigned n = linalgOp.getNumLoops();
  if (linalgOp.getMatchingIndexingMap(init) !=
      AffineMap::getMultiDimIdentityMap(n, op->getContext())
          .getMajorSubMap(n - 1)) {
    why = "expected the result indexed by every dimension but the reduced "
          "last one ((d0, d1) -> (d0))";
    return failure();
  }
  if (wideType(op->getResult(0).getType()) != ::fp8::DType::F32) {
    why = "expected f32 row sums, found " +
          ProgramBuilder::typeString(op->getResult(0));
    return failure();
  }
  ElementwiseMatch m;
  if (!isPositiveZeroFill(init->get(), m.init)) {
    why = "expected the sums to start from a fill of 0.0 (the reduce kernel "
          "writes them whole)";
    return failure();
  }
  // The body: acc + v (or v + acc), acc read nowhere else.
  Block *body = linalgOp.getBlock();
  Value acc = body->getArgument(init->getOperandNumber());
  Operation *yield = body->getTerminator();
  auto add = yield->getNumOperands() == 1
                 ? yield->getOperand(0).getDefiningOp<arith::AddFOp>()
                 : arith::AddFOp();
  if (!add || add->getBlock() != body ||
      (add.getLhs() != acc && add.getRhs() != acc) || !acc.hasOneUse()) {
    why = "expected a sum: the body yields arith.addf of the accumulator and "
          "a value computed without it";
    return failure();
  }
  ProgramBuilder b;
  b.match.result = op->getResult(0);
  FailureOr<EwArg> r = matchBody(linalgOp, b, add, why);
  if (failed(r))
    return failure();
  if (r->kind == EwArg::Kind::Constant) {
    why = "expected the summed value to depend on an input";
    return failure();
  }
  b.match.program.result = *r;
  if (failed(b.finishInputs(why)))
    return failure();
  ::fp8::Status s = ::fp8::checkProgram(b.match.program);
  if (!s) {
    why = s.message();
    return failure();
  }
  m.program = std::move(b.match.program);
  m.inputs = std::move(b.match.inputs);
  m.result = op->getResult(0);
  return m;
}

namespace {
/// `a` with its input index mapped by `to`.
EwArg remapInput(EwArg a, llvm::ArrayRef<int> to) {
  if (a.kind == EwArg::Kind::Input)
    a.index = to[size_t(a.index)];
  return a;
}

/// `p`'s instructions and result over inputs renumbered by `to`.
void remapInstructions(const ::fp8::EwProgram &p, llvm::ArrayRef<int> to,
                       ::fp8::EwProgram &out) {
  out.instrs = p.instrs;
  for (EwInstr &in : out.instrs)
    for (EwArg &a : in.args)
      a = remapInput(a, to);
  out.result = remapInput(p.result, to);
}
} // namespace

Operation *mlir::fp8::absorbRowSum(ElementwiseMatch &m,
                                   ::fp8::EwProgram &rowSum) {
  const ::fp8::EwProgram &p = m.program;
  const size_t n = p.inputs.size();
  for (size_t k = 0; k < n; ++k) {
    Value sums = m.inputs[k];
    Operation *red = sums.getDefiningOp();
    if (p.broadcastOf(k) != EwBroadcast::Row || !red || !sums.hasOneUse() ||
        !isReductionCandidate(red))
      continue;
    std::string why;
    FailureOr<ElementwiseMatch> r = matchReduction(red, why);
    if (failed(r))
      continue;
    // The inputs but the sum keep their order; the sum goes last.
    llvm::SmallVector<int> to(n);
    for (size_t j = 0, o = 0; j < n; ++j)
      to[j] = j == k ? int(n - 1) : int(o++);
    // Each input of the sum: one of m's other inputs, read alike.
    llvm::SmallVector<int> sumTo;
    for (size_t i = 0; i < r->inputs.size(); ++i) {
      for (size_t j = 0; j < n; ++j)
        if (j != k && m.inputs[j] == r->inputs[i] &&
            p.inputs[j] == r->program.inputs[i] &&
            p.broadcastOf(j) == r->program.broadcastOf(i)) {
          sumTo.push_back(to[j]);
          break;
        }
      if (sumTo.size() != i + 1)
        break;
    }
    if (sumTo.size() != r->inputs.size())
      continue;
    ::fp8::EwProgram q;
    q.inputs.resize(n);
    q.broadcast.resize(n, EwBroadcast::None);
    for (size_t j = 0; j < n; ++j) {
      q.inputs[size_t(to[j])] = p.inputs[j];
      q.broadcast[size_t(to[j])] = p.broadcastOf(j);
    }
    remapInstructions(p, to, q);
    ::fp8::EwProgram sum;
    sum.inputs.assign(q.inputs.begin(), q.inputs.end() - 1);
    sum.broadcast.assign(q.broadcast.begin(), q.broadcast.end() - 1);
    if (llvm::all_of(sum.broadcast,
                     [](EwBroadcast b) { return b == EwBroadcast::None; }))
      sum.broadcast.clear();
    remapInstructions(r->program, sumTo, sum);
    m.program = std::move(q);
    m.inputs.erase(m.inputs.begin() + long(k));
    rowSum = std::move(sum);
    return red;
  }
  return nullptr;
}

Operation *mlir::fp8::soleTransposeOf(Operation *quantize) {
  auto q = dyn_cast<QuantizeOp>(quantize);
  if (!q)
    return nullptr;
  Value codes = q.getOutput(), scales = q.getScale();
  if (!codes.hasOneUse() || !scales.hasOneUse())
    return nullptr;
  auto t = dyn_cast<TransposeOp>(*codes.getUsers().begin());
  if (!t || t->getBlock() != q->getBlock() || t.getInput() != codes ||
      t.getScale() != scales)
    return nullptr;
  return t;
}
