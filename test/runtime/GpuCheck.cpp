//===- GpuCheck.cpp - One GPU GEMM case against the CPU oracle ------------===//
//
// Random float inputs are quantized by the oracle (numerics/) with the
// case's recipe; the kernel runs on those codes and scales; its output is
// compared with
//   (1) the oracle's emulation of the same computation (promotion structure,
//       scales, the Hopper tensor-core accumulator model): max |d - ref| /
//       max |ref| <= 8e-3 for bf16 output (two bf16 half-ulps plus FP32
//       rounding), 2e-3 for f32 output;
//   (2) the unquantized FP64 product of the float inputs, on a sample of
//       rows: DeepGEMM's similarity < 1e-3 for E4M3 operands, < 4e-3 when
//       an operand is E5M2 (its 2-bit mantissa alone costs 1.3e-3 per
//       operand on these inputs, measured on the CPU oracle and the H100).
// D is poisoned with NaN first, so an unwritten element fails.
//
//===----------------------------------------------------------------------===//

#include "test/runtime/GpuCheck.h"
#include "numerics/Formats.h"
#include "numerics/Metrics.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace fp8 {

GemmRecipe caseRecipe(Granularity a, Granularity b, int64_t promotion,
                      DType out, DType formatA, DType formatB) {
  GemmRecipe r;
  r.a.format = formatA;
  r.b.format = formatB;
  r.a.granularity = a;
  r.b.granularity = b;
  r.promotionInterval = promotionFromInt(promotion);
  r.out = out;
  return r;
}

std::string describe(const GpuCase &c) {
  std::ostringstream os;
  os << c.m << "x" << c.n << "x" << c.k << " " << toString(c.recipe.a.format)
     << "[" << toString(c.recipe.a.granularity) << "] x "
     << toString(c.recipe.b.format) << "[" << toString(c.recipe.b.granularity)
     << "] p" << promotionToInt(c.recipe.promotionInterval) << " -> "
     << toString(c.recipe.out) << (c.recipe.accumulate ? " +C" : "");
  if (c.tile)
    os << " tile " << toJSON(*c.tile);
  if (c.outerContiguousScales)
    os << " scales [K blocks][outer]";
  if (c.scaleBPitch)
    os << " B scale pitch " << c.scaleBPitch;
  return os.str();
}

