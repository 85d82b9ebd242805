//===- GroupedGemm.cpp - The CPU oracle of grouped GEMMs and the MoE permute =//

#include "numerics/GroupedGemm.h"

#include <algorithm>

namespace fp8::numerics {

Expected<QuantizedTensor> sliceRows(const QuantizedTensor &q, int64_t begin,
                                    int64_t end) {
  FP8_RETURN_IF_ERROR(validate(q, "the sliced tensor"));
  const int64_t rb = q.granularity.rows;
  if (begin < 0 || end < begin || end > q.rows)
    return errorf("expected rows [begin, end) within [0, ", q.rows,
                  "], found [", begin, ", ", end, ")");
  if (rb != 1 && rb != Granularity::kWhole && begin % rb != 0)
    return errorf("expected a slice of a tensor whose scales span ", rb,
                  " rows to start at a multiple of ", rb, ", found row ",
                  begin);
  QuantizedTensor s;
  s.format = q.format;
  s.rows = end - begin;
  s.cols = q.cols;
  s.granularity = q.granularity;
  s.codes.assign(q.codes.begin() + begin * q.cols,
                 q.codes.begin() + end * q.cols);
  s.scaleRows = q.granularity.scaleRows(s.rows);
  s.scaleCols = q.scaleCols;
  // The scale row of the first row (the one row of a whole-tensor scale).
  const int64_t first = rb == Granularity::kWhole ? 0 : begin / rb;
  const int64_t n = s.scaleRows * s.scaleCols;
  s.scales.assign(q.scales.begin() + first * q.scaleCols,
                  q.scales.begin() + first * q.scaleCols + n);
  if (!q.scaleCodes.empty())
    s.scaleCodes.assign(q.scaleCodes.begin() + first * q.scaleCols,
                        q.scaleCodes.begin() + first * q.scaleCols + n);
  return s;
}

Expected<QuantizedTensor> sliceCols(const QuantizedTensor &q, int64_t begin,
                                    int64_t end) {
  FP8_RETURN_IF_ERROR(validate(q, "the sliced tensor"));
  const int64_t cb = q.granularity.cols;
  if (begin < 0 || end < begin || end > q.cols)
    return errorf("expected columns [begin, end) within [0, ", q.cols,
                  "], found [", begin, ", ", end, ")");
  if (cb != Granularity::kWhole && begin % cb != 0)
    return errorf("expected a slice of a tensor whose scales span ", cb,
                  " columns to start at a multiple of ", cb, ", found column ",
                  begin);
  QuantizedTensor s;
  s.format = q.format;
  s.rows = q.rows;
  s.cols = end - begin;
  s.granularity = q.granularity;
  s.codes.resize(size_t(s.rows * s.cols));
  for (int64_t r = 0; r < s.rows; ++r)
    std::copy(q.codes.begin() + r * q.cols + begin,
              q.codes.begin() + r * q.cols + end, s.codes.begin() + r * s.cols);
  s.scaleRows = q.scaleRows;
  s.scaleCols = q.granularity.scaleCols(s.cols);
  const int64_t first = cb == Granularity::kWhole ? 0 : begin / cb;
  for (int64_t r = 0; r < s.scaleRows; ++r)
    for (int64_t j = 0; j < s.scaleCols; ++j) {
      const size_t at = size_t(r * q.scaleCols + first + j);
      s.scales.push_back(q.scales[at]);
      if (!q.scaleCodes.empty())
        s.scaleCodes.push_back(q.scaleCodes[at]);
    }
  return s;
}

Status checkGroupValues(const GroupedRows &rows, int64_t end) {
  const bool masked = rows.kind == GemmKind::GroupedMasked;
  const bool alongK = rows.kind == GemmKind::GroupedK;
  for (size_t i = 0; i < rows.groups.size(); ++i) {
    const int64_t v = rows.groups[i];
    const int64_t lo = !masked && i > 0 ? rows.groups[i - 1] : 0;
    if (masked ? (v < 0 || v > end)
               : ((i == 0 && v != 0) || v < lo || v > end ||
                  (alongK && v % 128 != 0)))
      return errorf("expected ", masked ? "valid_rows" : "offsets", "[", i,
                    "] in [", lo, ", ", end, "]",
                    alongK   ? ", a multiple of 128 (non-decreasing from 0 to "
                               "at most K; a group along K starts at a scale "
                               "block)"
                    : masked ? " (the rows of a group's slab)"
                             : " (non-decreasing from 0 to at most M)",
                    ", found ", v);
  }
  return Status::ok();
}

namespace {

/// The K-grouped form: D_g = A[:, K_g] * B[:, K_g]^T (+ C_g).
Expected<std::vector<float>> groupedAlongK(const GroupedRows &rows,
                                           const QuantizedTensor &a,
                                           const QuantizedTensor &b,
                                           const ReferenceGemmOptions &options,
                                           const float *c) {
  const int64_t g = int64_t(rows.groups.size()) - 1;
  if (g < 1)
    return errorf("expected at least 2 offsets along K, found ",
                  rows.groups.size());
  if (a.cols != b.cols)
    return errorf("expected A and B to share K, found ", a.cols, " and ",
                  b.cols);
  const int64_t m = a.rows, n = b.rows;
  FP8_RETURN_IF_ERROR(checkGroupValues(rows, a.cols));
  std::vector<float> d(size_t(g * m * n), 0.0f);
  for (int64_t i = 0; i < g; ++i) {
    const int64_t k0 = rows.groups[size_t(i)], k1 = rows.groups[size_t(i + 1)];
    const float *ci = c ? c + i * m * n : nullptr;
    float *di = d.data() + i * m * n;
    if (k0 == k1) { // an empty group: zeros, or C
      if (ci)
        std::copy(ci, ci + m * n, di);
      continue;
    }
    auto ai = sliceCols(a, k0, k1);
    auto bi = sliceCols(b, k0, k1);
    if (!ai || !bi)
      return (!ai ? ai.status() : bi.status())
          .withContext("group " + std::to_string(i));
    auto r =
        referenceGemm(*ai, Layout::KMajor, *bi, Layout::KMajor, ci, options);
    if (!r)
      return r.status().withContext("group " + std::to_string(i));
    std::copy(r->begin(), r->end(), di);
  }
  return d;
}

} // namespace

Expected<std::vector<float>>
groupedReferenceGemm(const GroupedRows &rows,
                     const std::vector<QuantizedTensor> &a,
                     const std::vector<QuantizedTensor> &b, float fill,
                     const ReferenceGemmOptions &options, const float *c) {
  if (rows.kind == GemmKind::GroupedK) {
    if (a.size() != 1 || b.size() != 1)
      return errorf("expected one A and one B along K, found ", a.size(),
                    " and ", b.size());
    return groupedAlongK(rows, a[0], b[0], options, c);
  }
  const bool contiguous = rows.kind == GemmKind::GroupedContiguous;
  if (rows.kind == GemmKind::Dense)
    return errorf("expected a grouped form (contiguous or masked), found a "
                  "dense GEMM");
  const int64_t g = int64_t(b.size());
  if (g < 1)
    return errorf("expected at least one group's B, found none");
  const int64_t wantGroups = contiguous ? g + 1 : g;
  if (int64_t(rows.groups.size()) != wantGroups)
    return errorf("expected ", wantGroups, " group values for ", g,
                  " groups, found ", rows.groups.size());
  if (int64_t(a.size()) != (contiguous ? 1 : g))
    return errorf("expected ", contiguous ? 1 : g,
                  " A tensors (contiguous: one; masked: one per group), "
                  "found ",
                  a.size());
  const int64_t n = b[0].rows;
  const int64_t slab = a[0].rows; // M (contiguous) or max_m (masked)
  for (const QuantizedTensor &x : a)
    if (x.rows != slab)
      return errorf("expected every group's A to have ", slab, " rows, found ",
                    x.rows);
  for (const QuantizedTensor &x : b)
    if (x.rows != n)
      return errorf("expected every group's B to have ", n, " rows, found ",
                    x.rows);
  FP8_RETURN_IF_ERROR(checkGroupValues(rows, slab));
  const int64_t outRows = contiguous ? slab : g * slab;
  std::vector<float> d(size_t(outRows * n), fill);
  for (int64_t i = 0; i < g; ++i) {
    const int64_t begin = contiguous ? rows.groups[size_t(i)] : 0;
    const int64_t end =
        contiguous ? rows.groups[size_t(i + 1)] : rows.groups[size_t(i)];
    if (end == begin)
      continue;
    auto ai = sliceRows(a[contiguous ? 0 : size_t(i)], begin, end);
    if (!ai)
      return ai.status().withContext("group " + std::to_string(i));
    const int64_t row0 = contiguous ? begin : i * slab;
    auto di = referenceGemm(*ai, Layout::KMajor, b[size_t(i)], Layout::KMajor,
                            c ? c + row0 * n : nullptr, options);
    if (!di)
      return di.status().withContext("group " + std::to_string(i));
    std::copy(di->begin(), di->end(), d.begin() + row0 * n);
  }
  return d;
}

Expected<MoePermutation> moePermute(const std::vector<int32_t> &ids,
                                    int64_t tokens, int64_t topK,
                                    int64_t experts, int64_t padTo) {
  if (tokens < 0 || topK < 1 || experts < 1 || padTo < 1)
    return errorf("expected tokens >= 0, top-k >= 1, experts >= 1 and a "
                  "padding multiple >= 1, found ",
                  tokens, ", ", topK, ", ", experts, ", ", padTo);
  if (int64_t(ids.size()) != tokens * topK)
    return errorf("expected ", tokens * topK, " routing ids (", tokens,
                  " tokens x top-", topK, "), found ", ids.size());
  std::vector<int64_t> count(size_t(experts), 0);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < topK; ++j) {
      const int32_t e = ids[size_t(t * topK + j)];
      if (e < 0 || e >= experts)
        return errorf("expected routing ids in [0, ", experts, "), found ", e,
                      " for token ", t);
      for (int64_t i = 0; i < j; ++i)
        if (ids[size_t(t * topK + i)] == e)
          return errorf("expected distinct experts per token, found expert ", e,
                        " twice for token ", t);
      ++count[size_t(e)];
    }
  MoePermutation p;
  p.offsets.assign(size_t(experts + 1), 0);
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t padded = (count[size_t(e)] + padTo - 1) / padTo * padTo;
    p.offsets[size_t(e + 1)] = int32_t(p.offsets[size_t(e)] + padded);
  }
  p.source.assign(size_t(p.offsets.back()), -1);
  p.destination.assign(size_t(tokens * topK), -1);
  std::vector<int64_t> next(p.offsets.begin(), p.offsets.end() - 1);
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < topK; ++j)
        if (ids[size_t(t * topK + j)] == e) {
          const int64_t row = next[size_t(e)]++;
          p.source[size_t(row)] = int32_t(t);
          p.destination[size_t(t * topK + j)] = int32_t(row);
        }
  return p;
}

std::vector<float> gatherRows(const std::vector<float> &x, int64_t hidden,
                              const MoePermutation &p) {
  std::vector<float> out(p.source.size() * size_t(hidden), 0.0f);
  for (size_t r = 0; r < p.source.size(); ++r)
    if (p.source[r] >= 0)
      std::copy(x.begin() + p.source[r] * hidden,
                x.begin() + (p.source[r] + 1) * hidden,
                out.begin() + int64_t(r) * hidden);
  return out;
}

std::vector<float> moeUnpermute(const std::vector<float> &y, int64_t hidden,
                                const MoePermutation &p,
                                const std::vector<float> &weights,
                                int64_t tokens, int64_t topK) {
  std::vector<float> out(size_t(tokens * hidden), 0.0f);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < topK; ++j) {
      const float w = weights[size_t(t * topK + j)];
      const int64_t row = p.destination[size_t(t * topK + j)];
      for (int64_t h = 0; h < hidden; ++h)
        out[size_t(t * hidden + h)] += w * y[size_t(row * hidden + h)];
    }
  return out;
}

} // namespace fp8::numerics
