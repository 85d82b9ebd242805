//===- Plan.cpp - A compiled model graph: buffers, steps, kernel specs ----===//

#include "runtime/plan/Plan.h"

#include "runtime/plan/Base64.h"

#include "core/InputFile.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace fp8 {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

std::string DimExpr::toString() const {
  if (isStatic())
    return std::to_string(value);
  if (divisor == 1)
    return dim;
  return "ceildiv(" + dim + "," + std::to_string(divisor) + ")";
}

std::string_view toString(BufferRole r) {
  switch (r) {
  case BufferRole::Input:
    return "input";
  case BufferRole::Weight:
    return "weight";
  case BufferRole::Constant:
    return "constant";
  case BufferRole::State:
    return "state";
  case BufferRole::Temp:
    return "temp";
  case BufferRole::Output:
    return "output";
  }
  return "?";
}

std::string_view toString(StepKind k) {
  switch (k) {
  case StepKind::Quantize:
    return "quantize";
  case StepKind::Transpose:
    return "transpose";
  case StepKind::Elementwise:
    return "elementwise";
  case StepKind::Gemm:
    return "gemm";
  }
  return "?";
}

std::string_view toString(Phase p) {
  return p == Phase::Prepare ? "prepare" : "run";
}

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
constexpr StepKind kKinds[] = {StepKind::Quantize, StepKind::Transpose,
                               StepKind::Elementwise, StepKind::Gemm};
constexpr Phase kPhases[] = {Phase::Prepare, Phase::Run};

std::string shapeString(const ShapeExpr &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + s[i].toString();
  return out + "]";
}
} // namespace

std::string PlanStep::kernelName() const {
  return kind == StepKind::Gemm ? gemm.kernelName() : aux.kernelName();
}

const PlanBuffer *Plan::buffer(const std::string &name) const {
  for (const PlanBuffer &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

const RefOp *Plan::referenceOp(const std::string &name) const {
  for (const RefOp &r : reference)
    if (r.out == name)
      return &r;
  return nullptr;
}

namespace {
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

/// a * b for non-negative a and b, saturating at INT64_MAX.
int64_t mulSaturating(int64_t a, int64_t b) {
  int64_t p;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p))
    return kSaturated;
  return p;
}
} // namespace

std::string formatDims(const DimValues &dims) {
  std::string s;
  for (const auto &[k, v] : dims)
    s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s.empty() ? "none" : s;
}

int64_t bytesOf(DType t, int64_t count) {
  return mulSaturating(sizeOf(t), count);
}

int64_t elementCount(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n = mulSaturating(n, d);
  return n;
}

int64_t addBytes(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return kSaturated;
  return sum;
}

Status checkBufferSize(const std::string &what, DType t, const Shape &s) {
  // The empty dimensions count as 1 here: a [2^32, 2^32, 0] buffer holds
  // nothing, but loops over its other dimensions would not end.
  Shape span;
  for (int64_t d : s)
    span.push_back(d == 0 ? 1 : d);
  const int64_t bytes = bytesOf(t, elementCount(span));
  if (bytes <= kMaxBufferBytes)
    return Status::ok();
  const bool empty = std::find(s.begin(), s.end(), 0) != s.end();
  return errorf("expected ", what, " (", toString(t), " ", formatShape(s),
                ") to hold at most 2^47 bytes (", kMaxBufferBytes, "), found ",
                bytes == kSaturated ? std::string("more than 2^63")
                                    : std::to_string(bytes),
                empty ? " (its empty dimensions counted as 1)" : "");
}

//===----------------------------------------------------------------------===//
// JSON
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

