//===- PlanJson.cpp - A plan's JSON form: writing, reading ----------------===//

#include "runtime/plan/Plan.h"

#include "runtime/plan/Base64.h"

#include "core/InputFile.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace fp8 {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
ojson shapeToJSON(const ShapeExpr &s) {
  ojson a = ojson::array();
  for (const DimExpr &d : s)
    if (d.isStatic())
      a.push_back(d.value);
    else
      a.push_back(d.toString());
  return a;
}

ojson programJSON(const EwProgram &p) { return ojson::parse(toJSON(p)); }
} // namespace

std::string toJSON(const Plan &plan) {
  ojson j;
  j["format"] = plan.format;
  j["function"] = plan.function;
  j["arch"] = std::string(toString(plan.arch));
  j["dims"] = plan.dims;
  ojson buffers = ojson::array();
  for (const PlanBuffer &b : plan.buffers) {
    ojson o;
    o["name"] = b.name;
    o["role"] = std::string(toString(b.role));
    o["dtype"] = std::string(toString(b.dtype));
    o["shape"] = shapeToJSON(b.shape);
    if (b.role == BufferRole::State)
      o["history"] = b.history;
    if (b.role == BufferRole::Constant)
      o["data"] = base64Encode(b.data);
    buffers.push_back(o);
  }
  j["buffers"] = buffers;
  ojson steps = ojson::array();
  for (const PlanStep &s : plan.steps) {
    ojson o;
    o["name"] = s.name;
    o["kind"] = std::string(toString(s.kind));
    o["phase"] = std::string(toString(s.phase));
    o["op"] = s.op;
    o["inputs"] = s.inputs;
    o["outputs"] = s.outputs;
    if (!s.state.empty())
      o["state"] = s.state;
    o["kernel"] = s.kernelName();
    if (s.kind == StepKind::Gemm) {
      o["batch"] = s.batch;
      o["tile_source"] = s.tileSource;
      o["runtime_tile"] = s.runtimeTile;
      o["spec"] = ojson::parse(toJSON(s.gemm));
    } else {
      if (s.kind == StepKind::Permute)
        o["align"] = s.align;
      if (s.kind == StepKind::Interleave)
        o["block"] = s.block;
      o["spec"] = ojson::parse(toJSON(s.aux));
    }
    steps.push_back(o);
  }
  j["steps"] = steps;
  j["outputs"] = plan.outputs;
  ojson ref = ojson::array();
  for (const RefOp &r : plan.reference) {
    ojson o;
    o["op"] = std::string(toString(r.kind));
    o["inputs"] = r.inputs;
    o["out"] = r.out;
    o["dtype"] = std::string(toString(r.dtype));
    o["shape"] = shapeToJSON(r.shape);
    if (r.kind == RefOp::Kind::Matmul) {
      o["a_layout"] = std::string(toString(r.aLayout));
      o["b_layout"] = std::string(toString(r.bLayout));
      o["batched"] = r.batched;
    } else if (r.kind == RefOp::Kind::Elementwise ||
               r.kind == RefOp::Kind::Reduce) {
      o["program"] = programJSON(r.program);
    } else {
      if (r.kind == RefOp::Kind::GroupedMatmul) {
        o["form"] = std::string(toString(r.form));
        if (r.form == GemmKind::GroupedK)
          o["a_layout"] = std::string(toString(r.aLayout));
        o["b_layout"] = std::string(toString(r.bLayout));
      }
      o["experts"] = r.experts;
      o["align"] = r.align;
    }
    ref.push_back(o);
  }
  j["reference"] = ref;
  return j.dump(2) + "\n";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
template <typename E, size_t N>
std::optional<E> lookup(const std::string &s, const E (&values)[N]) {
  for (E v : values)
    if (toString(v) == s)
      return v;
  return std::nullopt;
}
constexpr BufferRole kRoles[] = {BufferRole::Input,    BufferRole::Weight,
                                 BufferRole::Constant, BufferRole::State,
                                 BufferRole::Temp,     BufferRole::Output};
constexpr StepKind kKinds[] = {StepKind::Quantize,    StepKind::Transpose,
                               StepKind::Elementwise, StepKind::Gemm,
                               StepKind::Permute,     StepKind::Unpermute,
                               StepKind::Reduce,      StepKind::Interleave};
constexpr RefOp::Kind kRefKinds[] = {
    RefOp::Kind::Matmul,        RefOp::Kind::Elementwise, RefOp::Kind::Permute,
    RefOp::Kind::GroupedMatmul, RefOp::Kind::Unpermute,   RefOp::Kind::Reduce};
constexpr Phase kPhases[] = {Phase::Prepare, Phase::Run};

/// "one of input, weight, ..." for an enum's message.
template <typename E, size_t N> std::string oneOf(const E (&values)[N]) {
  std::string allowed;
  for (E v : values)
    allowed += (allowed.empty() ? "" : ", ") + std::string(toString(v));
  return "one of " + allowed;
}

template <typename E, size_t N> auto parserOf(const E (&values)[N]) {
  return [&values](const std::string &s) { return lookup(s, values); };
}

std::optional<DType> parseElementType(const std::string &s) {
  return parseDType(s);
}

Expected<DimExpr> dimFromJSON(const json &j) {
  if (j.is_number_integer()) {
    if (j.get<int64_t>() < 0)
      return errorf("expected a non-negative dimension, found ", j.dump());
    return DimExpr::constant(j.get<int64_t>());
  }
  if (!j.is_string())
    return errorf("expected a dimension (a size, a name, "
                  "\"ceildiv(NAME,N)\" or \"S*NAME+C\"), found ",
                  j.dump());
  const std::string s = j.get<std::string>();
  auto isName = [](const std::string &n) {
    if (n.empty() || !(std::isalpha((unsigned char)n[0]) || n[0] == '_'))
      return false;
    for (char c : n)
      if (!(std::isalnum((unsigned char)c) || c == '_'))
        return false;
    return true;
  };
  // A positive decimal below `limit` (no sign, no leading '+').
  auto number = [](const std::string &n, int64_t limit) -> int64_t {
    if (n.empty() || n.size() > 13 ||
        !std::all_of(n.begin(), n.end(), ::isdigit))
      return -1;
    const int64_t v = std::stoll(n);
    return v > 0 && v <= limit ? v : -1;
  };
  // [SCALE*]NAME[+OFFSET]
  auto affine = [&](const std::string &a,
                    int64_t divisor) -> std::optional<DimExpr> {
    std::string rest = a;
    int64_t scale = 1, offset = 0;
    if (const size_t star = rest.find('*'); star != std::string::npos) {
      scale = number(rest.substr(0, star), DimExpr::kMaxScale);
      rest = rest.substr(star + 1);
    }
    if (const size_t plus = rest.find('+'); plus != std::string::npos) {
      offset = number(rest.substr(plus + 1), DimExpr::kMaxOffset);
      rest = rest.substr(0, plus);
    }
    if (scale < 0 || offset < 0 || !isName(rest))
      return std::nullopt;
    return DimExpr::symbol(rest, divisor, scale, offset);
  };
  if (auto d = affine(s, 1))
    return *d;
  if (s.rfind("ceildiv(", 0) == 0 && s.back() == ')') {
    const std::string inner = s.substr(8, s.size() - 9);
    const size_t comma = inner.rfind(',');
    if (comma != std::string::npos) {
      const int64_t divisor = number(inner.substr(comma + 1), 99999999999);
      if (divisor > 0)
        if (auto d = affine(inner.substr(0, comma), divisor))
          return *d;
    }
  }
  return errorf("expected a dimension (a size, a name, \"ceildiv(NAME,N)\" "
                "or \"S*NAME+C\"), found \"",
                s, "\"");
}

Expected<ShapeExpr> shapeFromJSON(const json &j, const std::string &where) {
  if (!j.is_array())
    return errorf("expected 'shape' of ", where, " to be an array");
  ShapeExpr s;
  for (const json &d : j) {
    auto e = dimFromJSON(d);
    if (!e)
      return errorf(where, ": ", e.message());
    s.push_back(*e);
  }
  return s;
}

constexpr IntRange kBatchRange{1, kMaxBatch};
constexpr IntRange kAlignRange{1, kMaxAlign};
constexpr IntRange kBlockRange{1, (int64_t(1) << 31) - 1};
constexpr IntRange kExpertsRange{1, kMaxExperts};
constexpr IntRange kHistoryRange{1, kMaxHistory};

Status readBuffer(const json &b, const std::string &at, PlanBuffer &buf) {
  if (!b.is_object())
    return errorf("expected ", at, " to be an object");
  FP8_RETURN_IF_ERROR(JsonFields(b, at).string("name", buf.name));
  const std::string named = "buffer '" + buf.name + "'";
  JsonFields f(b, named);
  FP8_RETURN_IF_ERROR(
      f.enumeration("role", buf.role, parserOf(kRoles), oneOf(kRoles)));
  FP8_RETURN_IF_ERROR(
      f.enumeration("dtype", buf.dtype, parseElementType, "an element type"));
  if (!f.has("shape"))
    return errorf("expected a 'shape' in ", named);
  auto shape = shapeFromJSON(f.at("shape"), named);
  if (!shape)
    return shape.status();
  buf.shape = std::move(*shape);
  // Only states have a history and only constants data: anything else
  // present is a plan edited by hand, refused rather than ignored.
  if (buf.role == BufferRole::State)
    FP8_RETURN_IF_ERROR(f.integer("history", buf.history, kHistoryRange));
  else if (f.has("history"))
    return errorf("expected no 'history' in ", toString(buf.role), " ", named,
                  " (only states have one)");
  if (buf.role == BufferRole::Constant) {
    std::string data;
    FP8_RETURN_IF_ERROR(f.string("data", data));
    auto bytes = base64Decode(data);
    if (!bytes)
      return errorf(named, ": ", bytes.message());
    buf.data = std::move(*bytes);
  } else if (f.has("data")) {
    return errorf("expected no 'data' in ", toString(buf.role), " ", named,
                  " (only constants have data)");
  }
  return Status::ok();
}

Status readStep(const json &s, const std::string &at, PlanStep &step) {
  if (!s.is_object())
    return errorf("expected ", at, " to be an object");
  FP8_RETURN_IF_ERROR(JsonFields(s, at).string("name", step.name));
  JsonFields f(s, "step '" + step.name + "'");
  FP8_RETURN_IF_ERROR(
      f.enumeration("kind", step.kind, parserOf(kKinds), oneOf(kKinds)));
  FP8_RETURN_IF_ERROR(
      f.enumeration("phase", step.phase, parserOf(kPhases), oneOf(kPhases)));
  FP8_RETURN_IF_ERROR(f.strings("inputs", step.inputs));
  FP8_RETURN_IF_ERROR(f.strings("outputs", step.outputs));
  FP8_RETURN_IF_ERROR(f.string("op", step.op, Presence::Optional));
  FP8_RETURN_IF_ERROR(f.string("state", step.state, Presence::Optional));
  std::string kernel;
  FP8_RETURN_IF_ERROR(f.string("kernel", kernel, Presence::Optional));
  const json *specJson = nullptr;
  FP8_RETURN_IF_ERROR(f.object("spec", specJson));
  const std::string spec = specJson->dump();
  if (step.kind == StepKind::Gemm) {
    for (const char *other : {"align", "block"})
      if (f.has(other))
        return errorf("expected no '", other, "' in gemm step '", step.name,
                      "' (", other[0] == 'a' ? "permute" : "interleave",
                      " steps only)");
    auto k = kernelSpecFromJSON(spec);
    if (!k)
      return errorf("step '", step.name, "': ", k.message());
    step.gemm = *k;
    FP8_RETURN_IF_ERROR(
        f.integer("batch", step.batch, kBatchRange, Presence::Optional));
    FP8_RETURN_IF_ERROR(
        f.boolean("runtime_tile", step.runtimeTile, Presence::Optional));
    FP8_RETURN_IF_ERROR(
        f.string("tile_source", step.tileSource, Presence::Optional));
  } else {
    for (const char *gemmOnly : {"batch", "runtime_tile", "tile_source"})
      if (f.has(gemmOnly))
        return errorf("expected no '", gemmOnly, "' in ", toString(step.kind),
                      " step '", step.name, "' (gemm steps only)");
    if (step.kind == StepKind::Permute)
      FP8_RETURN_IF_ERROR(
          f.integer("align", step.align, kAlignRange, Presence::Optional));
    else if (f.has("align"))
      return errorf("expected no 'align' in ", toString(step.kind), " step '",
                    step.name, "' (permute steps only)");
    if (step.kind == StepKind::Interleave)
      FP8_RETURN_IF_ERROR(f.integer("block", step.block, kBlockRange));
    else if (f.has("block"))
      return errorf("expected no 'block' in ", toString(step.kind), " step '",
                    step.name, "' (interleave steps only)");
    auto e = elementwiseSpecFromJSON(spec);
    if (!e)
      return errorf("step '", step.name, "': ", e.message());
    step.aux = *e;
    const AuxKind want = auxKindOf(step.kind);
    if (step.aux.kind != want)
      return errorf("expected the kernel spec of ", toString(step.kind),
                    " step '", step.name, "' to be a ", toString(want),
                    " spec, found ", toString(step.aux.kind));
  }
  if (f.has("kernel") && kernel != step.kernelName())
    return errorf("step '", step.name, "' names kernel '", kernel,
                  "' but its spec is that of '", step.kernelName(),
                  "' (the spec was edited without the name, or the plan "
                  "comes from another version)");
  return Status::ok();
}

Status readReferenceOp(const json &r, const std::string &at, RefOp &op) {
  if (!r.is_object())
    return errorf("expected ", at, " to be an object");
  JsonFields f(r, at);
  FP8_RETURN_IF_ERROR(
      f.enumeration("op", op.kind, parserOf(kRefKinds), oneOf(kRefKinds)));
  FP8_RETURN_IF_ERROR(f.strings("inputs", op.inputs));
  FP8_RETURN_IF_ERROR(f.string("out", op.out));
  FP8_RETURN_IF_ERROR(
      f.enumeration("dtype", op.dtype, parseElementType, "an element type"));
  if (!f.has("shape"))
    return errorf("expected a 'shape' in ", at);
  auto shape = shapeFromJSON(f.at("shape"), at);
  if (!shape)
    return shape.status();
  op.shape = std::move(*shape);
  if (op.kind == RefOp::Kind::Matmul) {
    auto layout = [](const std::string &s) { return parseLayout(s); };
    FP8_RETURN_IF_ERROR(f.enumeration("a_layout", op.aLayout, layout,
                                      "one of k_major, mn_major"));
    FP8_RETURN_IF_ERROR(f.enumeration("b_layout", op.bLayout, layout,
                                      "one of k_major, mn_major"));
    FP8_RETURN_IF_ERROR(f.boolean("batched", op.batched, Presence::Optional));
  } else if (op.kind != RefOp::Kind::Elementwise &&
             op.kind != RefOp::Kind::Reduce) {
    if (op.kind == RefOp::Kind::GroupedMatmul) {
      auto layout = [](const std::string &s) { return parseLayout(s); };
      auto form = [](const std::string &s) -> std::optional<GemmKind> {
        std::optional<GemmKind> k = parseGemmKind(s);
        if (k == GemmKind::Dense)
          return std::nullopt;
        return k;
      };
      FP8_RETURN_IF_ERROR(f.enumeration(
          "form", op.form, form,
          "one of grouped_contiguous, grouped_masked, grouped_k"));
      if (op.form == GemmKind::GroupedK)
        FP8_RETURN_IF_ERROR(f.enumeration("a_layout", op.aLayout, layout,
                                          "one of k_major, mn_major"));
      FP8_RETURN_IF_ERROR(f.enumeration("b_layout", op.bLayout, layout,
                                        "one of k_major, mn_major"));
    }
    FP8_RETURN_IF_ERROR(f.integer("experts", op.experts, kExpertsRange));
    FP8_RETURN_IF_ERROR(f.integer("align", op.align, kAlignRange));
  } else {
    const json *program = nullptr;
    FP8_RETURN_IF_ERROR(f.object("program", program));
    auto p = ewProgramFromJSON(program->dump());
    if (!p)
      return errorf(at, ": ", p.message());
    op.program = *p;
  }
  return Status::ok();
}
} // namespace