namespace {
template <class T>
std::vector<T> transposed(const std::vector<T> &v, int64_t rows, int64_t cols) {
  std::vector<T> t(v.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      t[size_t(j * rows + i)] = v[size_t(i * cols + j)];
  return t;
}

/// The scales as the oracle stores them ([outer][K blocks]), or transposed.
Expected<DeviceBuffer> uploadScales(const numerics::QuantizedTensor &q,
                                    bool outerContiguous) {
  const int64_t rows = q.scaleRows, cols = q.scaleCols;
  if (q.granularity.scale == ScaleFormat::UE8M0)
    return DeviceBuffer::fromHost(
        outerContiguous ? transposed(q.scaleCodes, rows, cols) : q.scaleCodes);
  return DeviceBuffer::fromHost(
      outerContiguous ? transposed(q.scales, rows, cols) : q.scales);
}

/// A case's inputs on the host: the float operands, their quantization by
/// the oracle, and C (empty without accumulation).
struct HostInputs {
  std::vector<float> a, b;
  numerics::QuantizedTensor qa, qb;
  std::vector<float> c;
};

Expected<HostInputs> hostInputs(const GpuCase &c) {
  const GemmRecipe &r = c.recipe;
  const uint64_t seed = c.seed * 7919 + uint64_t(c.m * 31 + c.n * 17 + c.k);
  numerics::RandomSpec ra{numerics::Distribution::Normal, 1.0f, seed};
  numerics::RandomSpec rb{numerics::Distribution::Normal, 0.5f, seed + 1};
  HostInputs in;
  in.a = numerics::randomTensor(c.m * c.k, ra);
  in.b = numerics::randomTensor(c.n * c.k, rb);
  if (c.nonNegative) {
    for (float &v : in.a)
      v = std::fabs(v);
    for (float &v : in.b)
      v = std::fabs(v);
  }
  QuantRecipe qra{r.a.format, r.a.granularity};
  QuantRecipe qrb{r.b.format, r.b.granularity};
  auto qa = numerics::quantize(in.a.data(), c.m, c.k, qra);
  if (!qa)
    return qa.status().withContext("quantizing A");
  auto qb = numerics::quantize(in.b.data(), c.n, c.k, qrb);
  if (!qb)
    return qb.status().withContext("quantizing B");
  in.qa = std::move(*qa);
  in.qb = std::move(*qb);
  if (r.accumulate) {
    numerics::RandomSpec rc{numerics::Distribution::Normal, 4.0f, seed + 2};
    in.c = numerics::randomTensor(c.m * c.n, rc);
    if (r.out == DType::BF16)
      for (auto &v : in.c)
        v = numerics::bf16ToFloat(numerics::floatToBF16(v));
  }
  return in;
}

/// A row pitch for B's scales needs f32 scales stored [outer][K blocks]
/// and at least one row of them.
Status checkScaleBPitch(const GpuCase &c, const numerics::QuantizedTensor &qb) {
  if (c.scaleBPitch && (c.outerContiguousScales ||
                        c.recipe.b.granularity.scale == ScaleFormat::UE8M0 ||
                        c.scaleBPitch < qb.scaleCols))
    return errorf("expected f32 [outer][K blocks] B scales and a pitch of at "
                  "least ",
                  qb.scaleCols, " scales, found ", c.scaleBPitch);
  return Status::ok();
}

/// B's scales on the device: as uploadScales, or with a row pitch of
/// `c.scaleBPitch` scales (checkScaleBPitch).
Expected<DeviceBuffer> uploadScalesB(const GpuCase &c,
                                     const numerics::QuantizedTensor &qb) {
  if (!c.scaleBPitch)
    return uploadScales(qb, c.outerContiguousScales);
  std::vector<float> padded(size_t(qb.scaleRows * c.scaleBPitch), 0.0f);
  for (int64_t i = 0; i < qb.scaleRows; ++i)
    for (int64_t j = 0; j < qb.scaleCols; ++j)
      padded[size_t(i * c.scaleBPitch + j)] =
          qb.scales[size_t(i * qb.scaleCols + j)];
  return DeviceBuffer::fromHost(padded);
}

/// Runs the case's GEMM on the GPU and returns D as floats; `rep` describes
/// the launch, `amaxBits` receives the bits of D's amax when the recipe
/// writes it.
Expected<std::vector<float>> runKernel(const GpuCase &c, const HostInputs &in,
                                       GemmReport &rep, uint32_t &amaxBits) {
  const GemmRecipe &r = c.recipe;
  const numerics::QuantizedTensor &qa = in.qa, &qb = in.qb;
  const std::vector<float> &hostC = in.c;
  const int64_t ob = sizeOf(r.out);
  auto dA = DeviceBuffer::fromHost(qa.codes);
  auto dB = DeviceBuffer::fromHost(qb.codes);
  auto dSA = uploadScales(qa, c.outerContiguousScales);
  FP8_RETURN_IF_ERROR(checkScaleBPitch(c, qb));
  Expected<DeviceBuffer> dSB = uploadScalesB(c, qb);
  auto dD = DeviceBuffer::alloc(size_t(c.m * c.n * ob));
  for (auto *buf : {&dA, &dB, &dSA, &dSB, &dD})
    if (!*buf)
      return buf->status();
  FP8_RETURN_IF_ERROR(dD->fill(0xFF)); // NaN in bf16 and f32
  Expected<DeviceBuffer> dC = DeviceBuffer::alloc(1);
  if (r.accumulate) {
    if (r.out == DType::BF16) {
      std::vector<uint16_t> bits(hostC.size());
      for (size_t i = 0; i < bits.size(); ++i)
        bits[i] = numerics::floatToBF16(hostC[i]);
      dC = DeviceBuffer::fromHost(bits);
    } else {
      dC = DeviceBuffer::fromHost(hostC);
    }
    if (!dC)
      return dC.status();
  }
  GemmTensors t;
  t.a = dA->get();
  t.b = dB->get();
  t.scaleA = dSA->get();
  t.scaleB = dSB->get();
  if (c.outerContiguousScales) {
    t.scaleALdOuter = t.scaleBLdOuter = 1;
    t.scaleALdK = qa.scaleRows;
    t.scaleBLdK = qb.scaleRows;
  }
  if (c.scaleBPitch) {
    t.scaleBLdOuter = c.scaleBPitch;
    t.scaleBLdK = 1;
  }
  t.d = dD->get();
  t.c = r.accumulate ? dC->get() : nullptr;
  // D's amax starts as garbage (0x7F7F7F7F, about 3.4e38): the call zeroes it.
  Expected<DeviceBuffer> dAmax = DeviceBuffer::alloc(r.amaxOut ? 4 : 1);
  if (!dAmax)
    return dAmax.status();
  if (r.amaxOut) {
    FP8_RETURN_IF_ERROR(dAmax->fill(0x7F));
    t.amaxD = static_cast<float *>(dAmax->get());
  }
  GemmOptions opts;
  opts.tile = c.tile;
  FP8_RETURN_IF_ERROR(gemm(r, c.m, c.n, c.k, t, nullptr, opts, &rep));
  FP8_RETURN_IF_ERROR(waitStream(nullptr, 60.0, "kernel " + rep.kernel));
  std::vector<float> out(size_t(c.m * c.n));
  if (r.out == DType::BF16) {
    std::vector<uint16_t> bits(out.size());
    FP8_RETURN_IF_ERROR(dD->download(bits));
    for (size_t i = 0; i < bits.size(); ++i)
      out[i] = numerics::bf16ToFloat(bits[i]);
  } else {
    FP8_RETURN_IF_ERROR(dD->download(out));
  }
  if (r.amaxOut) {
    std::vector<uint32_t> amax(1);
    FP8_RETURN_IF_ERROR(dAmax->download(amax));
    amaxBits = amax[0];
  }
  return out;
}

/// The bits of the largest magnitude in `d` (D as stored, exactly), NaN
/// above infinity: what the epilogue's amax must be.
uint32_t amaxBitsOf(const std::vector<float> &d) {
  uint32_t m = 0;
  for (float v : d) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    m = std::max(m, b & 0x7FFFFFFFu);
  }
  return m;
}

/// max |out - want| / max |want| over the finite outputs (max |out - want|
/// when want is all zeros).
double relErr(const std::vector<float> &out, const std::vector<float> &want) {
  double maxRef = 0, maxErr = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    maxRef = std::max(maxRef, double(std::fabs(want[i])));
    if (std::isfinite(out[i]))
      maxErr = std::max(maxErr, double(std::fabs(out[i] - want[i])));
  }
  return maxRef > 0 ? maxErr / maxRef : maxErr;
}

