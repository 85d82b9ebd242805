//===- ExportPlan.cpp - The compiled IR as a plan -------------------------===//
//
// The pipeline's IR -> runtime/plan/Plan.h. Every tensor value a step touches
// becomes a buffer (arguments: inputs, weights or amax-history states;
// returned values: outputs; constants; temporaries); dynamic sizes are
// followed through the ops (tensor.dim -> tensor.empty -> results) and named
// M, M2, ...; each op with an fp8.kernel becomes a step in order (prepare
// when it reads only weights, constants and other prepare results); and the
// unquantized graph is written down for --verify: every GEMM as a matmul of
// the high-precision values behind its FP8 operands (found through
// fp8.quantize, fp8.transpose and fp8.source), every elementwise op as its
// program.
//
//===----------------------------------------------------------------------===//

#include "passes/Export.h"

#include "passes/ElementwiseProgram.h"
#include "passes/ExportSteps.h"
#include "passes/KernelAttrs.h"
#include "passes/SymbolicShapes.h"

#include "dialect/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Path.h"

#include <map>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::fp8;

namespace {

class PlanBuilder {
public:
  PlanBuilder(func::FuncOp fn, ::fp8::Arch arch) : fn_(fn), arch_(arch) {}

  FailureOr<::fp8::Plan> build() {
    plan_.function = fn_.getSymName().str();
    plan_.arch = arch_;
    if (!fn_.getBody().hasOneBlock())
      return emitError(fn_.getLoc(), "expected a single-block function");
    Block &body = fn_.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    // Names: arguments, returned values, then the rest as they come.
    for (BlockArgument a : body.getArguments())
      names_[a] = "arg" + std::to_string(a.getArgNumber());
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (!isHistoryResult(i) && !names_.count(v))
        names_[v] = "result" + std::to_string(i);

    // Sizes.
    for (BlockArgument a : body.getArguments())
      if (auto t = dyn_cast<RankedTensorType>(a.getType()))
        shapes_.addArgument(a, t);
    for (Operation &op : body)
      if (failed(shapes_.shape(&op)))
        return failure();

    // Steps.
    for (Operation &op : body)
      if (failed(step(&op)))
        return failure();
    if (failed(outputs(ret)))
      return failure();
    // The unquantized reference.
    for (Operation &op : body)
      if (failed(reference(&op)))
        return failure();
    finishBuffers();
    plan_.dims = shapes_.dimNames();
    if (::fp8::Status s = ::fp8::validatePlan(plan_); !s)
      return emitError(fn_.getLoc(), "the plan is inconsistent: ")
             << s.message();
    return plan_;
  }

private:
  //===--------------------------------------------------------------------===//
  // Buffers
  //===--------------------------------------------------------------------===//

  bool isHistoryResult(unsigned i) {
    return fn_.getResultAttr(i, kHistoryOfAttr) != nullptr;
  }

  std::string nameOf(Value v) {
    auto it = names_.find(v);
    if (it != names_.end())
      return it->second;
    return names_[v] = "t" + std::to_string(next_++);
  }

