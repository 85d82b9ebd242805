//===- SymbolicShapes.cpp - Dynamic sizes followed through a graph --------===//

#include "passes/SymbolicShapes.h"

#include "passes/ElementwiseProgram.h"
#include "passes/KernelAttrs.h"

#include "dialect/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp8;

void SymbolicShapes::addArgument(Value v, RankedTensorType type) {
  shapes_[v] = fresh(type);
}

std::vector<std::string> SymbolicShapes::dimNames() {
  std::vector<std::string> names;
  for (int c : std::vector<int>(classOrder_))
    names.push_back(className(c));
  return names;
}

int SymbolicShapes::find(int c) {
  while (parent_[size_t(c)] != c)
    c = parent_[size_t(c)] = parent_[size_t(parent_[size_t(c)])];
  return c;
}
void SymbolicShapes::unite(int a, int b) {
  a = find(a);
  b = find(b);
  if (a != b)
    parent_[size_t(std::max(a, b))] = std::min(a, b);
}
SymShape SymbolicShapes::fresh(RankedTensorType t) {
  SymShape s;
  for (int64_t d : t.getShape()) {
    SymDim sd;
    if (ShapedType::isDynamic(d)) {
      sd.cls = int(parent_.size());
      parent_.push_back(sd.cls);
    } else {
      sd.value = d;
    }
    s.push_back(sd);
  }
  return s;
}
void SymbolicShapes::unifyShapes(const SymShape &a, const SymShape &b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i].isPlain() && b[i].isPlain())
      unite(a[i].cls, b[i].cls);
}
/// The class behind an index value (tensor.dim of a tensor, index casts).
std::optional<SymDim> SymbolicShapes::indexDim(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    return indexDim(cast.getIn());
  auto dim = v.getDefiningOp<tensor::DimOp>();
  if (!dim)
    return std::nullopt;
  std::optional<int64_t> index = dim.getConstantIndex();
  auto it = shapes_.find(dim.getSource());
  if (!index || it == shapes_.end() || *index >= int64_t(it->second.size()))
    return std::nullopt;
  return it->second[size_t(*index)];
}
/// Scales of a tensor of shape `s`: the last two dimensions divided by the
/// granularity's blocks.
FailureOr<SymShape> SymbolicShapes::scaleShape(Operation *op, const SymShape &s,
                                               const ::fp8::Granularity &g) {
  SymShape out(s);
  for (size_t i = s.size() - 2; i < s.size(); ++i) {
    const int64_t block = i + 1 == s.size() ? g.cols : g.rows;
    SymDim &d = out[i];
    if (block == ::fp8::Granularity::kWhole) {
      d = SymDim{1, -1, 1};
    } else if (d.isStatic()) {
      d.value = (d.value + block - 1) / block;
    } else if (d.divisor == 1) {
      d.divisor = block;
    } else {
      return op->emitError("cannot describe the scale shape of a tensor "
                           "whose size is already a quotient");
    }
  }
  return out;
}

