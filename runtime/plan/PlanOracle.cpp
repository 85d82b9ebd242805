//===- PlanOracle.cpp - A plan on the CPU: the oracle and the reference ---===//

#include "runtime/plan/PlanOracle.h"

#include "runtime/plan/PlanMoe.h"

#include "codegen/kernels/elementwise_params.h"
#include "codegen/kernels/fp8_delayed.h"
#include "numerics/Formats.h"
#include "numerics/GroupedGemm.h"
#include "numerics/Npy.h"
#include "numerics/Parallel.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sys/stat.h>

namespace fp8 {

namespace nm = fp8::numerics;

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor HostTensor::zeros(DType t, const Shape &s) {
  HostTensor h;
  h.dtype = t;
  h.shape = s;
  h.data.assign(size_t(bytesOf(t, elementCount(s))), 0);
  return h;
}

float HostTensor::get(int64_t i) const {
  switch (dtype) {
  case DType::BF16: {
    uint16_t b;
    std::memcpy(&b, &data[size_t(i) * 2], 2);
    return nm::bf16ToFloat(b);
  }
  case DType::F16: {
    uint16_t b;
    std::memcpy(&b, &data[size_t(i) * 2], 2);
    return nm::f16ToFloat(b);
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, &data[size_t(i) * 4], 4);
    return f;
  }
  case DType::E4M3FN:
  case DType::E5M2:
    return nm::fp8ToFloat(data[size_t(i)], dtype);
  case DType::UE8M0:
    return nm::ue8m0ToFloat(data[size_t(i)]);
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, &data[size_t(i) * 4], 4);
    return float(v);
  }
  }
  return 0;
}

void HostTensor::set(int64_t i, float v) {
  switch (dtype) {
  case DType::BF16: {
    const uint16_t b = nm::floatToBF16(v);
    std::memcpy(&data[size_t(i) * 2], &b, 2);
    return;
  }
  case DType::F16: {
    const uint16_t b = nm::floatToF16(v);
    std::memcpy(&data[size_t(i) * 2], &b, 2);
    return;
  }
  case DType::F32:
    std::memcpy(&data[size_t(i) * 4], &v, 4);
    return;
  default:
    return; // FP8 and UE8M0 are written as codes, never from floats here
  }
}

std::vector<float> HostTensor::toFloat() const {
  std::vector<float> out(static_cast<size_t>(elements()));
  nm::parallelFor(elements(), 1 << 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      out[size_t(i)] = get(i);
  });
  return out;
}

HostBuffers allocateHostBuffers(const Plan &plan, const ResolvedPlan &shapes) {
  HostBuffers out;
  for (const PlanBuffer &b : plan.buffers) {
    HostTensor t = HostTensor::zeros(b.dtype, shapes.shapes.at(b.name));
    if (b.role == BufferRole::Constant)
      t.data = b.data;
    out.emplace(b.name, std::move(t));
  }
  return out;
}

int64_t hostRunBytes(const Plan &plan, const ResolvedPlan &shapes, RunOn where,
                     bool verify) {
  auto bytes = [&](DType t, const std::string &name) {
    return bytesOf(t, elementCount(shapes.shapes.at(name)));
  };
  int64_t buffers = 0, outputs = 0, reference = 0, scratch = 0;
  for (const PlanBuffer &b : plan.buffers) {
    buffers = addBytes(buffers, bytes(b.dtype, b.name));
    if (b.role == BufferRole::Output)
      outputs = addBytes(outputs, bytes(b.dtype, b.name));
  }
  // 8 bytes per element of every operand and result: the float copies a
  // step evaluates on (evaluate, toFloat, slices) and the double results of
  // the reference matmuls.
  auto wide = [&](const std::vector<std::string> &names) {
    int64_t n = 0;
    for (const std::string &name : names) {
      const int64_t f32 =
          bytesOf(DType::F32, elementCount(shapes.shapes.at(name)));
      n = addBytes(n, addBytes(f32, f32));
    }
    return n;
  };
  for (const PlanStep &s : plan.steps)
    scratch = std::max(scratch, addBytes(wide(s.inputs), wide(s.outputs)));
  for (const RefOp &op : plan.reference) {
    reference = addBytes(reference, bytes(op.dtype, op.out));
    scratch = std::max(scratch, addBytes(wide(op.inputs), wide({op.out})));
  }
  // The scratch is the oracle's: a GPU run without --verify evaluates
  // nothing on the host.
  int64_t total = buffers;
  if (where == RunOn::Cpu || verify)
    total = addBytes(total, scratch);
  if (where == RunOn::Cpu)
    total = addBytes(total, buffers);
  else
    total = addBytes(total, verify ? addBytes(buffers, buffers) : outputs);
  if (verify)
    total = addBytes(total, reference);
  return total;
}