  /// The buffer of `v`, declared on first use.
  FailureOr<std::string> buffer(Value v, Operation *user) {
    auto [it, inserted] = bufferOf_.try_emplace(v, "");
    if (!inserted)
      return it->second;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    std::optional<::fp8::DType> dtype =
        type ? toDType(type.getElementType()) : std::nullopt;
    if (!dtype)
      return user->emitError("the plan cannot hold a value of type ")
             << v.getType();
    ::fp8::PlanBuffer b;
    b.name = nameOf(v);
    b.dtype = *dtype;
    b.shape = shapes_.shapeExpr(v);
    b.role = ::fp8::BufferRole::Temp;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      b.role = ::fp8::BufferRole::Input;
      if (fn_.getArgAttr(arg.getArgNumber(), kWeightAttr))
        b.role = ::fp8::BufferRole::Weight;
      if (fn_.getArgAttr(arg.getArgNumber(), kHistoryAttr)) {
        b.role = ::fp8::BufferRole::State;
        b.history = type.getDimSize(0);
        b.dtype = ::fp8::DType::F32;
        b.shape = {::fp8::DimExpr::constant(b.history + 4)};
      }
    } else if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
      auto data = dyn_cast<DenseElementsAttr>(cst.getValue());
      if (!data || !type.hasStaticShape())
        return cst.emitError("expected a dense constant of static shape for "
                             "the plan");
      b.role = ::fp8::BufferRole::Constant;
      b.data = rawData(data);
    }
    it->second = b.name;
    buffers_.push_back(std::move(b));
    return it->second;
  }

  static std::vector<uint8_t> rawData(DenseElementsAttr data) {
    ArrayRef<char> raw = data.getRawData();
    std::vector<uint8_t> out(raw.begin(), raw.end());
    if (data.isSplat()) {
      std::vector<uint8_t> all;
      all.reserve(out.size() * size_t(data.getNumElements()));
      for (int64_t i = 0; i < data.getNumElements(); ++i)
        all.insert(all.end(), out.begin(), out.end());
      return all;
    }
    return out;
  }

  void finishBuffers() {
    // Arguments first (in order), then constants, then the rest.
    auto rank = [](const ::fp8::PlanBuffer &b) {
      switch (b.role) {
      case ::fp8::BufferRole::Input:
      case ::fp8::BufferRole::Weight:
      case ::fp8::BufferRole::State:
        return 0;
      case ::fp8::BufferRole::Constant:
        return 1;
      default:
        return 2;
      }
    };
    std::stable_sort(
        buffers_.begin(), buffers_.end(),
        [&](const ::fp8::PlanBuffer &a, const ::fp8::PlanBuffer &b) {
          if (rank(a) != rank(b))
            return rank(a) < rank(b);
          if (rank(a) == 0)
            return std::stoi(a.name.substr(3)) < std::stoi(b.name.substr(3));
          return false;
        });
    plan_.buffers = buffers_;
  }

  //===--------------------------------------------------------------------===//
  // Steps
  //===--------------------------------------------------------------------===//

  LogicalResult step(Operation *op) {
    std::optional<KernelRef> kernel = getKernel(op);
    if (!kernel) {
      if (op->hasAttr(kFusedIntoAttr) ||
          isa<tensor::EmptyOp, tensor::DimOp, tensor::SplatOp,
              arith::ConstantOp, arith::IndexCastOp, func::ReturnOp>(op))
        return success();
      return op->emitError("the runtime cannot execute '")
             << op->getName()
             << "': it has no fp8.kernel (run --fp8-compile, or "
                "--fp8-outline-kernels, first)";
    }
    ::fp8::PlanStep s;
    s.name = kernel->kind + "_" + std::to_string(plan_.steps.size());
    s.op = describe(op);
    SmallVector<Value> ins, outs;
    if (failed(stepOf(op, *kernel, arch_, s, ins, outs)))
      return failure();
    if (auto q = dyn_cast<QuantizeOp>(op); q && q.getHistory()) {
      FailureOr<std::string> state = buffer(q.getHistory(), op);
      if (failed(state))
        return failure();
      s.state = *state;
      if (Value nh = q.getNewHistory())
        bufferOf_[nh] = *state; // the same state, updated in place
    }
    // A quantize reading its input's amax, which the GEMM that wrote the
    // input wrote too: the step's last input.
    std::optional<std::string> amax;
    if (s.kind == ::fp8::StepKind::Quantize && s.aux.amaxIn) {
      auto it = amaxOf_.find(ins[0]);
      if (it == amaxOf_.end())
        return op->emitError("expected the GEMM that writes the input of ")
               << kernel->name << " to write its amax (amax_out), found none";
      amax = it->second;
    }
    bool prepare = s.state.empty();
    for (Value v : ins) {
      FailureOr<std::string> b = buffer(v, op);
      if (failed(b))
        return failure();
      s.inputs.push_back(*b);
      prepare &= prepared_.count(*b) > 0 || isWeightOrConstant(v);
    }
    if (amax)
      s.inputs.push_back(*amax);
    for (Value v : outs) {
      FailureOr<std::string> b = buffer(v, op);
      if (failed(b))
        return failure();
      s.outputs.push_back(*b);
    }
    if (s.kind == ::fp8::StepKind::Permute) {
      // The token each permuted row copies, [R]: the codes' rows.
      ::fp8::PlanBuffer b;
      b.name = s.outputs[0] + "_source";
      b.dtype = ::fp8::DType::I32;
      b.shape = {shapes_.shapeExpr(outs[0])[0]};
      b.role = ::fp8::BufferRole::Temp;
      s.outputs.push_back(b.name);
      buffers_.push_back(std::move(b));
    }
    if (s.kind == ::fp8::StepKind::Gemm && s.gemm.amaxOut) {
      // D's amax (one f32 a matrix, shaped as per-tensor scales), which the
      // per-tensor quantizes of D read (OutlineKernels' amax-from-epilogue).
      ::fp8::PlanBuffer b;
      b.name = s.outputs[0] + "_amax";
      b.dtype = ::fp8::DType::F32;
      b.shape = shapes_.shapeExpr(outs[0]);
      for (size_t d = b.shape.size() >= 2 ? b.shape.size() - 2 : 0;
           d < b.shape.size(); ++d)
        b.shape[d] = ::fp8::DimExpr::constant(1);
      b.role = ::fp8::BufferRole::Temp;
      s.outputs.push_back(b.name);
      amaxOf_[outs[0]] = b.name;
      buffers_.push_back(std::move(b));
    }
    s.phase = prepare ? ::fp8::Phase::Prepare : ::fp8::Phase::Run;
    if (prepare)
      prepared_.insert(s.outputs.begin(), s.outputs.end());
    plan_.steps.push_back(std::move(s));
    return success();
  }

  bool isWeightOrConstant(Value v) {
    if (v.getDefiningOp<arith::ConstantOp>())
      return true;
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && fn_.getArgAttr(arg.getArgNumber(), kWeightAttr);
  }

  LogicalResult outputs(func::ReturnOp ret) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (isHistoryResult(i))
        continue;
      if (isa<BlockArgument>(v) || v.getDefiningOp<arith::ConstantOp>())
        return ret.emitError("the plan cannot return an argument or a "
                             "constant unchanged (result ")
               << i << ")";
      FailureOr<std::string> b = buffer(v, ret);
      if (failed(b))
        return failure();
      for (::fp8::PlanBuffer &buf : buffers_)
        if (buf.name == *b)
          buf.role = ::fp8::BufferRole::Output;
      plan_.outputs.push_back(*b);
    }
    return success();
  }

  //===--------------------------------------------------------------------===//
  // The unquantized reference
  //===--------------------------------------------------------------------===//

  /// The reference name of a high-precision value.
  FailureOr<std::string> refName(Value v, Operation *user) {
    if (refValues_.count(v))
      return nameOf(v);
    if (isa<BlockArgument>(v) || v.getDefiningOp<arith::ConstantOp>())
      return buffer(v, user);
    return user->emitError("the reference graph has no value for an operand "
                           "of this op");
  }

  /// The high-precision value behind a GEMM operand, and its layout.
  FailureOr<std::pair<std::string, ::fp8::Layout>>
  traceOperand(Operation *gemm, Value v, ::fp8::Layout layout) {
    while (true) {
      Operation *def = v.getDefiningOp();
      if (auto t = dyn_cast_or_null<TransposeOp>(def)) {
        v = t.getInput();
        layout = layout == ::fp8::Layout::KMajor ? ::fp8::Layout::MNMajor
                                                 : ::fp8::Layout::KMajor;
        continue;
      }
      if (auto q = dyn_cast_or_null<QuantizeOp>(def)) {
        FailureOr<std::string> n = refName(q.getInput(), gemm);
        if (failed(n))
          return failure();
        return std::make_pair(*n, layout);
      }
      if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def)) {
        auto source = cst->getAttrOfType<DenseElementsAttr>(kSourceAttr);
        if (source) {
          // The original constant, kept for the reference.
          auto [it, inserted] = sourceBuffers_.try_emplace(cst, "");
          if (inserted) {
            ::fp8::PlanBuffer b;
            b.name = nameOf(v) + "_source";
            b.dtype = *toDType(source.getElementType());
            b.shape = shapes_.shapeExpr(v);
            b.role = ::fp8::BufferRole::Constant;
            b.data = rawData(source);
            it->second = b.name;
            buffers_.push_back(std::move(b));
          }
          return std::make_pair(it->second, layout);
        }
      }
      return gemm->emitError("cannot find the high-precision value behind "
                             "this GEMM's FP8 operand (expected fp8.quantize, "
                             "fp8.transpose or a constant with fp8.source)");
    }
  }

  /// The routing behind group offsets or positions: their fp8.moe_permute.
  FailureOr<MoePermuteOp> routingOf(Operation *user, Value v) {
    if (auto p = v.getDefiningOp<MoePermuteOp>())
      return p;
    return user->emitError("expected the group offsets and positions of an "
                           "fp8.moe_permute");
  }

  /// An MoE op of the reference: the routing's ids, experts and padding.
  LogicalResult moeReference(Operation *op, ::fp8::RefOp::Kind kind,
                             ArrayRef<Value> wide, MoePermuteOp routing,
                             Value out) {
    ::fp8::RefOp r;
    r.kind = kind;
    r.experts = routing.getExperts();
    r.align = routing.getAlign();
    for (Value v : wide) {
      FailureOr<std::string> n = refName(v, op);
      if (failed(n))
        return failure();
      r.inputs.push_back(*n);
    }
    FailureOr<std::string> ids = buffer(routing.getIds(), op);
    if (failed(ids))
      return failure();
    r.inputs.insert(kind == ::fp8::RefOp::Kind::Unpermute ? r.inputs.begin() + 1
                                                          : r.inputs.end(),
                    *ids);
    return addRef(r, out);
  }

  LogicalResult reference(Operation *op) {
    if (auto p = dyn_cast<MoePermuteOp>(op))
      return moeReference(op, ::fp8::RefOp::Kind::Permute, {p.getX()}, p,
                          p.getRows());
    if (auto u = dyn_cast<MoeUnpermuteOp>(op)) {
      FailureOr<MoePermuteOp> routing = routingOf(op, u.getPositions());
      if (failed(routing))
        return failure();
      return moeReference(op, ::fp8::RefOp::Kind::Unpermute,
                          {u.getY(), u.getWeights()}, *routing, u.getOut());
    }
    if (auto g = dyn_cast<GroupedScaledMatmulOp>(op); g && !isFullBatch(g)) {
      auto ta = traceOperand(op, g.getA(), toRecipe(g.getALayout()));
      auto tb = traceOperand(op, g.getB(), toRecipe(g.getBLayout()));
      if (failed(ta) || failed(tb))
        return failure();
      ::fp8::RefOp r;
      r.kind = ::fp8::RefOp::Kind::GroupedMatmul;
      r.form = toRecipe(g.getMode());
      r.aLayout = ta->second;
      r.bLayout = tb->second;
      const bool alongK = g.getMode() == GroupMode::AlongK;
      r.experts =
          cast<RankedTensorType>((alongK ? g.getD() : g.getB()).getType())
              .getDimSize(0);
      Value groups;
      if (g.getMode() != GroupMode::Contiguous) {
        // The group tensor itself, a graph input: the router's counts
        // (masked), or the forward's offsets, saved (along K).
        groups = g.getGroups();
        if (!isa<BlockArgument>(groups))
          return op->emitError("the runtime's reference cannot follow the ")
                 << (alongK ? "offsets" : "valid rows")
                 << " of this grouped GEMM: expected a function argument, "
                    "found the result of '"
                 << groups.getDefiningOp()->getName() << "'";
      } else {
        FailureOr<MoePermuteOp> routing = routingOf(op, g.getGroups());
        if (failed(routing))
          return failure();
        r.align = routing->getAlign();
        groups = routing->getIds();
      }
      FailureOr<std::string> gn = buffer(groups, op);
      if (failed(gn))
        return failure();
      r.inputs = {ta->first, tb->first, *gn};
      return addRef(r, g.getResult());
    }
    if (auto mm = dyn_cast<ScaledMatmulOp>(op))
      if (auto il = interleavedB(mm))
        return pairReference(mm, il);
    if (isa<ScaledMatmulOp, GroupedScaledMatmulOp>(op)) {
      ::fp8::RefOp r;
      r.kind = ::fp8::RefOp::Kind::Matmul;
      const GemmOperands ops = gemmOperandsOf(op);
      const ::fp8::ScaledGemmArgs &args = ops.args;
      const Value a = ops.a, b = ops.b, c = ops.c;
      r.batched = ops.grouped;
      auto ta = traceOperand(op, a, args.a.layout);
      auto tb = traceOperand(op, b, args.b.layout);
      if (failed(ta) || failed(tb))
        return failure();
      r.inputs = {ta->first, tb->first};
      r.aLayout = ta->second;
      r.bLayout = tb->second;
      if (c) {
        FailureOr<std::string> cn = refName(c, op);
        if (failed(cn))
          return failure();
        r.inputs.push_back(*cn);
      }
      return addRef(r, op->getResult(0));
    }
    const bool sum = isReductionCandidate(op) &&
                     (getKernel(op) || op->hasAttr(kFusedIntoAttr));
    if (sum || (isElementwiseCandidate(op) && !isa<linalg::FillOp>(op) &&
                (getKernel(op) || op->hasAttr(kFusedIntoAttr)))) {
      std::string why;
      FailureOr<ElementwiseMatch> m =
          sum ? matchReduction(op, why) : matchElementwise(op, why);
      if (failed(m))
        return op->emitError("the runtime cannot execute '")
               << op->getName() << "': " << why;
      ::fp8::RefOp r;
      r.kind =
          sum ? ::fp8::RefOp::Kind::Reduce : ::fp8::RefOp::Kind::Elementwise;
      r.program = m->program;
      for (Value v : m->inputs) {
        FailureOr<std::string> n = refName(v, op);
        if (failed(n))
          return failure();
        r.inputs.push_back(*n);
      }
      return addRef(r, op->getResult(0));
    }
    return success();
  }

  /// The fp8.interleave_rows behind a GEMM's B (through its quantize), if
  /// any.
  static InterleaveRowsOp interleavedB(ScaledMatmulOp mm) {
    auto q = mm.getB().getDefiningOp<QuantizeOp>();
    return q ? q.getInput().getDefiningOp<InterleaveRowsOp>()
             : InterleaveRowsOp();
  }

  /// A GEMM over interleaved weights, whose result fp8.deinterleave_cols
  /// splits, is the two GEMMs of the graph it came from: the reference
  /// computes those, each half of the split from its own weights.
  LogicalResult pairReference(ScaledMatmulOp mm, InterleaveRowsOp il) {
    Value d = mm.getD();
    auto split = d.hasOneUse()
                     ? dyn_cast<DeinterleaveColsOp>(*d.getUsers().begin())
                     : DeinterleaveColsOp();
    if (!split || split.getBlock() != il.getBlock() || mm.getC())
      return mm.emitError("the reference cannot follow a GEMM over "
                          "interleaved weights whose result is not split by "
                          "an fp8.deinterleave_cols of the same block");
    const GemmOperands ops = gemmOperandsOf(mm);
    auto ta = traceOperand(mm, ops.a, ops.args.a.layout);
    if (failed(ta))
      return failure();
    for (auto [w, half] : {std::pair<Value, Value>{il.getA(), split.getFirst()},
                           {il.getB(), split.getSecond()}}) {
      FailureOr<std::string> wn = refName(w, mm);
      if (failed(wn))
        return failure();
      ::fp8::RefOp r;
      r.kind = ::fp8::RefOp::Kind::Matmul;
      r.inputs = {ta->first, *wn};
      r.aLayout = ta->second;
      r.bLayout = ops.args.b.layout;
      if (failed(addRef(r, half)))
        return failure();
    }
    return success();
  }

  LogicalResult addRef(::fp8::RefOp r, Value out) {
    r.out = nameOf(out);
    r.dtype = *toDType(cast<RankedTensorType>(out.getType()).getElementType());
    r.shape = shapes_.shapeExpr(out);
    refValues_.insert(out);
    plan_.reference.push_back(std::move(r));
    return success();
  }

  func::FuncOp fn_;
  ::fp8::Arch arch_;
  SymbolicShapes shapes_;
  ::fp8::Plan plan_;
  llvm::DenseMap<Value, std::string> names_;
  llvm::DenseMap<Value, std::string> bufferOf_;
  /// The amax buffer of a GEMM's result that its epilogue writes.
  llvm::DenseMap<Value, std::string> amaxOf_;
  llvm::DenseMap<Operation *, std::string> sourceBuffers_;
  llvm::DenseSet<Value> refValues_;
  std::set<std::string> prepared_;
  std::vector<::fp8::PlanBuffer> buffers_;
  int next_ = 0;
};

} // namespace

FailureOr<::fp8::Plan> mlir::fp8::buildPlan(ModuleOp module) {
  std::optional<::fp8::Arch> arch = getTarget(module);
  if (!arch)
    return emitError(module.getLoc(),
                     "expected the module's 'fp8.target' (compile it "
                     "with fp8-opt --fp8-compile{arch=...} first)");
  SmallVector<func::FuncOp> fns;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      fns.push_back(fn);
  if (fns.size() != 1)
    return emitError(module.getLoc(),
                     "expected one function with a body (the graph), "
                     "found ")
           << fns.size();
  return PlanBuilder(fns[0], *arch).build();
}
