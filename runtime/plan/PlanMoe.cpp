//===- PlanMoe.cpp - A plan's MoE steps on the CPU ------------------------===//

#include "runtime/plan/PlanMoe.h"

#include "codegen/kernels/fp8_math.h"
#include "numerics/Parallel.h"
#include "numerics/Quantize.h"
#include "numerics/ReferenceGemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace fp8 {

namespace nm = numerics;

std::vector<int32_t> intsOf(const HostTensor &t) {
  std::vector<int32_t> v(size_t(t.elements()));
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
}
/// Stores `v` into an int32 tensor; elements past v's end become `fill`.
static void storeInts(const std::vector<int32_t> &v, HostTensor &t,
                      int32_t fill = -1) {
  std::vector<int32_t> all(size_t(t.elements()), fill);
  std::copy(v.begin(), v.begin() + int64_t(std::min(v.size(), all.size())),
            all.begin());
  std::memcpy(t.data.data(), all.data(), all.size() * 4);
}

Expected<nm::MoePermutation> routeOf(const HostTensor &ids, int64_t experts,
                                     int64_t align) {
  return nm::moePermute(intsOf(ids), ids.shape[0], ids.shape[1], experts,
                        align);
}

const PlanStep *routingReader(const Plan &plan, const std::string &name,
                              StepKind kind) {
  const size_t at = kind == StepKind::Permute ? 1 : 2;
  for (const PlanStep &s : plan.steps)
    if (s.kind == kind && s.inputs.size() > at && s.inputs[at] == name)
      return &s;
  return nullptr;
}

// A partial Fisher-Yates shuffle per token.
const PlanStep *maskedGemmReading(const Plan &plan, const std::string &name) {
  for (const PlanStep &s : plan.steps)
    if (s.kind == StepKind::Gemm && s.gemm.kind == GemmKind::GroupedMasked &&
        s.inputs.size() == 5 && s.inputs[4] == name)
      return &s;
  return nullptr;
}

Status randomRoutingIds(const Plan &plan, const HostBuffers &buffers,
                        const PlanBuffer &b, HostTensor &t, uint64_t seed) {
  if (const PlanStep *g = maskedGemmReading(plan, b.name)) {
    // A masked GEMM's valid rows (a decode step's tokens per expert):
    // uniform in [0, maxM].
    const int64_t maxM = buffers.at(g->inputs[0]).shape[1];
    std::mt19937_64 rng(seed);
    std::vector<int32_t> rows(size_t(t.elements()));
    for (int32_t &r : rows)
      r = int32_t(rng() % uint64_t(maxM + 1));
    std::memcpy(t.data.data(), rows.data(), rows.size() * 4);
    return Status::ok();
  }
  const PlanStep *s = routingReader(plan, b.name, StepKind::Permute);
  if (!s || t.shape.size() != 2)
    return errorf("cannot draw random values for int32 input '", b.name,
                  "': expected the routing ids [T, topK] of a permute step or "
                  "the valid rows of a masked grouped GEMM (give it with "
                  "--inputs)");
  const int64_t experts = plan.buffer(s->outputs[2])->shape[0].value - 1;
  const int64_t tokens = t.shape[0], topK = t.shape[1];
  if (topK > experts)
    return errorf("cannot route each token of '", b.name, "' to ", topK,
                  " distinct experts of ", experts);
  std::mt19937_64 rng(seed);
  std::vector<int32_t> all(static_cast<size_t>(experts));
  std::vector<int32_t> ids(static_cast<size_t>(tokens * topK));
  for (int64_t i = 0; i < tokens; ++i) {
    for (int64_t e = 0; e < experts; ++e)
      all[size_t(e)] = int32_t(e);
    for (int64_t j = 0; j < topK; ++j) {
      const int64_t pick = j + int64_t(rng() % uint64_t(experts - j));
      std::swap(all[size_t(j)], all[size_t(pick)]);
      ids[size_t(i * topK + j)] = all[size_t(j)];
    }
  }
  std::memcpy(t.data.data(), ids.data(), ids.size() * 4);
  return Status::ok();
}