//===----------------------------------------------------------------------===//
// Delayed-scaling state
//===----------------------------------------------------------------------===//

nm::AmaxHistory historyFromState(const uint8_t *state,
                                 const DelayedScaling &params) {
  fp8k::AmaxHistoryState hdr;
  std::memcpy(&hdr, state, sizeof(hdr));
  const uint8_t *values = state + sizeof(hdr);
  const uint32_t len = uint32_t(params.historyLength);
  nm::AmaxHistory h(params);
  for (uint32_t i = 0; i < hdr.count && len; ++i) {
    float v;
    std::memcpy(&v, values + 4 * ((hdr.head + len - hdr.count + i) % len),
                sizeof(v));
    h.record(v);
  }
  for (uint32_t i = 0; i < hdr.steps; ++i)
    h.advance();
  h.setRefit(hdr.refit != 0);
  // The ring's position: recorded() = head (mod len), at least count.
  if (len)
    h.setRecorded(int64_t(hdr.count) +
                  int64_t((hdr.head + len - hdr.count % len) % len));
  return h;
}

nm::AmaxHistory historyFromState(const HostTensor &state,
                                 const DelayedScaling &params) {
  return historyFromState(state.data.data(), params);
}

void stateFromHistory(const nm::AmaxHistory &h, uint8_t *state, size_t bytes) {
  fp8k::AmaxHistoryState hdr{};
  const int64_t len = h.params().historyLength;
  hdr.steps = uint32_t(h.steps());
  hdr.count = uint32_t(h.values().size());
  hdr.head = len ? uint32_t(h.recorded() % len) : 0;
  hdr.refit = h.refit() ? 1u : 0u;
  std::fill(state, state + bytes, uint8_t(0));
  std::memcpy(state, &hdr, sizeof(hdr));
  // The values where the kernels' ring holds them: the newest just before
  // head (fp8_delayed.h, delayed_scale_step), so that the bytes are the GPU's.
  for (uint32_t i = 0; i < hdr.count && len; ++i)
    std::memcpy(
        state + sizeof(hdr) +
            4 * ((hdr.head + uint32_t(len) - hdr.count + i) % uint32_t(len)),
        &h.values()[i], sizeof(float));
}

void stateFromHistory(const nm::AmaxHistory &h, HostTensor &state) {
  stateFromHistory(h, state.data.data(), state.data.size());
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

namespace {
/// The program's value of every element of the grid (input 0's shape), as
/// the kernels compute it.
std::vector<float> evaluate(const EwProgram &p,
                            const std::vector<const HostTensor *> &in) {
  const int64_t n = in.empty() ? 0 : in[0]->elements();
  const int64_t cols = n == 0 || in[0]->shape.empty() ? 1 : in[0]->shape.back();
  std::vector<float> out(static_cast<size_t>(n));
  nm::parallelFor(n, 1 << 14, [&](int64_t i0, int64_t i1) {
    float args[fp8k::kMaxEwInputs];
    for (int64_t i = i0; i < i1; ++i) {
      for (size_t j = 0; j < in.size(); ++j)
        args[j] = in[j]->get(programIndex(p, j, i, cols));
      out[size_t(i)] = evalProgram(p, args);
    }
  });
  return out;
}

/// The program's sum over each row of the grid, in the reduce kernel's
/// order (reduceRow).
std::vector<float> reduceRows(const EwProgram &p,
                              const std::vector<const HostTensor *> &in) {
  const std::vector<float> x = evaluate(p, in);
  const int64_t cols = in[0]->shape.back();
  const int64_t rows = cols == 0 ? 0 : int64_t(x.size()) / cols;
  std::vector<float> out(static_cast<size_t>(rows));
  nm::parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      out[size_t(r)] = reduceRow(x.data() + r * cols, cols);
  });
  return out;
}

