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

const PlanStep *groupInputReader(const Plan &plan, const std::string &name) {
  for (const PlanStep &s : plan.steps)
    if (s.kind == StepKind::Gemm &&
        (s.gemm.kind == GemmKind::GroupedMasked ||
         s.gemm.kind == GemmKind::GroupedK) &&
        s.inputs.size() == 5 && s.inputs[4] == name)
      return &s;
  return nullptr;
}

/// Where the group tensor of a masked or K-grouped step ends: max_m
/// (masked) or every group's K (along K), from its A.
static int64_t groupEnd(const PlanStep &s, const HostBuffers &buffers) {
  return buffers.at(s.inputs[0]).shape[1];
}

// A partial Fisher-Yates shuffle per token.
Status randomRoutingIds(const Plan &plan, const HostBuffers &buffers,
                        const PlanBuffer &b, HostTensor &t, uint64_t seed) {
  if (const PlanStep *g = groupInputReader(plan, b.name)) {
    std::mt19937_64 rng(seed);
    std::vector<int32_t> v(size_t(t.elements()));
    const int64_t end = groupEnd(*g, buffers);
    if (g->gemm.kind == GemmKind::GroupedMasked) {
      // A masked GEMM's valid rows (a decode step's tokens per expert):
      // uniform in [0, maxM].
      for (int32_t &r : v)
        r = int32_t(rng() % uint64_t(end + 1));
    } else {
      // Offsets along K: each group's K a random number of 128-blocks,
      // ragged around an equal share (empty groups included), the last
      // group ending at the last whole block of K (a routing padded to
      // 128 assigns every row).
      const int64_t blocks = end / 128;
      const int64_t share = 2 * blocks / std::max<int64_t>(g->gemm.groups, 1);
      int64_t at = 0;
      v[0] = 0;
      for (size_t g = 1; g + 1 < v.size(); ++g) {
        at = std::min(blocks, at + int64_t(rng() % uint64_t(share + 1)));
        v[g] = int32_t(at * 128);
      }
      v.back() = int32_t(blocks * 128);
    }
    std::memcpy(t.data.data(), v.data(), v.size() * 4);
    return Status::ok();
  }
  const PlanStep *s = routingReader(plan, b.name, StepKind::Permute);
  if (!s || t.shape.size() != 2)
    return errorf("cannot draw random values for int32 input '", b.name,
                  "': expected the routing ids [T, topK] of a permute step or "
                  "the group tensor of a masked or K-grouped GEMM (give it "
                  "with "
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
    if (s.kind == StepKind::Gemm &&
        (s.gemm.kind == GemmKind::GroupedMasked ||
         s.gemm.kind == GemmKind::GroupedK) &&
        s.inputs.size() == 5 && plan.buffer(s.inputs[4]) &&
        plan.buffer(s.inputs[4])->role == BufferRole::Input) {
      // Valid rows in [0, maxM], offsets along K multiples of 128 up to K
      // (the kernel clamps; the oracle refuses).
      nm::GroupedRows rows;
      rows.kind = s.gemm.kind;
      rows.groups = intsOf(buffers.at(s.inputs[4]));
      const bool masked = s.gemm.kind == GemmKind::GroupedMasked;
      FP8_RETURN_IF_ERROR(
          nm::checkGroupValues(rows, groupEnd(s, buffers))
              .withContext(std::string(masked ? "valid rows '" : "offsets '") +
                           s.inputs[4] + "'"));
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

/// Rows [begin, end) of the tokens of a [R, C] operand stored MN-major
/// (rows are K) or columns of a [C, R] one stored K-major, as a packed
/// operand of the same layout (K = end - begin).
std::vector<float> kSlice(const std::vector<float> &x, const Shape &shape,
                          Layout layout, int64_t begin, int64_t end) {
  if (layout == Layout::MNMajor)
    return std::vector<float>(x.begin() + begin * shape[1],
                              x.begin() + end * shape[1]);
  std::vector<float> s;
  s.reserve(size_t(shape[0] * (end - begin)));
  for (int64_t r = 0; r < shape[0]; ++r)
    s.insert(s.end(), x.begin() + r * shape[1] + begin,
             x.begin() + r * shape[1] + end);
  return s;
}

/// A grouped matmul of the reference along K: for each expert, its rows
/// of A and B (offsets[e] to offsets[e + 1]), out[e] = A_e^T B_e in FP64;
/// zeros for an empty group.
Status runAlongKReference(const RefOp &op, const RefValue &value,
                          HostTensor &out) {
  const HostTensor &a = value(op.inputs[0]), &b = value(op.inputs[1]);
  nm::GroupedRows rows;
  rows.kind = GemmKind::GroupedK;
  rows.groups = intsOf(value(op.inputs[2]));
  const bool aK = op.aLayout == Layout::KMajor;
  const bool bK = op.bLayout == Layout::KMajor;
  const int64_t k = aK ? a.shape[1] : a.shape[0];
  const int64_t m = aK ? a.shape[0] : a.shape[1];
  const int64_t n = bK ? b.shape[0] : b.shape[1];
  FP8_RETURN_IF_ERROR(nm::checkGroupValues(rows, k));
  const std::vector<float> af = a.toFloat(), bf = b.toFloat();
  for (int64_t e = 0; e < op.experts; ++e) {
    const int64_t k0 = rows.groups[size_t(e)], k1 = rows.groups[size_t(e + 1)];
    if (k0 == k1)
      continue;
    const std::vector<float> ae = kSlice(af, a.shape, op.aLayout, k0, k1);
    const std::vector<float> be = kSlice(bf, b.shape, op.bLayout, k0, k1);
    auto d = nm::referenceGemmUnquantized(ae.data(), op.aLayout, be.data(),
                                          op.bLayout, m, n, k1 - k0);
    if (!d)
      return d.status().withContext("expert " + std::to_string(e));
    for (int64_t i = 0; i < m * n; ++i)
      out.set(e * m * n + i, float((*d)[size_t(i)]));
  }
  return Status::ok();
}
} // namespace

Status runMoeReference(const RefOp &op, const RefValue &value,
                       HostTensor &out) {
  if (op.kind == RefOp::Kind::GroupedMatmul &&
      op.form == GemmKind::GroupedMasked)
    return runMaskedReference(op, value, out);
  if (op.kind == RefOp::Kind::GroupedMatmul && op.form == GemmKind::GroupedK)
    return runAlongKReference(op, value, out);
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