LogicalResult SymbolicShapes::shape(Operation *op) {
  if (op->getNumResults() == 0)
    return success();
  auto set = [&](Value v, SymShape s) { shapes_[v] = std::move(s); };
  auto typeShape = [&](Value v) -> SymShape {
    return fresh(cast<RankedTensorType>(v.getType()));
  };
  if (auto e = dyn_cast<tensor::EmptyOp>(op)) {
    SymShape s = typeShape(e.getResult());
    unsigned dyn = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i].isStatic())
        continue;
      std::optional<SymDim> d = indexDim(e.getDynamicSizes()[dyn++]);
      if (!d || d->isStatic() || d->divisor != 1)
        return op->emitError("cannot follow this tensor's dynamic size: "
                             "expected it to be a tensor.dim of another "
                             "tensor of the graph");
      if (d->isPlain())
        unite(s[i].cls, d->cls);
      else
        s[i] = *d; // permuted rows: the same expression
    }
    set(e.getResult(), s);
    return success();
  }
  if (auto q = dyn_cast<QuantizeOp>(op)) {
    // Copies: set() may grow the map and move its entries.
    const SymShape in = shapes_.at(q.getInput());
    set(q.getOutput(), in);
    FailureOr<SymShape> s = scaleShape(op, in, toRecipe(q.getGranularity()));
    if (failed(s))
      return failure();
    set(q.getScale(), *s);
    if (q.getNewHistory())
      set(q.getNewHistory(), typeShape(q.getNewHistory()));
    if (q.getStats())
      set(q.getStats(), typeShape(q.getStats()));
    return success();
  }
  if (auto t = dyn_cast<TransposeOp>(op)) {
    SymShape in = shapes_.at(t.getInput());
    SymShape sc = shapes_.at(t.getScale());
    std::swap(in[in.size() - 1], in[in.size() - 2]);
    std::swap(sc[sc.size() - 1], sc[sc.size() - 2]);
    set(t.getOutput(), in);
    set(t.getOutputScale(), sc);
    return success();
  }
  if (auto p = dyn_cast<MoePermuteOp>(op)) {
    const SymShape x = shapes_.at(p.getX()), ids = shapes_.at(p.getIds());
    SymShape t{x[0]};
    SymShape it{ids[0]};
    unifyShapes(t, it);
    // topK * T + E * (align - 1) rows.
    const int64_t pad = p.getExperts() * (p.getAlign() - 1);
    SymDim rows = ids[0];
    if (ids[1].isStatic() && rows.isStatic()) {
      rows.value = rows.value * ids[1].value + pad;
    } else if (ids[1].isStatic() && rows.isPlain()) {
      rows.scale = ids[1].value;
      rows.value = pad;
    } else {
      return op->emitError("cannot follow the permuted rows' size: expected "
                           "ids [T, topK] with a static topK");
    }
    set(p.getRows(), SymShape{rows, x[1]});
    set(p.getOffsets(), typeShape(p.getOffsets()));
    set(p.getPositions(), ids);
    return success();
  }
  if (isa<InterleaveRowsOp, DeinterleaveColsOp>(op))
    return pairShape(op);
  if (auto u = dyn_cast<MoeUnpermuteOp>(op)) {
    const SymShape pos = shapes_.at(u.getPositions());
    unifyShapes(pos, shapes_.at(u.getWeights()));
    set(u.getOut(), SymShape{pos[0], shapes_.at(u.getY())[1]});
    return success();
  }
  if (isa<ScaledMatmulOp, GroupedScaledMatmulOp>(op)) {
    const GemmOperands ops = gemmOperandsOf(op);
    const ::fp8::ScaledGemmArgs &args = ops.args;
    const Value a = ops.a, b = ops.b, c = ops.c;
    const SymShape sa = shapes_.at(a), sb = shapes_.at(b);
    // A contiguous grouped GEMM's A holds every group's rows ([M, K]) and
    // its B is the groups' stack ([G, N, K]).
    const size_t lead = sa.size() == 3 ? 1 : 0;
    const size_t leadB = sb.size() == 3 ? 1 : 0;
    const bool aK = args.a.layout == ::fp8::Layout::KMajor;
    const bool bK = args.b.layout == ::fp8::Layout::KMajor;
    SymShape d = typeShape(op->getResult(0));
    SymShape want;
    if (lead)
      want.push_back(sa[0]);
    want.push_back(aK ? sa[lead] : sa[lead + 1]);
    want.push_back(bK ? sb[leadB] : sb[leadB + 1]);
    if (!want[lead].isPlain() && !want[lead].isStatic())
      d[lead] = want[lead]; // the permuted rows' expression
    unifyShapes(d, want);
    SymShape ka{aK ? sa[lead + 1] : sa[lead]},
        kb{bK ? sb[leadB + 1] : sb[leadB]};
    unifyShapes(ka, kb);
    if (c)
      unifyShapes(d, shapes_.at(c));
    set(op->getResult(0), d);
    return success();
  }
  if (isElementwiseCandidate(op)) {
    SymShape r = typeShape(op->getResult(0));
    for (Value v : op->getOperands())
      if (auto it = shapes_.find(v); it != shapes_.end()) {
        // An operand sized by an expression (permuted rows) sizes the
        // result alike.
        for (size_t i = 0; i < r.size() && i < it->second.size(); ++i)
          if (!r[i].isStatic() && !it->second[i].isStatic() &&
              !it->second[i].isPlain())
            r[i] = it->second[i];
        unifyShapes(r, it->second);
      }
    set(op->getResult(0), r);
    return success();
  }
  for (Value r : op->getResults())
    if (auto t = dyn_cast<RankedTensorType>(r.getType()))
      set(r, fresh(t));
  return success();
}

LogicalResult SymbolicShapes::pairShape(Operation *op) {
  auto set = [&](Value v, SymShape s) { shapes_[v] = std::move(s); };
  auto typeShape = [&](Value v) -> SymShape {
    return fresh(cast<RankedTensorType>(v.getType()));
  };
  if (auto il = dyn_cast<InterleaveRowsOp>(op)) {
    // Twice the rows of each input: 2 * R of a dynamic R.
    const SymShape a = shapes_.at(il.getA());
    unifyShapes(a, shapes_.at(il.getB()));
    SymShape r = typeShape(il.getResult());
    if (!a[0].isStatic()) {
      if (!a[0].isPlain())
        return op->emitError("cannot follow the interleaved rows' size: "
                             "expected static rows or a plain dimension");
      r[0] = a[0];
      r[0].scale = 2;
    }
    set(il.getResult(), r);
    return success();
  }
  // A deinterleave: the input's rows, half its columns.
  auto sp = cast<DeinterleaveColsOp>(op);
  const SymShape in = shapes_.at(sp.getInput());
  SymShape r = typeShape(sp.getFirst());
  if (!in[0].isStatic() && !in[0].isPlain())
    r[0] = in[0]; // the permuted rows' expression
  unifyShapes(r, in);
  set(sp.getFirst(), r);
  set(sp.getSecond(), r);
  return success();
}

std::string SymbolicShapes::className(int cls) {
  cls = find(cls);
  auto it = classNames_.find(cls);
  if (it != classNames_.end())
    return it->second;
  const std::string name =
      classOrder_.empty() ? "M" : "M" + std::to_string(classOrder_.size() + 1);
  classOrder_.push_back(cls);
  classNames_[cls] = name;
  return name;
}

::fp8::ShapeExpr SymbolicShapes::shapeExpr(Value v) {
  ::fp8::ShapeExpr out;
  for (const SymDim &d : shapes_.at(v))
    out.push_back(d.isStatic()
                      ? ::fp8::DimExpr::constant(d.value)
                      : ::fp8::DimExpr::symbol(className(d.cls), d.divisor,
                                               d.scale, d.value));
  return out;
}