/// reduceRows as the f32 tensor of the grid's shape without its last
/// dimension (a quantize's row sums, ElementwiseSpec::rowSum).
HostTensor rowSums(const EwProgram &p,
                   const std::vector<const HostTensor *> &in) {
  const std::vector<float> r = reduceRows(p, in);
  HostTensor t = HostTensor::zeros(
      DType::F32, Shape(in[0]->shape.begin(), in[0]->shape.end() - 1));
  for (size_t i = 0; i < r.size(); ++i)
    t.set(int64_t(i), r[i]);
  return t;
}

/// One matrix of an FP8 tensor with its scales, as the oracle holds it.
nm::QuantizedTensor slice(const HostTensor &codes, const HostTensor &scales,
                          DType format, const Granularity &g, int64_t b,
                          int64_t rows, int64_t cols) {
  nm::QuantizedTensor q;
  q.format = format;
  q.rows = rows;
  q.cols = cols;
  q.granularity = g;
  q.scaleRows = g.scaleRows(rows);
  q.scaleCols = g.scaleCols(cols);
  const int64_t n = rows * cols, ns = q.scaleRows * q.scaleCols;
  q.codes.assign(codes.data.begin() + b * n, codes.data.begin() + (b + 1) * n);
  q.scales.resize(size_t(ns));
  for (int64_t i = 0; i < ns; ++i)
    q.scales[size_t(i)] = scales.get(b * ns + i);
  if (g.scale == ScaleFormat::UE8M0)
    q.scaleCodes.assign(scales.data.begin() + b * ns,
                        scales.data.begin() + (b + 1) * ns);
  return q;
}

/// The largest magnitude of elements [first, first + count) of `t` as
/// stored, NaN when one is NaN: what a GEMM's epilogue writes as D's amax
/// (KernelSpec::amaxOut).
float storedAmax(const HostTensor &t, int64_t first, int64_t count) {
  float m = 0.0f;
  for (int64_t i = first; i < first + count; ++i) {
    const float v = std::fabs(t.get(i));
    if (std::isnan(v))
      return std::numeric_limits<float>::quiet_NaN();
    m = v > m ? v : m;
  }
  return m;
}

void store(const nm::QuantizedTensor &q, HostTensor &codes, HostTensor &scales,
           int64_t b) {
  std::memcpy(codes.data.data() + b * int64_t(q.codes.size()), q.codes.data(),
              q.codes.size());
  const int64_t ns = int64_t(q.scales.size());
  if (scales.dtype == DType::UE8M0)
    std::memcpy(scales.data.data() + b * ns, q.scaleCodes.data(), size_t(ns));
  else
    for (int64_t i = 0; i < ns; ++i)
      scales.set(b * ns + i, q.scales[size_t(i)]);
}