/// (2) The similarity of D to the unquantized product, on the first and last
/// `rows` rows.
Expected<double> unquantizedSimilarity(const GpuCase &c, const HostInputs &in,
                                       const std::vector<float> &out,
                                       int64_t rows) {
  const GemmRecipe &r = c.recipe;
  const std::vector<float> &a = in.a, &b = in.b, &hostC = in.c;
  std::vector<float> sampleA, sampleOut;
  std::vector<int64_t> sampleRows;
  for (int64_t i = 0; i < rows; ++i)
    sampleRows.push_back(i < rows / 2 ? i : c.m - (rows - i));
  for (int64_t row : sampleRows) {
    sampleA.insert(sampleA.end(), a.begin() + row * c.k,
                   a.begin() + (row + 1) * c.k);
    sampleOut.insert(sampleOut.end(), out.begin() + row * c.n,
                     out.begin() + (row + 1) * c.n);
  }
  std::vector<float> sampleC;
  if (r.accumulate)
    for (int64_t row : sampleRows)
      sampleC.insert(sampleC.end(), hostC.begin() + row * c.n,
                     hostC.begin() + (row + 1) * c.n);
  auto exact = numerics::referenceGemmUnquantized(
      sampleA.data(), Layout::KMajor, b.data(), Layout::KMajor, rows, c.n, c.k,
      r.accumulate ? sampleC.data() : nullptr);
  if (!exact)
    return exact.status().withContext("unquantized reference");
  return numerics::similarity(sampleOut.data(), exact->data(), rows * c.n);
}
} // namespace