Status checkRoutingIds(const Plan &plan, const HostBuffers &buffers) {
  for (const PlanStep &s : plan.steps) {
    if (s.kind == StepKind::Gemm && s.gemm.kind == GemmKind::GroupedMasked &&
        s.inputs.size() == 5) {
      // Valid rows in [0, maxM] (the kernel clamps; the oracle refuses).
      const std::vector<int32_t> rows = intsOf(buffers.at(s.inputs[4]));
      const int64_t maxM = buffers.at(s.inputs[0]).shape[1];
      for (size_t g = 0; g < rows.size(); ++g)
        if (rows[g] < 0 || rows[g] > maxM)
          return errorf("valid rows '", s.inputs[4],
                        "': expected values in "
                        "[0, ",
                        maxM, "] (the rows of a group's slab), found ", rows[g],
                        " for group ", g);
    }
    if (s.kind != StepKind::Permute)
      continue;
    const HostTensor &ids = buffers.at(s.inputs[1]);
    const int64_t experts = buffers.at(s.outputs[2]).shape[0] - 1;
    auto p = routeOf(ids, experts, s.align);
    if (!p)
      return p.status().withContext("routing ids '" + s.inputs[1] + "'");
  }
  return Status::ok();
}

Status runPermuteOnCpu(const PlanStep &s,
                       const std::vector<const HostTensor *> &in,
                       const std::vector<HostTensor *> &out) {
  const int64_t experts = out[2]->shape[0] - 1, hidden = in[0]->shape[1];
  auto p = routeOf(*in[1], experts, s.align);
  if (!p)
    return (p.status());
  // The gathered rows (zeros for padding and the rows after the last
  // group), quantized as one [R, H] tensor: row blocks, so each row's
  // codes and scales are those of its token's row.
  std::vector<float> x = nm::gatherRows(in[0]->toFloat(), hidden, *p);
  const int64_t rows = out[0]->shape[0];
  x.resize(size_t(rows * hidden), 0.0f);
  nm::QuantizeOptions opts;
  opts.nonFinite = nm::NonFinitePolicy::Propagate; // as the kernels do
  auto r =
      nm::quantize(x.data(), rows, hidden, s.aux.quant, nullptr, nullptr, opts);
  if (!r)
    return (r.status());
  // Row blocks: f32 or UE8M0 scales, one per row and column block.
  std::memcpy(out[0]->data.data(), r->codes.data(), r->codes.size());
  if (out[1]->dtype == DType::UE8M0)
    std::memcpy(out[1]->data.data(), r->scaleCodes.data(),
                r->scaleCodes.size());
  else
    for (size_t i = 0; i < r->scales.size(); ++i)
      out[1]->set(int64_t(i), r->scales[i]);
  storeInts(p->offsets, *out[2]);
  storeInts(p->destination, *out[3]);
  storeInts(p->source, *out[4]);
  return Status::ok();
}

Status runUnpermuteOnCpu(const PlanStep &s,
                         const std::vector<const HostTensor *> &in,
                         const std::vector<HostTensor *> &out) {
  (void)s;
  // As the kernel: FP32 in j order with fp8_math.h's operations.
  const int64_t rows = in[0]->shape[0], hidden = in[0]->shape[1];
  const int64_t tokens = in[1]->shape[0], topK = in[1]->shape[1];
  const std::vector<int32_t> pos = intsOf(*in[1]);
  const std::vector<float> y = in[0]->toFloat();
  nm::parallelFor(tokens, 16, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t h = 0; h < hidden; ++h) {
        float acc = 0.0f;
        for (int64_t j = 0; j < topK; ++j) {
          const int64_t r = pos[size_t(t * topK + j)];
          if (r >= 0 && r < rows)
            acc = fp8k::add(acc, fp8k::mul(in[2]->get(t * topK + j),
                                           y[size_t(r * hidden + h)]));
        }
        out[0]->set(t * hidden + h, acc);
      }
  });
  return Status::ok();
}