/// The oracle's quantize step `s` (inputs `in`, outputs `out`; the
/// history state in `bufs`).
Status quantizeOnCpu(const PlanStep &s, std::vector<const HostTensor *> in,
                     const std::vector<HostTensor *> &out, HostBuffers &bufs) {
  auto context = [&](Status st) {
    return st.withContext("step '" + s.name + "' on the CPU");
  };
  const Geometry g = geometry(in[0]->shape);
  HostTensor sums; // the rows' sums the kernel computes (rowSum)
  if (s.aux.rowSum) {
    sums = rowSums(*s.aux.rowSum, in);
    in.push_back(&sums);
  }
  // A given amax (ElementwiseSpec::amaxIn) is the input after the
  // program's: one f32 a matrix.
  const HostTensor *amax = nullptr;
  if (s.aux.amaxIn) {
    amax = in[programTensorInputs(s.aux)];
    in.erase(in.begin() + std::ptrdiff_t(programTensorInputs(s.aux)));
  }
  const std::vector<float> x = evaluate(s.aux.program, in);
  const QuantRecipe &q = s.aux.quant;
  std::optional<nm::AmaxHistory> history;
  if (q.mode == ScalingMode::Delayed) {
    if (g.batch != 1)
      return context(errorf("expected one matrix with delayed scaling (one "
                            "amax history), found a batch of ",
                            g.batch));
    history = historyFromState(bufs.at(s.state), q.delayed);
  }
  nm::QuantizeOptions opts;
  opts.nonFinite = nm::NonFinitePolicy::Propagate; // as the kernels do
  for (int64_t b = 0; b < g.batch; ++b) {
    if (amax)
      opts.givenAmax = amax->get(b);
    auto r = nm::quantize(x.data() + b * g.rows * g.cols, g.rows, g.cols, q,
                          nullptr, history ? &*history : nullptr, opts);
    if (!r)
      return context(r.status());
    store(s.aux.transposed ? nm::transpose(*r) : *r, *out[0], *out[1], b);
  }
  if (history)
    stateFromHistory(*history, bufs.at(s.state));
  return Status::ok();
}
} // namespace

