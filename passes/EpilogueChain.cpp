//===- EpilogueChain.cpp - A GEMM result quantized in the epilogue --------===//

#include "passes/EpilogueChain.h"

#include "passes/ElementwiseProgram.h"
#include "passes/KernelAttrs.h"

#include "dialect/FP8Attrs.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// The only user of `v`, or null.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

std::string opName(Operation *op) {
  return "'" + op->getName().getStringRef().str() + "'";
}
} // namespace

FailureOr<EpilogueChain> mlir::fp8::epilogueChainFrom(ArrayRef<Value> sources,
                                                      std::string &why) {
  EpilogueChain chain;
  Operation *user = soleUser(sources[0]);
  for (Value v : sources.drop_front())
    if (soleUser(v) != user)
      user = nullptr;
  if (!user) {
    why = sources.size() == 1
              ? "its result has " +
                    std::to_string(std::distance(sources[0].use_begin(),
                                                 sources[0].use_end())) +
                    " users, expected one"
              : "the halves of its result do not feed one op, their only "
                "user";
    return failure();
  }
  // An elementwise op over the sources alone, whose only user quantizes.
  ::fp8::EwProgram program =
      ::fp8::EwProgram::identity(*elementDType(sources[0]));
  if (!isa<QuantizeOp>(user)) {
    if (!isElementwiseCandidate(user)) {
      why = "its result feeds " + opName(user) + ", not an elementwise op";
      return failure();
    }
    std::string reason;
    FailureOr<ElementwiseMatch> m = matchElementwise(user, reason);
    if (failed(m)) {
      why = "its elementwise user has no program: " + reason;
      return failure();
    }
    const bool same =
        m->inputs.size() == sources.size() &&
        std::equal(m->inputs.begin(), m->inputs.end(), sources.begin());
    const bool swapped = sources.size() == 2 && m->inputs.size() == 2 &&
                         m->inputs[0] == sources[1] &&
                         m->inputs[1] == sources[0];
    if ((!same && !swapped) || m->program.broadcasts()) {
      why = "its elementwise user reads other tensors than the GEMM's result";
      return failure();
    }
    program = m->program;
    if (swapped) {
      // The program's inputs in the sources' order (a SwiGLU may name the
      // up half first).
      auto swap = [](::fp8::EwArg &a) {
        if (a.kind == ::fp8::EwArg::Kind::Input)
          a.index = 1 - a.index;
      };
      std::swap(program.inputs[0], program.inputs[1]);
      for (::fp8::EwInstr &in : program.instrs)
        for (::fp8::EwArg &a : in.args)
          swap(a);
      swap(program.result);
    }
    chain.program = user;
    user = soleUser(user->getResult(0));
    if (!user || !isa<QuantizeOp>(user)) {
      why = "the elementwise op's result does not feed one fp8.quantize, "
            "its only user";
      return failure();
    }
  } else if (sources.size() != 1) {
    why = "the halves of its result feed no elementwise op";
    return failure();
  }
  auto q = cast<QuantizeOp>(user);
  chain.quantize = q;
  const ::fp8::Granularity g = toRecipe(q.getGranularity());
  if (q.getScaling().isDelayed() || q.getHistory() || q.getStats()) {
    why = "its quantize has delayed scaling or statistics";
    return failure();
  }
  if (g.rows != 1) {
    why = "its quantize's scale blocks (" + ::fp8::toString(g) +
          ") do not lie along the rows";
    return failure();
  }
  chain.epilogue.program = std::move(program);
  chain.epilogue.format = *elementDType(q.getOutput());
  chain.epilogue.granularity = g;
  return chain;
}

FailureOr<EpilogueChain> mlir::fp8::epilogueChainOf(ScaledMatmulOp mm,
                                                    std::string &why) {
  if (mm.getC()) {
    why = "the GEMM accumulates into C";
    return failure();
  }
  Value d = mm.getD();
  DeinterleaveColsOp split;
  SmallVector<Value, 2> sources{d};
  if (d.hasOneUse())
    if ((split = dyn_cast<DeinterleaveColsOp>(*d.getUsers().begin())))
      sources = {split.getFirst(), split.getSecond()};
  FailureOr<EpilogueChain> chain = epilogueChainFrom(sources, why);
  if (failed(chain))
    return failure();
  chain->matmul = mm;
  chain->split = split;
  chain->epilogue.pairBlock = split ? split.getBlock() : 0;
  return chain;
}