/// An MoE op of the reference graph, its routing recomputed from the ids.
namespace {
/// A masked grouped matmul of the reference: each group's first
/// valid_rows[g] rows of its slab times its matrix, in FP64; the other rows
/// zero.
Status runMaskedReference(const RefOp &op, const RefValue &value,
                          HostTensor &out) {
  const HostTensor &a = value(op.inputs[0]), &b = value(op.inputs[1]);
  const std::vector<int32_t> valid = intsOf(value(op.inputs[2]));
  const std::vector<float> af = a.toFloat(), bf = b.toFloat();
  const int64_t maxM = a.shape[1], k = a.shape[2];
  const int64_t n = op.bLayout == Layout::KMajor ? b.shape[1] : b.shape[2];
  for (int64_t g = 0; g < op.experts; ++g) {
    const int64_t rows = valid[size_t(g)];
    if (rows < 0 || rows > maxM)
      return errorf("expected valid rows in [0, ", maxM, "], found ", rows,
                    " for group ", g);
    if (rows == 0)
      continue;
    auto d = nm::referenceGemmUnquantized(af.data() + g * maxM * k,
                                          Layout::KMajor, bf.data() + g * n * k,
                                          op.bLayout, rows, n, k);
    if (!d)
      return d.status();
    for (int64_t i = 0; i < rows * n; ++i)
      out.set(g * maxM * n + i, float((*d)[size_t(i)]));
  }
  return Status::ok();
}
} // namespace

Status runMoeReference(const RefOp &op, const RefValue &value,
                       HostTensor &out) {
  if (op.masked)
    return runMaskedReference(op, value, out);
  const HostTensor &x = value(op.inputs[0]);
  const HostTensor &ids =
      value(op.inputs[op.kind == RefOp::Kind::GroupedMatmul ? 2 : 1]);
  auto p = routeOf(ids, op.experts, op.align);
  if (!p)
    return p.status();
  const std::vector<float> xf = x.toFloat();
  std::vector<double> acc;
  if (op.kind == RefOp::Kind::Permute) {
    const std::vector<float> rows = nm::gatherRows(xf, x.shape[1], *p);
    for (int64_t i = 0; i < int64_t(rows.size()); ++i)
      out.set(i, rows[size_t(i)]);
    return Status::ok();
  }
  if (op.kind == RefOp::Kind::Unpermute) {
    const std::vector<float> w = value(op.inputs[2]).toFloat();
    const int64_t hidden = x.shape[1], topK = ids.shape[1];
    for (int64_t t = 0; t < ids.shape[0]; ++t)
      for (int64_t h = 0; h < hidden; ++h) {
        double sum = 0;
        for (int64_t j = 0; j < topK; ++j)
          sum += double(w[size_t(t * topK + j)]) *
                 xf[size_t(p->destination[size_t(t * topK + j)] * hidden + h)];
        out.set(t * hidden + h, float(sum));
      }
    return Status::ok();
  }
  // Grouped matmul: each expert's rows times its matrix, in FP64.
  const HostTensor &b = value(op.inputs[1]);
  const std::vector<float> bf = b.toFloat();
  const int64_t k = x.shape[1];
  const bool kMajor = op.bLayout == Layout::KMajor;
  const int64_t n = kMajor ? b.shape[1] : b.shape[2];
  for (int64_t g = 0; g < op.experts; ++g) {
    const int64_t r0 = p->offsets[size_t(g)], r1 = p->offsets[size_t(g + 1)];
    if (r1 == r0)
      continue;
    auto d = nm::referenceGemmUnquantized(xf.data() + r0 * k, Layout::KMajor,
                                          bf.data() + g * n * k, op.bLayout,
                                          r1 - r0, n, k);
    if (!d)
      return d.status();
    for (int64_t i = 0; i < (r1 - r0) * n; ++i)
      out.set(r0 * n + i, float((*d)[size_t(i)]));
  }
  return Status::ok();
}

} // namespace fp8