Expected<DimExpr> dimFromJSON(const json &j) {
  if (j.is_number_integer()) {
    if (j.get<int64_t>() < 0)
      return errorf("expected a non-negative dimension, found ", j.dump());
    return DimExpr::constant(j.get<int64_t>());
  }
  if (!j.is_string())
    return errorf("expected a dimension (a size, a name or "
                  "\"ceildiv(NAME,N)\"), found ",
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
  if (isName(s))
    return DimExpr::symbol(s);
  if (s.rfind("ceildiv(", 0) == 0 && s.back() == ')') {
    const std::string inner = s.substr(8, s.size() - 9);
    const size_t comma = inner.find(',');
    if (comma != std::string::npos && isName(inner.substr(0, comma))) {
      const std::string num = inner.substr(comma + 1);
      if (!num.empty() && num.size() < 12 &&
          std::all_of(num.begin(), num.end(), ::isdigit) && std::stoll(num) > 0)
        return DimExpr::symbol(inner.substr(0, comma), std::stoll(num));
    }
  }
  return errorf("expected a dimension (a size, a name or \"ceildiv(NAME,N)\"), "
                "found \"",
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
      o["spec"] = ojson::parse(toJSON(s.aux));
    }
    steps.push_back(o);
  }
  j["steps"] = steps;
  j["outputs"] = plan.outputs;
  ojson ref = ojson::array();
  for (const RefOp &r : plan.reference) {
    ojson o;
    o["op"] = r.kind == RefOp::Kind::Matmul ? "matmul" : "elementwise";
    o["inputs"] = r.inputs;
    o["out"] = r.out;
    o["dtype"] = std::string(toString(r.dtype));
    o["shape"] = shapeToJSON(r.shape);
    if (r.kind == RefOp::Kind::Matmul) {
      o["a_layout"] = std::string(toString(r.aLayout));
      o["b_layout"] = std::string(toString(r.bLayout));
      o["batched"] = r.batched;
    } else {
      o["program"] = programJSON(r.program);
    }
    ref.push_back(o);
  }
  j["reference"] = ref;
  return j.dump(2) + "\n";
}

