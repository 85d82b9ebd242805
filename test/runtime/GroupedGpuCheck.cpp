//===- GroupedGpuCheck.cpp - One grouped GEMM case against the oracle -----===//
//
// Random float inputs are quantized by the oracle with the case's recipe
// (contiguous: A as one tensor; masked: one slab per group; B one matrix per
// group), fp8::groupedGemm runs on those codes and scales, and every row of
// every group is compared with the oracle's grouped GEMM (the promotion
// structure and the Hopper tensor-core accumulator model). D is poisoned
// with NaN first: an unwritten group row fails, and a row outside every
// group (masked rows past the valid count, contiguous rows after the last
// offset) must keep the poison.
//
//===----------------------------------------------------------------------===//

#include "test/runtime/GroupedGpuCheck.h"
#include "numerics/Formats.h"
#include "numerics/GroupedGemm.h"
#include "numerics/Random.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

namespace fp8 {

std::string describe(const GroupedGpuCase &c) {
  std::ostringstream os;
  const bool contiguous = c.kind == GemmKind::GroupedContiguous;
  const bool alongK = c.kind == GemmKind::GroupedK;
  os << (contiguous ? "contiguous"
         : alongK   ? "along K"
                    : "masked")
     << " G=" << c.rows.size() << (alongK ? " K [" : " rows [");
  for (size_t i = 0; i < c.rows.size(); ++i)
    os << (i ? "," : "") << c.rows[i];
  os << "]";
  if (c.kind == GemmKind::GroupedMasked)
    os << " of " << c.maxM;
  if (alongK)
    os << " M " << c.m << (c.accumulate ? " +C in place" : "");
  if (c.trailingRows)
    os << " +" << c.trailingRows << " trailing";
  os << " x " << c.n << " x " << c.k << " " << toString(c.recipe.a.format)
     << "[" << toString(c.recipe.a.granularity) << "] x "
     << toString(c.recipe.b.format) << "[" << toString(c.recipe.b.granularity)
     << "] p" << promotionToInt(c.recipe.promotionInterval) << " -> "
     << toString(c.recipe.out);
  if (c.tile)
    os << " tile " << toJSON(*c.tile);
  if (c.aScalesOuterContiguous)
    os << " A scales [K blocks][rows]";
  return os.str();
}

namespace {

/// A tensor's scales as stored on the device: f32 values or UE8M0 bytes,
/// [outer][K blocks] or transposed.
void appendScales(const numerics::QuantizedTensor &q, bool transpose,
                  std::vector<uint8_t> &out) {
  const bool e8 = q.granularity.scale == ScaleFormat::UE8M0;
  const size_t eb = e8 ? 1 : 4;
  const int64_t rows = q.scaleRows, cols = q.scaleCols;
  const size_t at = out.size();
  out.resize(at + size_t(rows * cols) * eb);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const size_t src = size_t(i * cols + j);
      const size_t dst = size_t(transpose ? j * rows + i : i * cols + j);
      if (e8)
        out[at + dst] = q.scaleCodes[src];
      else
        std::memcpy(&out[at + dst * 4], &q.scales[src], 4);
    }
}

Expected<numerics::QuantizedTensor> randomQuantized(int64_t rows, int64_t cols,
                                                    const OperandSpec &o,
                                                    float sigma,
                                                    uint64_t seed) {
  numerics::RandomSpec r{numerics::Distribution::Normal, sigma, seed};
  std::vector<float> x = numerics::randomTensor(rows * cols, r);
  return numerics::quantize(x.data(), rows, cols,
                            QuantRecipe{o.format, o.granularity});
}

struct Inputs {
  std::vector<numerics::QuantizedTensor> a, b;
  numerics::GroupedRows groups;
  int64_t rows = 0;     ///< rows of A as stored
  int64_t dRows = 0;    ///< rows of D
  std::vector<float> c; ///< along K with accumulation: C, D's shape
};

/// The K-grouped inputs: A [M, K] and B [N, K] over every group's K.
Expected<Inputs> alongKInputs(const GroupedGpuCase &c, uint64_t seed) {
  Inputs in;
  in.groups.kind = c.kind;
  in.groups.groups.push_back(0);
  for (int32_t k : c.rows)
    in.groups.groups.push_back(in.groups.groups.back() + k);
  const int64_t k = in.groups.groups.back();
  in.rows = c.m;
  in.dRows = int64_t(c.rows.size()) * c.m;
  auto a = randomQuantized(c.m, k, c.recipe.a, 1.0f, seed);
  auto b = randomQuantized(c.n, k, c.recipe.b, 0.5f, seed + 1);
  if (!a || !b)
    return (!a ? a.status() : b.status()).withContext("quantizing");
  in.a.push_back(std::move(*a));
  in.b.push_back(std::move(*b));
  if (c.accumulate) {
    numerics::RandomSpec rc{numerics::Distribution::Normal, 4.0f, seed + 2};
    in.c = numerics::randomTensor(in.dRows * c.n, rc);
  }
  return in;
}

Expected<Inputs> inputs(const GroupedGpuCase &c) {
  Inputs in;
  const bool contiguous = c.kind == GemmKind::GroupedContiguous;
  const int64_t g = int64_t(c.rows.size());
  const uint64_t seed = c.seed * 7919 + uint64_t(c.n * 17 + c.k);
  if (c.kind == GemmKind::GroupedK)
    return alongKInputs(c, seed);
  in.groups.kind = c.kind;
  if (contiguous) {
    in.groups.groups.push_back(0);
    for (int32_t r : c.rows)
      in.groups.groups.push_back(in.groups.groups.back() + r);
    in.rows = in.groups.groups.back() + c.trailingRows;
    auto a = randomQuantized(in.rows, c.k, c.recipe.a, 1.0f, seed);
    if (!a)
      return a.status().withContext("quantizing A");
    in.a.push_back(std::move(*a));
  } else {
    in.groups.groups = c.rows;
    in.rows = g * c.maxM;
    for (int64_t i = 0; i < g; ++i) {
      auto a = randomQuantized(c.maxM, c.k, c.recipe.a, 1.0f, seed + 3 * i);
      if (!a)
        return a.status().withContext("quantizing A");
      in.a.push_back(std::move(*a));
    }
  }
  for (int64_t i = 0; i < g; ++i) {
    auto b = randomQuantized(c.n, c.k, c.recipe.b, 0.5f, seed + 1000 + i);
    if (!b)
      return b.status().withContext("quantizing B");
    in.b.push_back(std::move(*b));
  }
  in.dRows = in.rows;
  return in;
}

/// Runs the case on the GPU; D as floats (NaN poison kept as NaN) and
/// whether each element kept the poison's bits.
Expected<std::vector<float>> runKernel(const GroupedGpuCase &c,
                                       const Inputs &in,
                                       std::vector<bool> &poisoned,
                                       GemmReport &rep) {
  const int64_t g = int64_t(c.rows.size());
  const bool contiguous = c.kind == GemmKind::GroupedContiguous;
  std::vector<uint8_t> a, sa, b, sb;
  for (const auto &q : in.a) {
    a.insert(a.end(), q.codes.begin(), q.codes.end());
    appendScales(q, c.aScalesOuterContiguous, sa);
  }
  for (const auto &q : in.b) {
    b.insert(b.end(), q.codes.begin(), q.codes.end());
    appendScales(q, false, sb);
  }
  const int64_t ob = sizeOf(c.recipe.out);
  auto dA = DeviceBuffer::fromHost(a);
  auto dSA = DeviceBuffer::fromHost(sa);
  auto dB = DeviceBuffer::fromHost(b);
  auto dSB = DeviceBuffer::fromHost(sb);
  auto dG = DeviceBuffer::fromHost(in.groups.groups);
  auto dD = DeviceBuffer::alloc(size_t(in.dRows * c.n * ob));
  for (auto *buf : {&dA, &dSA, &dB, &dSB, &dG, &dD})
    if (!*buf)
      return buf->status();
  if (c.accumulate) { // C in D's buffer (f32)
    if (c.recipe.out != DType::F32)
      return errorf("expected f32 output with in-place accumulation");
    FP8_RETURN_IF_ERROR(dD->upload(in.c.data(), in.c.size() * 4));
  } else {
    FP8_RETURN_IF_ERROR(dD->fill(0xFF)); // NaN in bf16 and f32
  }
  GroupedGemmTensors t;
  t.a = dA->get();
  t.scaleA = dSA->get();
  t.b = dB->get();
  t.scaleB = dSB->get();
  t.d = dD->get();
  t.c = c.accumulate ? dD->get() : nullptr;
  t.groups = static_cast<const int32_t *>(dG->get());
  if (c.aScalesOuterContiguous) {
    t.scaleALdOuter = 1;
    t.scaleALdK = in.a[0].scaleRows;
  }
  GroupedGemmShape shape;
  shape.kind = c.kind;
  shape.groups = g;
  shape.m = contiguous ? in.rows : c.kind == GemmKind::GroupedK ? c.m : c.maxM;
  shape.n = c.n;
  shape.k = c.kind == GemmKind::GroupedK ? in.groups.groups.back() : c.k;
  shape.expectedM = c.expectedM;
  FP8_RETURN_IF_ERROR(
      checkGroupTensor(shape, t.groups, nullptr).withContext("group tensor"));
  GemmOptions opts;
  opts.tile = c.tile;
  GemmRecipe recipe = c.recipe;
  recipe.accumulate = c.accumulate;
  FP8_RETURN_IF_ERROR(groupedGemm(recipe, shape, t, nullptr, opts, &rep));
  FP8_RETURN_IF_ERROR(waitStream(nullptr, 60.0, "kernel " + rep.kernel));
  const size_t count = size_t(in.dRows * c.n);
  std::vector<float> out(count);
  poisoned.assign(count, false);
  if (c.recipe.out == DType::BF16) {
    std::vector<uint16_t> bits(count);
    FP8_RETURN_IF_ERROR(dD->download(bits));
    for (size_t i = 0; i < count; ++i) {
      out[i] = numerics::bf16ToFloat(bits[i]);
      poisoned[i] = bits[i] == 0xFFFF;
    }
  } else {
    std::vector<uint32_t> bits(count);
    FP8_RETURN_IF_ERROR(dD->download(bits));
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(&out[i], &bits[i], 4);
      poisoned[i] = bits[i] == 0xFFFFFFFFu;
    }
  }
  return out;
}

} // namespace