Expected<Plan> parsePlan(const std::string &text, const std::string &where) {
  auto parsed = parseJsonInput(text, "plan " + where);
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  if (!j.is_object())
    return errorf("expected plan ", where, " to be a JSON object, found ",
                  j.type_name());
  if (!j.contains("format") || !j["format"].is_number_integer())
    return errorf("expected plan ", where, " to have an integer 'format' (",
                  kPlanFormat, " for this build)");
  Plan plan;
  JsonFields top(j, "plan " + where);
  int64_t format = 0;
  FP8_RETURN_IF_ERROR(top.integer("format", format, IntRange{}));
  if (format != kPlanFormat)
    return errorf("plan ", where, " has format ", format,
                  "; this build of fp8-run reads format ", kPlanFormat,
                  " (recompile the model with the matching fp8-translate)");
  FP8_RETURN_IF_ERROR(top.string("function", plan.function));
  FP8_RETURN_IF_ERROR(top.enumeration(
      "arch", plan.arch, [](const std::string &a) { return parseArch(a); },
      "one of sm_90a, sm_100a"));
  FP8_RETURN_IF_ERROR(top.strings("dims", plan.dims));
  FP8_RETURN_IF_ERROR(top.strings("outputs", plan.outputs));

  if (!j.contains("buffers") || !j["buffers"].is_array())
    return errorf("expected a 'buffers' array in plan ", where);
  size_t index = 0;
  for (const json &b : j["buffers"]) {
    PlanBuffer buf;
    FP8_RETURN_IF_ERROR(
        readBuffer(b, "buffer " + std::to_string(index++), buf));
    plan.buffers.push_back(std::move(buf));
  }

  if (!j.contains("steps") || !j["steps"].is_array())
    return errorf("expected a 'steps' array in plan ", where);
  index = 0;
  for (const json &s : j["steps"]) {
    PlanStep step;
    FP8_RETURN_IF_ERROR(readStep(s, "step " + std::to_string(index++), step));
    plan.steps.push_back(std::move(step));
  }

  if (j.contains("reference")) {
    if (!j["reference"].is_array())
      return errorf("expected 'reference' to be an array in plan ", where);
    index = 0;
    for (const json &r : j["reference"]) {
      RefOp op;
      FP8_RETURN_IF_ERROR(
          readReferenceOp(r, "reference op " + std::to_string(index++), op));
      plan.reference.push_back(std::move(op));
    }
  }
  FP8_RETURN_IF_ERROR(validatePlan(plan).withContext("plan " + where));
  return plan;
}

Expected<Plan> loadPlan(const std::string &path) {
  Expected<std::string> text = readInputFile(path, kMaxPlanBytes, "plan");
  if (!text)
    return text.status();
  return parsePlan(*text, "'" + path + "'");
}

} // namespace fp8