namespace {
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

/// The largest batch of stacked GEMMs and amax history a plan may state:
/// the kernels take both as 32-bit integers.
constexpr IntRange kBatchRange{1, (int64_t(1) << 31) - 1};
constexpr IntRange kHistoryRange{1, (int64_t(1) << 31) - 1};

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
    auto e = elementwiseSpecFromJSON(spec);
    if (!e)
      return errorf("step '", step.name, "': ", e.message());
    step.aux = *e;
    const AuxKind want = step.kind == StepKind::Quantize ? AuxKind::Quantize
                         : step.kind == StepKind::Transpose
                             ? AuxKind::Transpose
                             : AuxKind::Elementwise;
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
  std::string kind;
  FP8_RETURN_IF_ERROR(f.string("op", kind));
  if (kind != "matmul" && kind != "elementwise")
    return errorf("expected 'op' matmul or elementwise in ", at, ", found '",
                  kind, "'");
  op.kind = kind == "matmul" ? RefOp::Kind::Matmul : RefOp::Kind::Elementwise;
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

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {
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
} // namespace

/// [A-Za-z_][A-Za-z0-9_]{0,127}
static bool isPlainName(const std::string &n) {
  if (n.empty() || n.size() > 128 || (n[0] >= '0' && n[0] <= '9'))
    return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

Status validatePlan(const Plan &plan) {
  std::set<std::string> dims(plan.dims.begin(), plan.dims.end());
  if (dims.size() != plan.dims.size())
    return errorf("expected distinct dimension names in 'dims'");
  std::set<std::string> names;
  auto checkShape = [&](const ShapeExpr &shape,
                        const std::string &what) -> Status {
    for (const DimExpr &d : shape)
      if (!d.isStatic() && !dims.count(d.dim))
        return errorf("shape ", shapeString(shape), " of ", what,
                      " uses dimension '", d.dim,
                      "', which 'dims' does not declare");
    return Status::ok();
  };
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
    FP8_RETURN_IF_ERROR(checkShape(b.shape, "buffer '" + b.name + "'"));
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

  // Single assignment, in order; prepare steps read only what exists
  // before the first run.
  std::set<std::string> written, preparable;
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Weight || b.role == BufferRole::Constant)
      preparable.insert(b.name);
  std::set<std::string> stepNames;
  for (const PlanStep &s : plan.steps) {
    if (s.name.empty() || !stepNames.insert(s.name).second)
      return errorf("expected unique, non-empty step names, found '", s.name,
                    "' twice");
    std::vector<const PlanBuffer *> in, out;
    for (const std::string &n : s.inputs) {
      auto b = operand(plan, s, n);
      if (!b)
        return b.status();
      const BufferRole r = (*b)->role;
      if ((r == BufferRole::Temp || r == BufferRole::Output) &&
          !written.count(n))
        return errorf("step '", s.name, "' reads '", n,
                      "' before any step writes it");
      if (r == BufferRole::State)
        return errorf("step '", s.name, "' reads state '", n,
                      "' as an input (states are a step's 'state')");
      if (s.phase == Phase::Prepare && !preparable.count(n))
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
      if (!written.insert(n).second)
        return errorf("step '", s.name, "' writes '", n,
                      "', which an earlier step wrote");
      if (s.phase == Phase::Prepare)
        preparable.insert(n);
      out.push_back(*b);
    }
    switch (s.kind) {
    case StepKind::Quantize: {
      const ElementwiseSpec &q = s.aux;
      FP8_RETURN_IF_ERROR(expectCount(s, "inputs (one per program input)",
                                      in.size(), q.program.inputs.size(),
                                      q.program.inputs.size()));
      FP8_RETURN_IF_ERROR(
          expectCount(s, "outputs (codes, scales)", out.size(), 2, 2));
      for (size_t i = 0; i < in.size(); ++i)
        FP8_RETURN_IF_ERROR(
            expectType(s, *in[i], q.program.inputs[i], "program input"));
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
                        "' to hold a history of ",
                        q.quant.delayed.historyLength, " amaxes, found ",
                        st->history);
      }
      break;
    }
    case StepKind::Transpose:
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
      break;
    case StepKind::Elementwise:
      FP8_RETURN_IF_ERROR(expectCount(s, "inputs (one per program input)",
                                      in.size(), s.aux.program.inputs.size(),
                                      s.aux.program.inputs.size()));
      FP8_RETURN_IF_ERROR(expectCount(s, "outputs", out.size(), 1, 1));
      for (size_t i = 0; i < in.size(); ++i)
        FP8_RETURN_IF_ERROR(
            expectType(s, *in[i], s.aux.program.inputs[i], "program input"));
      FP8_RETURN_IF_ERROR(expectType(s, *out[0], s.aux.out, "output"));
      break;
    case StepKind::Gemm: {
      const KernelSpec &k = s.gemm;
      const size_t want = k.accumulate ? 5 : 4;
      FP8_RETURN_IF_ERROR(expectCount(s,
                                      k.accumulate
                                          ? "inputs (a, a_scale, b, b_scale, c)"
                                          : "inputs (a, a_scale, b, b_scale)",
                                      in.size(), want, want));
      FP8_RETURN_IF_ERROR(expectCount(s, "outputs (d)", out.size(), 1, 1));
      FP8_RETURN_IF_ERROR(expectType(s, *in[0], k.a.format, "A"));
      FP8_RETURN_IF_ERROR(
          expectType(s, *in[1], scaleType(k.a.granularity), "A's scales"));
      FP8_RETURN_IF_ERROR(expectType(s, *in[2], k.b.format, "B"));
      FP8_RETURN_IF_ERROR(
          expectType(s, *in[3], scaleType(k.b.granularity), "B's scales"));
      if (k.accumulate)
        FP8_RETURN_IF_ERROR(expectType(s, *in[4], k.out, "C"));
      FP8_RETURN_IF_ERROR(expectType(s, *out[0], k.out, "D"));
      if (k.arch != plan.arch)
        return errorf("step '", s.name, "': expected a kernel for the plan's ",
                      toString(plan.arch), ", found ", toString(k.arch));
      FP8_RETURN_IF_ERROR(
          checkKernelSpec(k).withContext("step '" + s.name + "'"));
      if (!kBatchRange.contains(s.batch))
        return integerFieldError("batch", "step '" + s.name + "'", kBatchRange,
                                 std::to_string(s.batch));
      const size_t rank = s.batch > 1 ? 3 : 2;
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i]->shape.size() != rank)
          return errorf("step '", s.name, "': expected rank-", rank,
                        " operands", s.batch > 1 ? " (batched GEMM)" : "",
                        ", found '", in[i]->name, "' of shape ",
                        shapeString(in[i]->shape));
      break;
    }
    }
    if (s.kind != StepKind::Gemm && s.aux.arch != plan.arch)
      return errorf("step '", s.name, "': expected a kernel for the plan's ",
                    toString(plan.arch), ", found ", toString(s.aux.arch));
  }
  for (const std::string &o : plan.outputs) {
    const PlanBuffer *b = plan.buffer(o);
    if (!b || b->role != BufferRole::Output)
      return errorf("expected graph output '", o,
                    "' to be a buffer of role output");
    if (!written.count(o))
      return errorf("graph output '", o, "' is never written by a step");
  }
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Output &&
        std::find(plan.outputs.begin(), plan.outputs.end(), b.name) ==
            plan.outputs.end())
      return errorf("buffer '", b.name,
                    "' has role output but is not in 'outputs'");

  std::set<std::string> refValues;
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::Input || b.role == BufferRole::Weight ||
        (b.role == BufferRole::Constant && isWide(b.dtype)))
      refValues.insert(b.name);
  for (const RefOp &r : plan.reference) {
    for (const std::string &n : r.inputs)
      if (!refValues.count(n))
        return errorf("reference op '", r.out, "' reads '", n,
                      "', which is neither a high-precision input, weight or "
                      "constant nor an earlier reference value");
    FP8_RETURN_IF_ERROR(checkShape(r.shape, "reference value '" + r.out + "'"));
    if (r.kind == RefOp::Kind::Matmul) {
      if (r.inputs.size() < 2 || r.inputs.size() > 3)
        return errorf(
            "expected 2 or 3 inputs (a, b[, c]) for reference matmul '", r.out,
            "', found ", r.inputs.size());
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

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

Expected<DimValues>
resolveDims(const Plan &plan,
            const std::vector<std::pair<std::string, int64_t>> &given) {
  DimValues out;
  for (const auto &[name, value] : given) {
    if (std::find(plan.dims.begin(), plan.dims.end(), name) ==
        plan.dims.end()) {
      std::string known;
      for (const std::string &d : plan.dims)
        known += (known.empty() ? "" : ", ") + d;
      return errorf("the plan has no dynamic dimension '", name, "' (it has ",
                    known.empty() ? std::string("none") : known, ")");
    }
    if (value < 0 || value >= kMaxDimSize)
      return errorf("expected the size of ", name,
                    " to be non-negative and below 2^40, found ", value);
    out[name] = value;
  }
  for (const std::string &d : plan.dims)
    if (!out.count(d))
      return errorf("the plan has a dynamic dimension ", d,
                    ": give its size with --dim ", d, "=<size>");
  return out;
}

Expected<Shape> resolveShape(const ShapeExpr &shape, const DimValues &dims) {
  Shape out;
  for (const DimExpr &d : shape) {
    if (d.isStatic()) {
      if (d.value < 0)
        return errorf("expected non-negative sizes, found ", d.value);
      out.push_back(d.value);
      continue;
    }
    auto it = dims.find(d.dim);
    if (it == dims.end())
      return errorf("no size for dimension '", d.dim, "'");
    if (it->second < 0 || d.divisor < 1)
      return errorf("expected a non-negative size and a positive divisor "
                    "for ",
                    d.toString(), ", found ", d.dim, "=", it->second);
    // ceil(size / divisor) without forming size + divisor - 1.
    out.push_back(it->second / d.divisor + (it->second % d.divisor != 0));
  }
  return out;
}

namespace {
Status sameShape(const std::string &step, const std::string &what,
                 const std::string &name, const Shape &want,
                 const Shape &found) {
  if (want != found)
    return errorf("step '", step, "': expected ", what, " '", name,
                  "' to have shape ", formatShape(want), ", found ",
                  formatShape(found));
  return Status::ok();
}
} // namespace

Expected<ResolvedPlan> resolvePlan(const Plan &plan, const DimValues &dims) {
  ResolvedPlan r;
  r.dims = dims;
  // Every value's size is checked before any product of its dimensions is
  // used: a shape whose element count overflows int64_t (a static
  // [2^32, 2^32], or M = 2^52 rows) is refused here, naming the dims.
  for (const PlanBuffer &b : plan.buffers) {
    auto s = resolveShape(b.shape, dims);
    if (!s)
      return errorf("buffer '", b.name, "': ", s.message());
    if (Status st = checkBufferSize("buffer '" + b.name + "'", b.dtype, *s);
        !st)
      return errorf(st.message(), " (dims ", formatDims(dims), ")");
    r.shapes[b.name] = *s;
  }
  for (const RefOp &op : plan.reference) {
    auto s = resolveShape(op.shape, dims);
    if (!s)
      return errorf("reference value '", op.out, "': ", s.message());
    if (Status st =
            checkBufferSize("reference value '" + op.out + "'", op.dtype, *s);
        !st)
      return errorf(st.message(), " (dims ", formatDims(dims), ")");
    r.shapes[op.out] = *s;
  }
  auto shape = [&](const std::string &n) -> const Shape & {
    return r.shapes[n];
  };
  for (const PlanStep &s : plan.steps) {
    switch (s.kind) {
    case StepKind::Quantize:
    case StepKind::Elementwise: {
      const Shape &x = shape(s.inputs[0]);
      if (x.size() < 2 || x.size() > 3)
        return errorf("step '", s.name,
                      "': expected a rank-2 or rank-3 "
                      "input, found ",
                      formatShape(x));
      for (size_t i = 1; i < s.inputs.size(); ++i)
        FP8_RETURN_IF_ERROR(sameShape(s.name, "program input", s.inputs[i], x,
                                      shape(s.inputs[i])));
      FP8_RETURN_IF_ERROR(
          sameShape(s.name, s.kind == StepKind::Quantize ? "codes" : "output",
                    s.outputs[0], x, shape(s.outputs[0])));
      if (s.kind == StepKind::Quantize)
        FP8_RETURN_IF_ERROR(sameShape(s.name, "scales", s.outputs[1],
                                      scaleShapeFor(x, s.aux.quant.granularity),
                                      shape(s.outputs[1])));
      break;
    }
    case StepKind::Transpose: {
      const Shape &x = shape(s.inputs[0]);
      if (x.size() < 2 || x.size() > 3)
        return errorf("step '", s.name,
                      "': expected rank-2 or rank-3 codes, "
                      "found ",
                      formatShape(x));
      const Granularity &g = s.aux.quant.granularity;
      FP8_RETURN_IF_ERROR(sameShape(s.name, "scales", s.inputs[1],
                                    scaleShapeFor(x, g), shape(s.inputs[1])));
      Shape t = x;
      std::swap(t[t.size() - 1], t[t.size() - 2]);
      FP8_RETURN_IF_ERROR(sameShape(s.name, "transposed codes", s.outputs[0], t,
                                    shape(s.outputs[0])));
      FP8_RETURN_IF_ERROR(sameShape(
          s.name, "transposed scales", s.outputs[1],
          scaleShapeFor(t, Granularity::block(g.cols, g.rows, g.scale)),
          shape(s.outputs[1])));
      break;
    }
    case StepKind::Gemm: {
      const KernelSpec &k = s.gemm;
      if (k.a.layout != Layout::KMajor || k.b.layout != Layout::KMajor)
        return errorf("step '", s.name,
                      "': expected K-major A and B (the "
                      "runtime's kernels read both K-major; fp8-verify-target "
                      "inserts the transposes), found A ",
                      toString(k.a.layout), " and B ", toString(k.b.layout));
      const Shape &a = shape(s.inputs[0]), &b = shape(s.inputs[2]);
      const size_t lead = s.batch > 1 ? 1 : 0;
      if (lead && (a[0] != s.batch || b[0] != s.batch))
        return errorf("step '", s.name, "': expected ", s.batch,
                      " stacked matrices in A and B, found ", formatShape(a),
                      " and ", formatShape(b));
      const int64_t m = a[lead], kk = a[lead + 1], n = b[lead];
      if (kk != k.k || b[lead + 1] != k.k || n != k.n)
        return errorf("step '", s.name, "': expected A [M, ", k.k, "] and B [",
                      k.n, ", ", k.k, "] for the kernel spec, found A ",
                      formatShape(a), " and B ", formatShape(b));
      if (k.m != kDynamic && m != k.m)
        return errorf("step '", s.name, "': expected M = ", k.m,
                      " (the kernel spec's), found ", m);
      Shape d = lead ? Shape{s.batch, m, n} : Shape{m, n};
      FP8_RETURN_IF_ERROR(
          sameShape(s.name, "D", s.outputs[0], d, shape(s.outputs[0])));
      FP8_RETURN_IF_ERROR(sameShape(s.name, "A's scales", s.inputs[1],
                                    scaleShapeFor(a, k.a.granularity),
                                    shape(s.inputs[1])));
      FP8_RETURN_IF_ERROR(sameShape(s.name, "B's scales", s.inputs[3],
                                    scaleShapeFor(b, k.b.granularity),
                                    shape(s.inputs[3])));
      if (k.accumulate)
        FP8_RETURN_IF_ERROR(
            sameShape(s.name, "C", s.inputs[4], d, shape(s.inputs[4])));
      break;
    }
    }
  }
  for (const RefOp &op : plan.reference) {
    if (op.kind == RefOp::Kind::Elementwise) {
      for (const std::string &in : op.inputs)
        if (shape(in) != shape(op.out))
          return errorf("reference op '", op.out, "': expected input '", in,
                        "' to have shape ", formatShape(shape(op.out)),
                        ", found ", formatShape(shape(in)));
      continue;
    }
    const Shape &a = shape(op.inputs[0]), &b = shape(op.inputs[1]);
    const size_t lead = op.batched ? 1 : 0;
    if (a.size() != 2 + lead || b.size() != 2 + lead)
      return errorf("reference matmul '", op.out, "': expected rank-", 2 + lead,
                    " operands, found ", formatShape(a), " and ",
                    formatShape(b));
    const int64_t m = op.aLayout == Layout::KMajor ? a[lead] : a[lead + 1];
    const int64_t ka = op.aLayout == Layout::KMajor ? a[lead + 1] : a[lead];
    const int64_t n = op.bLayout == Layout::KMajor ? b[lead] : b[lead + 1];
    const int64_t kb = op.bLayout == Layout::KMajor ? b[lead + 1] : b[lead];
    if (ka != kb)
      return errorf("reference matmul '", op.out, "': expected equal K, found ",
                    formatShape(a), " and ", formatShape(b));
    Shape d = lead ? Shape{a[0], m, n} : Shape{m, n};
    if (d != shape(op.out))
      return errorf("reference matmul '", op.out, "': expected shape ",
                    formatShape(d), ", found ", formatShape(shape(op.out)));
  }
  return r;
}

} // namespace fp8