Expected<GroupedGpuCaseResult> runGroupedGpuCase(const GroupedGpuCase &c) {
  if (c.rows.empty())
    return errorf("expected at least one group in the case");
  auto in = inputs(c);
  if (!in)
    return in.status();
  GemmReport rep;
  std::vector<bool> poisoned;
  auto out = runKernel(c, *in, poisoned, rep);
  if (!out)
    return out.status();

  numerics::ReferenceGemmOptions ro;
  ro.promotionInterval = c.recipe.promotionInterval;
  ro.accumulator = numerics::kHopperFP8Accumulator;
  const float kOutside = std::nanf("");
  auto ref =
      numerics::groupedReferenceGemm(in->groups, in->a, in->b, kOutside, ro,
                                     c.accumulate ? in->c.data() : nullptr);
  if (!ref)
    return ref.status().withContext("grouped reference GEMM");

  GroupedGpuCaseResult res;
  res.kernel = rep.kernel;
  double maxRef = 0, maxErr = 0;
  for (size_t i = 0; i < ref->size(); ++i) {
    const float want = (*ref)[i];
    if (std::isnan(want)) { // a row outside every group
      if (!poisoned[i])
        ++res.untouchedBad;
      continue;
    }
    maxRef = std::max(maxRef, double(std::fabs(want)));
    if (!std::isfinite((*out)[i]))
      ++res.nonFinite;
    else
      maxErr = std::max(maxErr, double(std::fabs((*out)[i] - want)));
  }
  res.relErr = maxRef > 0 ? maxErr / maxRef : maxErr;
  const double tol = c.recipe.out == DType::BF16 ? 8e-3 : 2e-3;
  res.passed = res.nonFinite == 0 && res.untouchedBad == 0 && res.relErr <= tol;
  std::ostringstream os;
  os << "kernel " << rep.kernel << " (grid " << rep.grid
     << (rep.scaleATma ? ", A scales by TMA" : "")
     << (rep.scaleBTma ? ", B scales by TMA" : "")
     << "): max |d - emulated| / max |emulated| = " << res.relErr << " (tol "
     << tol << ")";
  if (res.nonFinite)
    os << ", " << res.nonFinite << " non-finite outputs in group rows";
  if (res.untouchedBad)
    os << ", " << res.untouchedBad
       << " elements outside every group were written";
  res.summary = os.str();
  return res;
}

} // namespace fp8