Status runStepOnCpu(const Plan &plan, const PlanStep &s, HostBuffers &bufs,
                    const nm::AccumulatorModel &accumulator) {
  std::vector<const HostTensor *> in;
  for (const std::string &n : s.inputs)
    in.push_back(&bufs.at(n));
  std::vector<HostTensor *> out;
  for (const std::string &n : s.outputs)
    out.push_back(&bufs.at(n));
  auto context = [&](Status st) {
    return st.withContext("step '" + s.name + "' on the CPU");
  };

  switch (s.kind) {
  case StepKind::Quantize:
    return quantizeOnCpu(s, in, out, bufs);
  case StepKind::Transpose: {
    const Geometry g = geometry(in[0]->shape);
    for (int64_t b = 0; b < g.batch; ++b) {
      nm::QuantizedTensor q = slice(*in[0], *in[1], s.aux.quant.format,
                                    s.aux.quant.granularity, b, g.rows, g.cols);
      store(nm::transpose(q), *out[0], *out[1], b);
    }
    return Status::ok();
  }
  case StepKind::Elementwise:
  case StepKind::Reduce: {
    const std::vector<float> x = s.kind == StepKind::Reduce
                                     ? reduceRows(s.aux.program, in)
                                     : evaluate(s.aux.program, in);
    for (int64_t i = 0; i < int64_t(x.size()); ++i)
      out[0]->set(i, x[size_t(i)]);
    return Status::ok();
  }
  case StepKind::Interleave: {
    const int64_t rows = in[0]->shape[0];
    const size_t rowBytes = size_t(bytesOf(in[0]->dtype, in[0]->shape[1]));
    for (int64_t r = 0; r < 2 * rows; ++r) {
      const int64_t pair = r / (2 * s.block), within = r % (2 * s.block);
      const int which = within >= s.block ? 1 : 0;
      const int64_t src = pair * s.block + within - which * s.block;
      std::memcpy(out[0]->data.data() + size_t(r) * rowBytes,
                  in[size_t(which)]->data.data() + size_t(src) * rowBytes,
                  rowBytes);
    }
    return Status::ok();
  }
  case StepKind::Permute:
    return context(runPermuteOnCpu(s, in, out));
  case StepKind::Unpermute:
    return context(runUnpermuteOnCpu(s, in, out));
  case StepKind::Gemm: {
    const KernelSpec &k = s.gemm;
    const Geometry ga = geometry(in[0]->shape), gb = geometry(in[2]->shape);
    if (k.kind != GemmKind::Dense) {
      // Contiguous: A [R, K] holds every group's rows. Masked: A [G, maxM,
      // K], one slab a group. B [G, N, K], one matrix a group. Along K: A
      // [M, K] and B [N, K] hold every group's K; D [G, M, N].
      const bool masked = k.kind == GemmKind::GroupedMasked;
      const bool alongK = k.kind == GemmKind::GroupedK;
      const int64_t groups = alongK ? 1 : in[2]->shape[0];
      nm::GroupedRows rows;
      rows.kind = k.kind;
      rows.groups = intsOf(*in[4]);
      std::vector<nm::QuantizedTensor> a, b;
      for (int64_t g = 0; g < (masked ? groups : 1); ++g)
        a.push_back(slice(*in[0], *in[1], k.a.format, k.a.granularity, g,
                          ga.rows, ga.cols));
      for (int64_t g = 0; g < groups; ++g)
        b.push_back(slice(*in[2], *in[3], k.b.format, k.b.granularity, g,
                          gb.rows, gb.cols));
      nm::ReferenceGemmOptions opts;
      opts.promotionInterval = k.promotionInterval;
      opts.accumulator = accumulator;
      auto d = nm::groupedReferenceGemm(rows, a, b, 0.0f, opts);
      if (!d)
        return context(d.status());
      for (int64_t i = 0; i < int64_t(d->size()); ++i)
        out[0]->set(i, (*d)[size_t(i)]);
      return Status::ok();
    }
    const int64_t m = ga.rows, n = gb.rows, kk = ga.cols;
    nm::ReferenceGemmOptions opts;
    opts.promotionInterval = k.promotionInterval;
    opts.accumulator = accumulator;
    std::vector<float> c;
    if (k.accumulate)
      c = in[4]->toFloat();
    for (int64_t b = 0; b < ga.batch; ++b) {
      nm::QuantizedTensor a =
          slice(*in[0], *in[1], k.a.format, k.a.granularity, b, m, kk);
      nm::QuantizedTensor bt =
          slice(*in[2], *in[3], k.b.format, k.b.granularity, b, n, kk);
      auto d = nm::referenceGemm(a, Layout::KMajor, bt, Layout::KMajor,
                                 k.accumulate ? c.data() + b * m * n : nullptr,
                                 opts);
      if (!d)
        return context(d.status());
      if (k.epilogue) {
        // The epilogue's values, quantized along the rows as a quantize
        // step quantizes them (a batch of one: PlanValidate).
        const GemmEpilogue &e = *k.epilogue;
        const std::vector<float> h = evalEpilogue(e, k.out, d->data(), m, n);
        QuantRecipe q;
        q.format = e.format;
        q.granularity = e.granularity;
        nm::QuantizeOptions qo;
        qo.nonFinite = nm::NonFinitePolicy::Propagate; // as the kernels do
        auto r =
            nm::quantize(h.data(), m, e.outCols(n), q, nullptr, nullptr, qo);
        if (!r)
          return context(r.status());
        store(*r, *out[0], *out[1], 0);
        continue;
      }
      for (int64_t i = 0; i < m * n; ++i)
        out[0]->set(b * m * n + i, (*d)[size_t(i)]);
      if (k.amaxOut) // of D as stored (the epilogue's: NaN if D holds one)
        out[1]->set(b, storedAmax(*out[0], b * m * n, m * n));
    }
    return Status::ok();
  }
  }
  (void)plan;
  return Status::ok();
}