Expected<GpuCaseResult> runGpuCase(const GpuCase &c) {
  const GemmRecipe &r = c.recipe;
  auto in = hostInputs(c);
  if (!in)
    return in.status();
  const numerics::QuantizedTensor &qa = in->qa, &qb = in->qb;
  const std::vector<float> &hostC = in->c;
  GemmReport rep;
  uint32_t amaxBits = 0;
  auto run = runKernel(c, *in, rep, amaxBits);
  if (!run)
    return run.status();
  const std::vector<float> &out = *run;

  // (1) The oracle's emulation of the kernel's computation.
  numerics::ReferenceGemmOptions ro;
  ro.promotionInterval = r.promotionInterval;
  ro.accumulator = numerics::kHopperFP8Accumulator;
  auto ref = numerics::referenceGemm(qa, Layout::KMajor, qb, Layout::KMajor,
                                     r.accumulate ? hostC.data() : nullptr, ro);
  if (!ref)
    return ref.status().withContext("reference GEMM");
  numerics::ErrorMetrics e =
      numerics::compare(out.data(), ref->data(), int64_t(out.size()));
  double rivalErr = 0;
  if (c.rivalInterval >= 0) {
    numerics::ReferenceGemmOptions rr = ro;
    rr.promotionInterval = promotionFromInt(c.rivalInterval);
    auto rival =
        numerics::referenceGemm(qa, Layout::KMajor, qb, Layout::KMajor,
                                r.accumulate ? hostC.data() : nullptr, rr);
    if (!rival)
      return rival.status().withContext("reference GEMM at the rival interval");
    rivalErr = relErr(out, *rival);
  }

  // (2) The unquantized product, on the first and last rows (at most 64).
  const int64_t rows = std::min<int64_t>(c.m, 64);
  auto similarity = unquantizedSimilarity(c, *in, out, rows);
  if (!similarity)
    return similarity.status();

  GpuCaseResult res;
  res.kernel = rep.kernel;
  res.scaleATma = rep.scaleATma;
  res.scaleBTma = rep.scaleBTma;
  res.tileSource = rep.tileSource;
  res.rowsChecked = c.m;
  res.relErrVsEmulated = relErr(out, *ref);
  res.relErrVsRival = rivalErr;
  res.similarity = *similarity;
  const double tol = r.out == DType::BF16 ? 8e-3 : 2e-3;
  const bool e5m2 = r.a.format == DType::E5M2 || r.b.format == DType::E5M2;
  const double simTol = e5m2 ? 4e-3 : 1e-3;
  // D's amax, bit for bit (both NaN counts as equal: a NaN's payload is
  // not specified).
  const uint32_t wantAmax = r.amaxOut ? amaxBitsOf(out) : 0;
  const bool amaxOk = !r.amaxOut || amaxBits == wantAmax ||
                      (amaxBits > 0x7F800000u && amaxBits <= 0x7FFFFFFFu &&
                       wantAmax > 0x7F800000u);
  res.passed = e.nonFinite == 0 && res.relErrVsEmulated <= tol &&
               res.similarity < simTol && amaxOk;
  std::ostringstream os;
  os << "kernel " << rep.kernel << " (grid " << rep.grid
     << (rep.scaleATma ? ", A scales by TMA" : "")
     << (rep.scaleBTma ? ", B scales by TMA" : "") << "): "
     << "max |d - emulated| / max |emulated| = " << res.relErrVsEmulated
     << " (tol " << tol << ")";
  if (c.rivalInterval >= 0)
    os << ", against the emulation at interval " << c.rivalInterval << " "
       << res.relErrVsRival;
  os << ", similarity to the unquantized product " << res.similarity << " (tol "
     << simTol << ", " << rows << " rows)";
  if (e.nonFinite)
    os << ", " << e.nonFinite << " non-finite outputs";
  if (r.amaxOut) {
    float got, want;
    std::memcpy(&got, &amaxBits, 4);
    std::memcpy(&want, &wantAmax, 4);
    os << ", amax " << got;
    if (!amaxOk)
      os << " (D's is " << want << ")";
  }
  res.summary = os.str();
  return res;
}

GpuCaseResult expectCase(const GpuCase &c) {
  auto r = runGpuCase(c);
  EXPECT_TRUE(r.isOk()) << describe(c) << ": " << r.message();
  if (!r)
    return {};
  EXPECT_TRUE(r->passed) << describe(c) << ": " << r->summary;
  std::printf("[case] %s %s: %s\n", r->passed ? "PASS" : "FAIL",
              describe(c).c_str(), r->summary.c_str());
  return *r;
}

} // namespace fp8
