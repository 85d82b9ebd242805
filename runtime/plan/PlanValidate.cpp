//===- PlanValidate.cpp - The checks of a parsed plan ---------------------===//

#include "runtime/plan/Plan.h"

#include "core/JsonFields.h"

#include <algorithm>
#include <set>

namespace fp8 {

namespace {
constexpr IntRange kBatchRange{1, kMaxBatch};
constexpr IntRange kHistoryRange{1, kMaxHistory};
constexpr IntRange kAlignRange{1, kMaxAlign};

std::string shapeString(const ShapeExpr &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + s[i].toString();
  return out + "]";
}

DType scaleType(const Granularity &g) {
  return g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32;
}

/// A step's operand: the buffer, checked to exist.
Expected<const PlanBuffer *> operand(const Plan &plan, const PlanStep &s,
                                     const std::string &name) {
  const PlanBuffer *b = plan.buffer(name);
  if (!b)
    return errorf("step '", s.name, "' uses buffer '", name,
                  "', which the plan does not declare");
  return b;
}

Status expectType(const PlanStep &s, const PlanBuffer &b, DType want,
                  const char *what) {
  if (b.dtype != want)
    return errorf("step '", s.name, "': expected ", what, " '", b.name,
                  "' to be ", toString(want), ", found ", toString(b.dtype));
  return Status::ok();
}

Status expectCount(const PlanStep &s, const char *what, size_t found, size_t lo,
                   size_t hi) {
  if (found < lo || found > hi) {
    if (lo == hi)
      return errorf("step '", s.name, "': expected ", lo, " ", what, ", found ",
                    found);
    return errorf("step '", s.name, "': expected ", lo, " to ", hi, " ", what,
                  ", found ", found);
  }
  return Status::ok();
}

/// [A-Za-z_][A-Za-z0-9_]{0,127}
bool isPlainName(const std::string &n) {
  if (n.empty() || n.size() > 128 || (n[0] >= '0' && n[0] <= '9'))
    return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

/// The dynamic dimensions a shape names are among the plan's `dims`.
Status checkDims(const ShapeExpr &shape, const std::set<std::string> &dims,
                 const std::string &what) {
  for (const DimExpr &d : shape)
    if (!d.isStatic() && !dims.count(d.dim))
      return errorf("shape ", shapeString(shape), " of ", what,
                    " uses dimension '", d.dim,
                    "', which 'dims' does not declare");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

/// Names, shapes, states and constants of the buffers.
Status checkBuffers(const Plan &plan, const std::set<std::string> &dims) {
  std::set<std::string> names;
  for (const PlanBuffer &b : plan.buffers) {
    // Names become file names (fp8-run --outputs, --inputs, --save-inputs):
    // plain identifiers only, so that none can reach outside a directory.
    if (!isPlainName(b.name))
      return errorf("expected a buffer name of letters, digits and '_' "
                    "(not starting with a digit, at most 128), found '",
                    b.name, "'");
    if (!names.insert(b.name).second)
      return errorf("expected unique, non-empty buffer names, found '", b.name,
                    "' twice");
    FP8_RETURN_IF_ERROR(checkDims(b.shape, dims, "buffer '" + b.name + "'"));
    if (b.role == BufferRole::State) {
      if (!kHistoryRange.contains(b.history) || b.dtype != DType::F32 ||
          b.shape.size() != 1 || !b.shape[0].isStatic() ||
          b.shape[0].value != b.history + 4)
        return errorf("expected state buffer '", b.name,
                      "' to be f32 [history + 4] with a positive history, "
                      "found ",
                      toString(b.dtype), " ", shapeString(b.shape),
                      " with history ", b.history);
    }
    if (b.role == BufferRole::Constant) {
      int64_t n = 1;
      for (const DimExpr &d : b.shape) {
        if (!d.isStatic())
          return errorf("expected constant '", b.name,
                        "' to have a static shape, found ",
                        shapeString(b.shape));
        n *= d.value;
      }
      if (int64_t(b.data.size()) != bytesOf(b.dtype, n))
        return errorf("expected constant '", b.name, "' to hold ",
                      bytesOf(b.dtype, n), " bytes (", toString(b.dtype), " ",
                      shapeString(b.shape), "), found ", b.data.size());
    }
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// What the steps so far have written, and what exists before the first
/// run (weights, constants and the results of prepare steps).
struct Dataflow {
  std::set<std::string> written, preparable;
};

/// A step's inputs and outputs: declared buffers, single assignment, in
/// order; prepare steps read only what exists before the first run.
Status checkOperands(const Plan &plan, const PlanStep &s, Dataflow &flow,
                     std::vector<const PlanBuffer *> &in,
                     std::vector<const PlanBuffer *> &out) {
  for (const std::string &n : s.inputs) {
    auto b = operand(plan, s, n);
    if (!b)
      return b.status();
    const BufferRole r = (*b)->role;
    if ((r == BufferRole::Temp || r == BufferRole::Output) &&
        !flow.written.count(n))
      return errorf("step '", s.name, "' reads '", n,
                    "' before any step writes it");
    if (r == BufferRole::State)
      return errorf("step '", s.name, "' reads state '", n,
                    "' as an input (states are a step's 'state')");
    if (s.phase == Phase::Prepare && !flow.preparable.count(n))
      return errorf("prepare step '", s.name, "' reads '", n,
                    "', which is not a weight, a constant or a prepare "
                    "result");
    in.push_back(*b);
  }
  for (const std::string &n : s.outputs) {
    auto b = operand(plan, s, n);
    if (!b)
      return b.status();
    if ((*b)->role != BufferRole::Temp && (*b)->role != BufferRole::Output)
      return errorf("step '", s.name, "' writes ", toString((*b)->role), " '",
                    n, "' (only temp and output buffers are written)");
    if (!flow.written.insert(n).second)
      return errorf("step '", s.name, "' writes '", n,
                    "', which an earlier step wrote");
    if (s.phase == Phase::Prepare)
      flow.preparable.insert(n);
    out.push_back(*b);
  }
  return Status::ok();
}

Status checkQuantizeStep(const Plan &plan, const PlanStep &s,
                         const std::vector<const PlanBuffer *> &in,
                         const std::vector<const PlanBuffer *> &out) {
  const ElementwiseSpec &q = s.aux;
  // (a spec read from JSON was checked there; one built in code is here)
  FP8_RETURN_IF_ERROR(
      checkElementwiseSpec(q).withContext("step '" + s.name + "'"));
  const size_t tensors = programTensorInputs(q);
  const size_t want = tensors + (q.amaxIn ? 1 : 0);
  FP8_RETURN_IF_ERROR(
      expectCount(s,
                  q.rowSum   ? "inputs (one per program input but the row sum)"
                  : q.amaxIn ? "inputs (one per program input, then the amax)"
                             : "inputs (one per program input)",
                  in.size(), want, want));
  FP8_RETURN_IF_ERROR(
      expectCount(s, "outputs (codes, scales)", out.size(), 2, 2));
  for (size_t i = 0; i < tensors; ++i)
    FP8_RETURN_IF_ERROR(
        expectType(s, *in[i], q.program.inputs[i], "program input"));
  if (q.amaxIn) // (the amax of each matrix, a GEMM's: KernelSpec::amaxOut)
    FP8_RETURN_IF_ERROR(expectType(s, *in[tensors], DType::F32, "amax"));
  FP8_RETURN_IF_ERROR(expectType(s, *out[0], q.quant.format, "codes"));
  FP8_RETURN_IF_ERROR(
      expectType(s, *out[1], scaleType(q.quant.granularity), "scales"));
  const bool delayed = q.quant.mode == ScalingMode::Delayed;
  if (delayed != !s.state.empty())
    return errorf("step '", s.name, "': expected ",
                  delayed ? "a 'state' (the amax history of delayed "
                            "scaling)"
                          : "no 'state' with current scaling");
  if (delayed) {
    const PlanBuffer *st = plan.buffer(s.state);
    if (!st || st->role != BufferRole::State)
      return errorf("step '", s.name, "': expected state '", s.state,
                    "' to be a buffer of role state");
    if (st->history != q.quant.delayed.historyLength)
      return errorf("step '", s.name, "': expected state '", s.state,
                    "' to hold a history of ", q.quant.delayed.historyLength,
                    " amaxes, found ", st->history);
  }
  return Status::ok();
}

Status checkTransposeStep(const PlanStep &s,
                          const std::vector<const PlanBuffer *> &in,
                          const std::vector<const PlanBuffer *> &out) {
  FP8_RETURN_IF_ERROR(
      expectCount(s, "inputs (codes, scales)", in.size(), 2, 2));
  FP8_RETURN_IF_ERROR(
      expectCount(s, "outputs (codes, scales)", out.size(), 2, 2));
  for (int i = 0; i < 2; ++i) {
    const DType want =
        i == 0 ? s.aux.quant.format : scaleType(s.aux.quant.granularity);
    FP8_RETURN_IF_ERROR(
        expectType(s, *in[size_t(i)], want, i == 0 ? "codes" : "scales"));
    FP8_RETURN_IF_ERROR(
        expectType(s, *out[size_t(i)], want, i == 0 ? "codes" : "scales"));
  }
  return Status::ok();
}

Status checkElementwiseStep(const PlanStep &s,
                            const std::vector<const PlanBuffer *> &in,
                            const std::vector<const PlanBuffer *> &out) {
  FP8_RETURN_IF_ERROR(expectCount(s, "inputs (one per program input)",
                                  in.size(), s.aux.program.inputs.size(),
                                  s.aux.program.inputs.size()));
  FP8_RETURN_IF_ERROR(expectCount(s, "outputs", out.size(), 1, 1));
  for (size_t i = 0; i < in.size(); ++i)
    FP8_RETURN_IF_ERROR(
        expectType(s, *in[i], s.aux.program.inputs[i], "program input"));
  FP8_RETURN_IF_ERROR(
      expectType(s, *out[0], s.aux.out,
                 s.kind == StepKind::Reduce ? "row sums" : "output"));
  return Status::ok();
}

Status checkGemmStep(const Plan &plan, const PlanStep &s,
                     const std::vector<const PlanBuffer *> &in,
                     const std::vector<const PlanBuffer *> &out) {
  const KernelSpec &k = s.gemm;
  const bool grouped = k.kind != GemmKind::Dense;
  const size_t want = k.accumulate || grouped ? 5 : 4;
  FP8_RETURN_IF_ERROR(expectCount(s,
                                  grouped ? "inputs (a, a_scale, b, "
                                            "b_scale, groups)"
                                  : k.accumulate
                                      ? "inputs (a, a_scale, b, b_scale, c)"
                                      : "inputs (a, a_scale, b, b_scale)",
                                  in.size(), want, want));
  if (k.epilogue)
    FP8_RETURN_IF_ERROR(
        expectCount(s, "outputs (codes, scales: the epilogue quantizes D)",
                    out.size(), 2, 2));
  else if (k.amaxOut)
    FP8_RETURN_IF_ERROR(expectCount(s,
                                    "outputs (d, amax: the epilogue "
                                    "writes D's amax)",
                                    out.size(), 2, 2));
  else
    FP8_RETURN_IF_ERROR(expectCount(s, "outputs (d)", out.size(), 1, 1));
  FP8_RETURN_IF_ERROR(expectType(s, *in[0], k.a.format, "A"));
  FP8_RETURN_IF_ERROR(
      expectType(s, *in[1], scaleType(k.a.granularity), "A's scales"));
  FP8_RETURN_IF_ERROR(expectType(s, *in[2], k.b.format, "B"));
  FP8_RETURN_IF_ERROR(
      expectType(s, *in[3], scaleType(k.b.granularity), "B's scales"));
  if (k.accumulate && !grouped)
    FP8_RETURN_IF_ERROR(expectType(s, *in[4], k.out, "C"));
  if (k.epilogue) {
    FP8_RETURN_IF_ERROR(expectType(s, *out[0], k.epilogue->format, "codes"));
    FP8_RETURN_IF_ERROR(
        expectType(s, *out[1], scaleType(k.epilogue->granularity), "scales"));
    if (grouped || k.accumulate || s.batch != 1)
      return errorf("step '", s.name,
                    "': expected a single dense GEMM that writes D (no "
                    "groups, no batch, no C) with a quantizing epilogue");
  } else {
    FP8_RETURN_IF_ERROR(expectType(s, *out[0], k.out, "D"));
    if (k.amaxOut)
      FP8_RETURN_IF_ERROR(expectType(s, *out[1], DType::F32, "D's amax"));
  }
  if (k.arch != plan.arch)
    return errorf("step '", s.name, "': expected a kernel for the plan's ",
                  toString(plan.arch), ", found ", toString(k.arch));
  FP8_RETURN_IF_ERROR(checkKernelSpec(k).withContext("step '" + s.name + "'"));
  if (grouped) {
    // Contiguous: the rows of one A after another, offsets [G + 1]. Masked:
    // A a stack of G slabs, valid rows [G]. B a stack of the groups'
    // matrices. Along K: one A and one B holding every group's K, offsets
    // [G + 1]. The group tensor a buffer (written before the step, or an
    // input).
    const bool masked = k.kind == GemmKind::GroupedMasked;
    const bool alongK = k.kind == GemmKind::GroupedK;
    if (k.accumulate)
      return errorf("step '", s.name,
                    "': expected accumulate false in a grouped GEMM step (a "
                    "plan's grouped GEMMs write D), found true");
    if (s.batch != 1)
      return errorf("step '", s.name,
                    "': expected batch 1 for a grouped GEMM, found ", s.batch);
    const char *what = masked ? "valid rows" : "group offsets";
    FP8_RETURN_IF_ERROR(expectType(s, *in[4], DType::I32, what));
    const int64_t count = masked ? k.groups : k.groups + 1;
    const ShapeExpr &o = in[4]->shape;
    if (o.size() != 1 || !o[0].isStatic() || o[0].value != count)
      return errorf("step '", s.name, "': expected ", what, " of shape [",
                    count, "], found ", shapeString(o));
    const size_t rank = masked ? 3 : 2, rankB = alongK ? 2 : 3;
    if (in[0]->shape.size() != rank || in[2]->shape.size() != rankB)
      return errorf("step '", s.name, "': expected A of rank ", rank,
                    " and B of rank ", rankB,
                    alongK ? " (every group's K)" : " (the groups' stack)",
                    ", found ", shapeString(in[0]->shape), " and ",
                    shapeString(in[2]->shape));
    if (alongK && (out[0]->shape.size() != 3 || !out[0]->shape[0].isStatic() ||
                   out[0]->shape[0].value != k.groups))
      return errorf("step '", s.name, "': expected D [", k.groups,
                    ", M, N] (one result per group), found ",
                    shapeString(out[0]->shape));
    return Status::ok();
  }
  if (!kBatchRange.contains(s.batch))
    return integerFieldError("batch", "step '" + s.name + "'", kBatchRange,
                             std::to_string(s.batch));
  const size_t rank = s.batch > 1 ? 3 : 2;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]->shape.size() != rank)
      return errorf("step '", s.name, "': expected rank-", rank, " operands",
                    s.batch > 1 ? " (batched GEMM)" : "", ", found '",
                    in[i]->name, "' of shape ", shapeString(in[i]->shape));
  return Status::ok();
}

Status checkPermuteStep(const PlanStep &s,
                        const std::vector<const PlanBuffer *> &in,
                        const std::vector<const PlanBuffer *> &out) {
  FP8_RETURN_IF_ERROR(expectCount(s, "inputs (x, ids)", in.size(), 2, 2));
  FP8_RETURN_IF_ERROR(
      expectCount(s, "outputs (codes, scales, offsets, positions, source)",
                  out.size(), 5, 5));
  FP8_RETURN_IF_ERROR(
      expectType(s, *in[0], s.aux.program.inputs[0], "rows (x)"));
  FP8_RETURN_IF_ERROR(expectType(s, *in[1], DType::I32, "routing ids"));
  FP8_RETURN_IF_ERROR(expectType(s, *out[0], s.aux.quant.format, "codes"));
  FP8_RETURN_IF_ERROR(
      expectType(s, *out[1], scaleType(s.aux.quant.granularity), "scales"));
  for (size_t i = 2; i < 5; ++i)
    FP8_RETURN_IF_ERROR(expectType(s, *out[i], DType::I32,
                                   i == 2   ? "group offsets"
                                   : i == 3 ? "positions"
                                            : "source rows"));
  if (!kAlignRange.contains(s.align))
    return integerFieldError("align", "step '" + s.name + "'", kAlignRange,
                             std::to_string(s.align));
  const ShapeExpr &o = out[2]->shape;
  if (o.size() != 1 || !o[0].isStatic() || o[0].value < 2 ||
      o[0].value > kMaxExperts + 1)
    return errorf("step '", s.name,
                  "': expected group offsets of shape "
                  "[E + 1] with 1 <= E <= ",
                  kMaxExperts, ", found ", shapeString(o));
  return Status::ok();
}

Status checkInterleaveStep(const PlanStep &s,
                           const std::vector<const PlanBuffer *> &in,
                           const std::vector<const PlanBuffer *> &out) {
  FP8_RETURN_IF_ERROR(expectCount(s, "inputs (a, b)", in.size(), 2, 2));
  FP8_RETURN_IF_ERROR(expectCount(s, "outputs", out.size(), 1, 1));
  for (size_t i = 0; i < 2; ++i)
    FP8_RETURN_IF_ERROR(expectType(s, *in[i], s.aux.program.inputs[0], "rows"));
  FP8_RETURN_IF_ERROR(expectType(s, *out[0], s.aux.out, "output"));
  for (const PlanBuffer *b : {in[0], in[1], out[0]})
    if (b->shape.size() != 2)
      return errorf("step '", s.name, "': expected rank-2 operands, found '",
                    b->name, "' of shape ", shapeString(b->shape));
  return Status::ok();
}

Status checkUnpermuteStep(const PlanStep &s,
                          const std::vector<const PlanBuffer *> &in,
                          const std::vector<const PlanBuffer *> &out) {
  FP8_RETURN_IF_ERROR(
      expectCount(s, "inputs (y, positions, weights)", in.size(), 3, 3));
  FP8_RETURN_IF_ERROR(expectCount(s, "outputs", out.size(), 1, 1));
  FP8_RETURN_IF_ERROR(
      expectType(s, *in[0], s.aux.program.inputs[0], "rows (y)"));
  FP8_RETURN_IF_ERROR(expectType(s, *in[1], DType::I32, "positions"));
  FP8_RETURN_IF_ERROR(expectType(s, *in[2], DType::F32, "routing weights"));
  FP8_RETURN_IF_ERROR(expectType(s, *out[0], s.aux.out, "output"));
  return Status::ok();
}

/// Every step: its name, its operands, and what its kind asks of them.
Status checkSteps(const Plan &plan, Dataflow &flow) {
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Weight || b.role == BufferRole::Constant)
      flow.preparable.insert(b.name);
  std::set<std::string> stepNames;
  for (const PlanStep &s : plan.steps) {
    if (s.name.empty() || !stepNames.insert(s.name).second)
      return errorf("expected unique, non-empty step names, found '", s.name,
                    "' twice");
    std::vector<const PlanBuffer *> in, out;
    FP8_RETURN_IF_ERROR(checkOperands(plan, s, flow, in, out));
    switch (s.kind) {
    case StepKind::Quantize:
      FP8_RETURN_IF_ERROR(checkQuantizeStep(plan, s, in, out));
      break;
    case StepKind::Transpose:
      FP8_RETURN_IF_ERROR(checkTransposeStep(s, in, out));
      break;
    case StepKind::Elementwise:
    case StepKind::Reduce: // one output, the program's inputs
      FP8_RETURN_IF_ERROR(checkElementwiseStep(s, in, out));
      break;
    case StepKind::Gemm:
      FP8_RETURN_IF_ERROR(checkGemmStep(plan, s, in, out));
      break;
    case StepKind::Permute:
      FP8_RETURN_IF_ERROR(checkPermuteStep(s, in, out));
      break;
    case StepKind::Unpermute:
      FP8_RETURN_IF_ERROR(checkUnpermuteStep(s, in, out));
      break;
    case StepKind::Interleave:
      FP8_RETURN_IF_ERROR(checkInterleaveStep(s, in, out));
      break;
    }
    if (s.kind != StepKind::Gemm && s.aux.kind != auxKindOf(s.kind))
      return errorf("expected the kernel spec of ", toString(s.kind), " step '",
                    s.name, "' to be a ", toString(auxKindOf(s.kind)),
                    " spec, found ", toString(s.aux.kind));
    if (s.kind != StepKind::Gemm && s.aux.arch != plan.arch)
      return errorf("step '", s.name, "': expected a kernel for the plan's ",
                    toString(plan.arch), ", found ", toString(s.aux.arch));
  }
  return Status::ok();
}

/// The graph's outputs are the output buffers, each written by a step.
Status checkOutputs(const Plan &plan, const Dataflow &flow) {
  for (const std::string &o : plan.outputs) {
    const PlanBuffer *b = plan.buffer(o);
    if (!b || b->role != BufferRole::Output)
      return errorf("expected graph output '", o,
                    "' to be a buffer of role output");
    if (!flow.written.count(o))
      return errorf("graph output '", o, "' is never written by a step");
  }
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Output &&
        std::find(plan.outputs.begin(), plan.outputs.end(), b.name) ==
            plan.outputs.end())
      return errorf("buffer '", b.name,
                    "' has role output but is not in 'outputs'");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Reference
//===----------------------------------------------------------------------===//

/// The reference graph reads high-precision values only, defines each value
/// once, and has one for every graph output.
Status checkReference(const Plan &plan, const std::set<std::string> &dims) {
  std::set<std::string> refValues;
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Input || b.role == BufferRole::Weight ||
        (b.role == BufferRole::Constant && isWide(b.dtype)))
      refValues.insert(b.name);
  // Inputs per reference op kind (MoE ops), and what each must be.
  auto moeInputs = [](RefOp::Kind k) -> std::pair<size_t, size_t> {
    switch (k) {
    case RefOp::Kind::Permute:
      return {2, 2};
    case RefOp::Kind::GroupedMatmul:
      return {3, 3};
    default:
      return {3, 3};
    }
  };
  for (const RefOp &r : plan.reference) {
    for (const std::string &n : r.inputs)
      if (!refValues.count(n))
        return errorf("reference op '", r.out, "' reads '", n,
                      "', which is neither a high-precision input, weight or "
                      "constant nor an earlier reference value");
    FP8_RETURN_IF_ERROR(
        checkDims(r.shape, dims, "reference value '" + r.out + "'"));
    if (r.kind == RefOp::Kind::Matmul) {
      if (r.inputs.size() < 2 || r.inputs.size() > 3)
        return errorf(
            "expected 2 or 3 inputs (a, b[, c]) for reference matmul '", r.out,
            "', found ", r.inputs.size());
    } else if (r.kind != RefOp::Kind::Elementwise &&
               r.kind != RefOp::Kind::Reduce) {
      const auto [lo, hi] = moeInputs(r.kind);
      if (r.inputs.size() < lo || r.inputs.size() > hi)
        return errorf("expected ", lo, " inputs for reference ",
                      toString(r.kind), " '", r.out, "', found ",
                      r.inputs.size());
      if (r.experts < 1 || r.experts > kMaxExperts || r.align < 1 ||
          r.align > kMaxAlign)
        return errorf("reference ", toString(r.kind), " '", r.out,
                      "': expected 1 <= experts <= ", kMaxExperts,
                      " and 1 <= align <= ", kMaxAlign, ", found ", r.experts,
                      " and ", r.align);
    } else if (r.inputs.size() != r.program.inputs.size()) {
      return errorf("expected ", r.program.inputs.size(),
                    " inputs for reference op '", r.out, "', found ",
                    r.inputs.size());
    }
    if (!refValues.insert(r.out).second)
      return errorf("reference value '", r.out, "' is defined twice");
    // A reference value named after a temp or output buffer stands for the
    // same tensor (--verify compares them): it must agree with the buffer's
    // declaration, which would otherwise be sized by the reference's.
    if (const PlanBuffer *b = plan.buffer(r.out)) {
      if (r.shape != b->shape)
        return errorf("reference value '", r.out, "': expected shape ",
                      shapeString(b->shape), " (that of buffer '", b->name,
                      "'), found ", shapeString(r.shape));
      if (r.dtype != b->dtype)
        return errorf("reference value '", r.out, "': expected element type ",
                      toString(b->dtype), " (that of buffer '", b->name,
                      "'), found ", toString(r.dtype));
    }
  }
  for (const std::string &o : plan.outputs)
    if (!plan.reference.empty() && !refValues.count(o))
      return errorf("graph output '", o, "' has no reference value");
  return Status::ok();
}
} // namespace

Status validatePlan(const Plan &plan) {
  std::set<std::string> dims(plan.dims.begin(), plan.dims.end());
  if (dims.size() != plan.dims.size())
    return errorf("expected distinct dimension names in 'dims'");
  FP8_RETURN_IF_ERROR(checkBuffers(plan, dims));
  Dataflow flow;
  FP8_RETURN_IF_ERROR(checkSteps(plan, flow));
  FP8_RETURN_IF_ERROR(checkOutputs(plan, flow));
  return checkReference(plan, dims);
}

} // namespace fp8
