//===- FuseResidual.cpp - --fp8-fuse-residual -----------------------------===//
//
// x + matmul(a, b) -> matmul(a, b) accumulating into x (Passes.td has the
// contract): the residual add of a transformer block goes into the GEMM's
// epilogue.
//
//===----------------------------------------------------------------------===//

#include "passes/ElementwiseProgram.h"
#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSERESIDUAL
#include "passes/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
using ::fp8::EwArg;
using ::fp8::EwOp;

namespace {

/// True when `p` adds its two inputs in the result type: add(in0, in1), or
/// both widened to f32, added and rounded back.
bool isPlainAdd(const ::fp8::EwProgram &p) {
  if (p.inputs.size() != 2 || p.broadcasts() || p.inputs[0] != p.inputs[1])
    return false;
  const ::fp8::DType t = p.inputs[0];
  auto isInputs = [](const EwArg &a, const EwArg &b) {
    return a.kind == EwArg::Kind::Input && b.kind == EwArg::Kind::Input &&
           a.index != b.index;
  };
  if (p.instrs.size() == 1)
    return p.instrs[0].op == EwOp::Add && p.instrs[0].type == t &&
           isInputs(p.instrs[0].args[0], p.instrs[0].args[1]) &&
           p.result == EwArg::result(0);
  if (p.instrs.size() != 4)
    return false;
  const auto &w0 = p.instrs[0], &w1 = p.instrs[1], &add = p.instrs[2],
             &round = p.instrs[3];
  return w0.op == EwOp::Convert && w1.op == EwOp::Convert &&
         w0.type == ::fp8::DType::F32 && w1.type == ::fp8::DType::F32 &&
         isInputs(w0.args[0], w1.args[0]) && add.op == EwOp::Add &&
         add.type == ::fp8::DType::F32 &&
         ((add.args[0] == EwArg::result(0) &&
           add.args[1] == EwArg::result(1)) ||
          (add.args[0] == EwArg::result(1) &&
           add.args[1] == EwArg::result(0))) &&
         round.op == EwOp::Convert && round.type == t &&
         round.args[0] == EwArg::result(2) && p.result == EwArg::result(3);
}

/// True when `v` is available at `op`: a block argument of its block, or
/// defined before it there.
bool definedBefore(Value v, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == op->getBlock();
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

struct FuseResidualPass
    : mlir::fp8::impl::FP8FuseResidualBase<FuseResidualPass> {
  void runOnOperation() override {
    SmallVector<std::pair<Operation *, linalg::MatmulOp>> folds;
    getOperation().walk([&](Operation *add) {
      if (!isElementwiseCandidate(add))
        return;
      std::string why;
      FailureOr<ElementwiseMatch> m = matchElementwise(add, why);
      if (failed(m) || !isPlainAdd(m->program))
        return;
      for (int k = 0; k < 2; ++k) {
        auto mm = m->inputs[size_t(k)].getDefiningOp<linalg::MatmulOp>();
        Value x = m->inputs[size_t(1 - k)];
        if (!mm || !mm->hasOneUse() || mm.getNumDpsInits() != 1 ||
            !isZeroInit(mm.getDpsInits()[0]) ||
            x.getType() != mm->getResult(0).getType() ||
            add->getResult(0).getType() != x.getType() || !definedBefore(x, mm))
          continue;
        folds.push_back({add, mm});
        return;
      }
    });
    for (auto &[add, mm] : folds) {
      Value x = add->getOperand(0) == mm->getResult(0) ? add->getOperand(1)
                                                       : add->getOperand(0);
      // A generic's operands: the one that is not the product.
      if (auto l = dyn_cast<linalg::LinalgOp>(add))
        for (OpOperand *in : l.getDpsInputOperands())
          if (in->get() != mm->getResult(0))
            x = in->get();
      mm.getDpsInitsMutable()[0].set(x);
      add->getResult(0).replaceAllUsesWith(mm->getResult(0));
      add->erase();
    }
  }
};

} // namespace