Status runPlanOnCpu(const Plan &plan, HostBuffers &buffers, int iterations,
                    const nm::AccumulatorModel &accumulator) {
  for (const PlanStep &s : plan.steps)
    if (s.phase == Phase::Prepare)
      FP8_RETURN_IF_ERROR(runStepOnCpu(plan, s, buffers, accumulator));
  for (int it = 0; it < iterations; ++it)
    for (const PlanStep &s : plan.steps)
      if (s.phase == Phase::Run)
        FP8_RETURN_IF_ERROR(runStepOnCpu(plan, s, buffers, accumulator));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The reference graph
//===----------------------------------------------------------------------===//

Expected<HostBuffers> runReference(const Plan &plan, const ResolvedPlan &shapes,
                                   const HostBuffers &buffers) {
  HostBuffers ref;
  auto value = [&](const std::string &n) -> const HostTensor & {
    auto it = ref.find(n);
    return it != ref.end() ? it->second : buffers.at(n);
  };
  for (const RefOp &op : plan.reference) {
    HostTensor out = HostTensor::zeros(op.dtype, shapes.shapes.at(op.out));
    if (op.kind == RefOp::Kind::Elementwise || op.kind == RefOp::Kind::Reduce) {
      std::vector<const HostTensor *> in;
      for (const std::string &n : op.inputs)
        in.push_back(&value(n));
      const std::vector<float> x = op.kind == RefOp::Kind::Reduce
                                       ? reduceRows(op.program, in)
                                       : evaluate(op.program, in);
      for (int64_t i = 0; i < int64_t(x.size()); ++i)
        out.set(i, x[size_t(i)]);
    } else if (op.kind != RefOp::Kind::Matmul) {
      FP8_RETURN_IF_ERROR(runMoeReference(op, value, out)
                              .withContext("reference " +
                                           std::string(toString(op.kind)) +
                                           " '" + op.out + "'"));
    } else {
      const HostTensor &a = value(op.inputs[0]), &b = value(op.inputs[1]);
      const std::vector<float> af = a.toFloat(), bf = b.toFloat();
      std::vector<float> cf;
      if (op.inputs.size() > 2)
        cf = value(op.inputs[2]).toFloat();
      const size_t lead = op.batched ? 1 : 0;
      const int64_t batch = op.batched ? a.shape[0] : 1;
      const int64_t m =
          op.aLayout == Layout::KMajor ? a.shape[lead] : a.shape[lead + 1];
      const int64_t k =
          op.aLayout == Layout::KMajor ? a.shape[lead + 1] : a.shape[lead];
      const int64_t n =
          op.bLayout == Layout::KMajor ? b.shape[lead] : b.shape[lead + 1];
      for (int64_t g = 0; g < batch; ++g) {
        auto d = nm::referenceGemmUnquantized(
            af.data() + g * m * k, op.aLayout, bf.data() + g * n * k,
            op.bLayout, m, n, k, cf.empty() ? nullptr : cf.data() + g * m * n);
        if (!d)
          return d.status().withContext("reference matmul '" + op.out + "'");
        for (int64_t i = 0; i < m * n; ++i)
          out.set(g * m * n + i, float((*d)[size_t(i)]));
      }
    }
    ref.emplace(op.out, std::move(out));
  }
  return ref;
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

TensorComparison compareBits(const HostTensor &got, const HostTensor &want) {
  TensorComparison c;
  c.elements = want.elements();
  if (got.dtype != want.dtype || got.shape != want.shape) {
    c.mismatches = c.elements;
    c.firstMismatch = 0;
    return c;
  }
  const int64_t w = sizeOf(want.dtype);
  for (int64_t i = 0; i < c.elements; ++i)
    if (std::memcmp(&got.data[size_t(i * w)], &want.data[size_t(i * w)],
                    size_t(w)) != 0) {
      if (c.firstMismatch < 0)
        c.firstMismatch = i;
      ++c.mismatches;
    }
  return c;
}

TensorComparison compareValues(const HostTensor &got, const HostTensor &want) {
  TensorComparison c;
  c.elements = want.elements();
  if (got.shape != want.shape) {
    c.mismatches = c.elements;
    c.metrics.similarity = 1;
    return c;
  }
  const std::vector<float> x = got.toFloat(), y = want.toFloat();
  c.metrics = nm::compare(x.data(), y.data(), int64_t(x.size()));
  return c;
}

} // namespace fp8
