//===- Quantize.cpp - FP8 quantization at every granularity ---------------===//
//
// Three passes over the tensor, each split over rows with parallelFor:
//   1. the amax of every block (and the first non-finite input),
//   2. one scale per block (current or delayed scaling),
//   3. the codes, and the elementwise statistics when asked for;
// then, for the statistics only, range collapse block by block. Partial
// results are kept per chunk and combined in chunk order, so every number is
// independent of the thread count.
//
//===----------------------------------------------------------------------===//

#include "numerics/Quantize.h"

#include "core/RecipeRules.h"
#include "numerics/Formats.h"
#include "numerics/Parallel.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace fp8::numerics {

namespace {

constexpr float kMinF32Scale = 0x1p-126f;
constexpr float kMaxScale = 0x1p127f;

uint32_t floatBits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

bool isFiniteBits(uint32_t u) { return (u & 0x7F800000u) != 0x7F800000u; }

/// The extent of a block along a dimension of `size` elements: a block
/// larger than the dimension covers it whole, so it is cut to the size (a
/// granularity of 2^31 rows on a 4096-row tensor is one block of 4096 rows,
/// and blockAmax splits it by the rows that exist).
int64_t blockExtent(int64_t block, int64_t size) {
  return std::clamp<int64_t>(Granularity::extent(block, size), 1,
                             std::max<int64_t>(size, 1));
}

/// The block structure of a [rows, cols] tensor under a granularity.
struct Blocks {
  int64_t rows, cols;
  int64_t br, bc; // block extent (>= 1)
  int64_t sr, sc; // scale grid

  Blocks(int64_t rows, int64_t cols, const Granularity &g)
      : rows(rows), cols(cols), br(blockExtent(g.rows, rows)),
        bc(blockExtent(g.cols, cols)), sr(g.scaleRows(rows)),
        sc(g.scaleCols(cols)) {}
  int64_t count() const { return sr * sc; }
};

/// Pass 1: amax per block over finite inputs, a flag per block holding a
/// non-finite input, and the flat index of the first non-finite input (-1).
struct AmaxResult {
  std::vector<float> amax;
  std::vector<uint8_t> nonFinite;
  int64_t firstNonFinite = -1;
};

AmaxResult blockAmax(const float *x, const Blocks &b) {
  AmaxResult res;
  res.amax.assign(size_t(b.count()), 0.0f);
  res.nonFinite.assign(size_t(b.count()), 0);
  if (b.rows == 0 || b.cols == 0)
    return res;
  // Tall blocks (per-tensor, per-column, few block rows) are split into
  // `splits` row pieces reduced afterwards; short ones are whole tasks.
  int64_t target = std::max<int64_t>(1, 8 * numThreads());
  int64_t rowsPerTask = std::max<int64_t>(1, (b.rows + target - 1) / target);
  int64_t splits =
      b.br > rowsPerTask ? (b.br + rowsPerTask - 1) / rowsPerTask : int64_t(1);
  int64_t tasks = b.sr * splits;
  std::vector<float> partAmax(size_t(tasks * b.sc), 0.0f);
  std::vector<uint8_t> partBad(size_t(tasks * b.sc), 0);
  std::vector<int64_t> firstBad(size_t(tasks), -1);
  int64_t grain = std::max<int64_t>(1, tasks / target);
  parallelFor(tasks, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t blockRow = t / splits, piece = t % splits;
      int64_t r0 = blockRow * b.br;
      int64_t height = std::min(b.br, b.rows - r0);
      int64_t pieceRows = (height + splits - 1) / splits;
      int64_t begin = r0 + std::min(height, piece * pieceRows);
      int64_t end = r0 + std::min(height, (piece + 1) * pieceRows);
      float *amax = &partAmax[size_t(t * b.sc)];
      uint8_t *bad = &partBad[size_t(t * b.sc)];
      for (int64_t r = begin; r < end; ++r) {
        const float *row = x + r * b.cols;
        for (int64_t bcIdx = 0; bcIdx < b.sc; ++bcIdx) {
          int64_t c0 = bcIdx * b.bc, c1 = std::min(b.cols, c0 + b.bc);
          float m = amax[bcIdx];
          bool anyBad = false;
          for (int64_t c = c0; c < c1; ++c) {
            float v = std::fabs(row[c]);
            anyBad |= !isFiniteBits(floatBits(v));
            m = v > m ? v : m; // NaN never wins
          }
          amax[bcIdx] = m;
          if (anyBad) {
            bad[bcIdx] = 1;
            if (firstBad[size_t(t)] < 0)
              for (int64_t c = c0; c < c1; ++c)
                if (!std::isfinite(row[c])) {
                  firstBad[size_t(t)] = r * b.cols + c;
                  break;
                }
          }
        }
      }
    }
  });
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t blockRow = t / splits;
    for (int64_t c = 0; c < b.sc; ++c) {
      size_t dst = size_t(blockRow * b.sc + c), src = size_t(t * b.sc + c);
      res.amax[dst] = std::max(res.amax[dst], partAmax[src]);
      res.nonFinite[dst] |= partBad[src];
    }
    int64_t f = firstBad[size_t(t)];
    if (f >= 0 && (res.firstNonFinite < 0 || f < res.firstNonFinite))
      res.firstNonFinite = f;
  }
  return res;
}

/// Elementwise statistics of one chunk of rows (pass 3).
struct ChunkStats {
  int64_t nonFinite = 0, nonzero = 0, underflow = 0, overflow = 0;
  double maxAbs = 0, maxRel = 0, sumRel = 0, sumSq = 0;
};

std::string describeNonFinite(const float *x, int64_t index, int64_t cols) {
  float v = x[index];
  const char *what = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  return errorf("expected finite inputs, found ", what, " at (", index / cols,
                ", ", index % cols, ") (flat index ", index, ")")
      .message();
}

Status checkRecipe(const QuantRecipe &recipe, const AmaxHistory *history) {
  if (!isFP8(recipe.format))
    return errorf("expected an FP8 format (e4m3fn or e5m2) to quantize to, "
                  "found ",
                  toString(recipe.format));
  FP8_RETURN_IF_ERROR(
      checkGranularity(recipe.granularity, "the tensor's granularity"));
  FP8_RETURN_IF_ERROR(checkScalingMode(recipe.mode, recipe.granularity));
  if (recipe.mode == ScalingMode::Current) {
    if (history)
      return errorf("expected no amax history with current scaling, found "
                    "one (pass nullptr or use delayed scaling)");
    return Status::ok();
  }
  FP8_RETURN_IF_ERROR(checkDelayedScaling(recipe.delayed));
  if (!history)
    return errorf("expected an amax history for delayed scaling, found none");
  if (!sameParams(history->params(), recipe.delayed))
    return errorf("expected the amax history to be built for the recipe's "
                  "delayed scaling (length ",
                  recipe.delayed.historyLength, ", interval ",
                  recipe.delayed.updateInterval, ", margin ",
                  recipe.delayed.margin, ", ", toString(recipe.delayed.algo),
                  "), found length ", history->params().historyLength,
                  ", interval ", history->params().updateInterval, ", margin ",
                  history->params().margin, ", ",
                  toString(history->params().algo));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// QuantizedTensor
//===----------------------------------------------------------------------===//

int64_t QuantizedTensor::blockRows() const {
  return blockExtent(granularity.rows, rows);
}

int64_t QuantizedTensor::blockCols() const {
  return blockExtent(granularity.cols, cols);
}

float QuantizedTensor::scaleAt(int64_t r, int64_t c) const {
  return scales[size_t((r / blockRows()) * scaleCols + c / blockCols())];
}

float QuantizedTensor::valueAt(int64_t r, int64_t c) const {
  return fp8ToFloat(codes[size_t(r * cols + c)], format) * scaleAt(r, c);
}

//===----------------------------------------------------------------------===//
// Scales
//===----------------------------------------------------------------------===//

float scaleFromAmax(float amax, DType format, ScaleFormat scaleFormat,
                    int64_t margin, uint8_t *ue8m0Code) {
  auto setCode = [&](uint8_t c) {
    if (ue8m0Code)
      *ue8m0Code = c;
  };
  if (!std::isfinite(amax)) {
    setCode(0xFF);
    return std::numeric_limits<float>::quiet_NaN();
  }
  if (amax == 0.0f) {
    setCode(127);
    return 1.0f;
  }
  float fmax = fp8Format(format).maxFinite;
  float s =
      std::ldexp(std::fabs(amax), int(std::clamp<int64_t>(margin, -300, 300))) /
      fmax;
  switch (scaleFormat) {
  case ScaleFormat::F32:
    setCode(0); // unused
    return std::clamp(s, kMinF32Scale, kMaxScale);
  case ScaleFormat::F32Pow2: {
    uint8_t c = floatToUE8M0(s, PowerRounding::Up, Saturation::SatFinite);
    c = std::max<uint8_t>(c, 1); // 2^-126: keep f32 scales normal
    setCode(c);
    return ue8m0ToFloat(c);
  }
  case ScaleFormat::UE8M0: {
    uint8_t c = floatToUE8M0(s, PowerRounding::Up, Saturation::SatFinite);
    setCode(c);
    return ue8m0ToFloat(c);
  }
  }
  return s;
}

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

namespace {
/// What pass 2 saw: whether a scale came from the amax history, and the
/// amax behind the one scale of a single-block tensor.
struct ScaleResult {
  bool usedHistory = false;
  double scaleAmax = 0;
};

/// Pass 2: one scale per block of `q` (and its UE8M0 code), from the
/// block's amax, the given one (QuantizeOptions::givenAmax: one block) or,
/// with delayed scaling, the history's prediction; the history then
/// records this step.
ScaleResult blockScales(const AmaxResult &amax, const Blocks &b,
                        const QuantRecipe &recipe, AmaxHistory *history,
                        const std::optional<float> &given, QuantizedTensor &q) {
  const Granularity &g = recipe.granularity;
  ScaleResult res;
  for (int64_t i = 0; i < b.count(); ++i) {
    float a = given ? *given
              : amax.nonFinite[size_t(i)]
                  ? std::numeric_limits<float>::infinity()
                  : amax.amax[size_t(i)];
    int64_t margin = 0;
    if (recipe.mode == ScalingMode::Delayed && !amax.nonFinite[size_t(i)]) {
      if (std::optional<float> predicted = history->predict()) {
        a = *predicted;
        margin = recipe.delayed.margin;
        res.usedHistory = true;
      }
    }
    if (b.count() == 1)
      res.scaleAmax = a;
    uint8_t code = 0;
    q.scales[size_t(i)] = scaleFromAmax(a, q.format, g.scale, margin, &code);
    if (g.scale == ScaleFormat::UE8M0)
      q.scaleCodes[size_t(i)] = code;
  }
  if (recipe.mode == ScalingMode::Delayed) {
    if (history->measuresNextStep() && amax.firstNonFinite < 0)
      history->record(amax.amax.empty() ? 0.0f : amax.amax[0]);
    history->setRefit(!res.usedHistory);
    history->advance();
  }
  return res;
}

/// Pass 3: the codes of `q`, and with `wantStats` the elementwise
/// statistics of each chunk of rows.
std::vector<ChunkStats> encodeCodes(const float *x, int64_t rows, int64_t cols,
                                    const Blocks &b, bool wantStats,
                                    QuantizedTensor &q) {
  const FP8Format &fmt = fp8Format(q.format);
  const float *table = fp8DecodeTable(q.format);
  int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
  int64_t chunks = rows == 0 ? 0 : (rows + grain - 1) / grain;
  std::vector<ChunkStats> part(static_cast<size_t>(chunks));
  parallelFor(rows, grain, [&](int64_t r0, int64_t r1) {
    ChunkStats &cs = part[size_t(r0 / grain)];
    for (int64_t r = r0; r < r1; ++r) {
      const float *row = x + r * cols;
      // data() + offset, not &v[offset]: with cols == 0 the codes are empty
      // and indexing them is undefined.
      uint8_t *out = q.codes.data() + r * cols;
      const float *rowScales = q.scales.data() + (r / b.br) * b.sc;
      for (int64_t c = 0; c < cols; ++c) {
        float s = rowScales[c / b.bc];
        float xv = row[c];
        float v = xv / s;
        uint8_t code = floatToFP8(v, q.format, Saturation::NoSat);
        bool finiteIn = std::isfinite(xv);
        if (!std::isnan(v) && (isFP8NaN(code, q.format) ||
                               (fmt.hasInf && (code & 0x7F) == 0x7C))) {
          code = uint8_t((code & 0x80) | fmt.maxCode); // saturate
          ++cs.overflow;
        }
        out[c] = code;
        if (!wantStats)
          continue;
        if (!finiteIn) {
          ++cs.nonFinite;
          continue;
        }
        float back = table[code] * s;
        double err = std::fabs(double(xv) - double(back));
        if (std::isnan(back)) // finite input in a NaN-scaled block
          continue;
        cs.maxAbs = std::max(cs.maxAbs, err);
        cs.sumSq += err * err;
        if (xv != 0.0f) {
          ++cs.nonzero;
          double rel = err / std::fabs(double(xv));
          cs.maxRel = std::max(cs.maxRel, rel);
          cs.sumRel += rel;
          if ((code & 0x7F) == 0)
            ++cs.underflow;
        }
      }
    }
  });
  return part;
}

/// Range collapse, block by block: distinct surviving nonzero inputs vs the
/// distinct codes they became.
void rangeCollapse(const float *x, int64_t rows, int64_t cols, const Blocks &b,
                   const AmaxResult &amax, const QuantizedTensor &q,
                   QuantStats &st) {
  std::vector<int64_t> distinctIn(size_t(b.count()), 0);
  std::vector<int64_t> distinctQ(size_t(b.count()), 0);
  parallelFor(b.count(), 1, [&](int64_t i0, int64_t i1) {
    std::vector<uint32_t> keys;
    for (int64_t i = i0; i < i1; ++i) {
      if (amax.nonFinite[size_t(i)])
        continue;
      int64_t r0 = (i / b.sc) * b.br, c0 = (i % b.sc) * b.bc;
      int64_t r1 = std::min(rows, r0 + b.br), c1 = std::min(cols, c0 + b.bc);
      keys.clear();
      std::bitset<256> seen;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) {
          float xv = x[r * cols + c];
          uint8_t code = q.codes[size_t(r * cols + c)];
          if (xv == 0.0f || (code & 0x7F) == 0)
            continue;
          keys.push_back(floatBits(xv));
          seen.set(code);
        }
      distinctQ[size_t(i)] = int64_t(seen.count());
      distinctIn[size_t(i)] = countDistinct(keys);
    }
  });
  for (int64_t i = 0; i < b.count(); ++i) {
    st.distinctInputs += distinctIn[size_t(i)];
    st.distinctQuantized += distinctQ[size_t(i)];
  }
}

/// The statistics of a quantization: the chunks' totals, the blocks'
/// amaxes and the range collapse.
QuantStats summarize(const float *x, int64_t rows, int64_t cols,
                     const Blocks &b, const AmaxResult &amax,
                     const ScaleResult &scales,
                     const std::vector<ChunkStats> &part,
                     const QuantizedTensor &q) {
  QuantStats st;
  st.elements = rows * cols;
  st.blocks = b.count();
  st.usedHistory = scales.usedHistory;
  st.scaleAmax = b.count() == 1 ? scales.scaleAmax : 0.0;
  double sumRel = 0, sumSq = 0;
  for (const ChunkStats &cs : part) {
    st.nonFinite += cs.nonFinite;
    st.nonzero += cs.nonzero;
    st.underflow += cs.underflow;
    st.overflow += cs.overflow;
    st.maxAbsError = std::max(st.maxAbsError, cs.maxAbs);
    st.maxRelError = std::max(st.maxRelError, cs.maxRel);
    sumRel += cs.sumRel;
    sumSq += cs.sumSq;
  }
  for (int64_t i = 0; i < b.count(); ++i) {
    st.amax = std::max(st.amax, double(amax.amax[size_t(i)]));
    st.zeroBlocks += amax.amax[size_t(i)] == 0.0f && !amax.nonFinite[size_t(i)];
  }
  rangeCollapse(x, rows, cols, b, amax, q, st);
  st.finish(sumRel, sumSq);
  return st;
}
} // namespace

Expected<QuantizedTensor> quantize(const float *x, int64_t rows, int64_t cols,
                                   const QuantRecipe &recipe, QuantStats *stats,
                                   AmaxHistory *history,
                                   const QuantizeOptions &options) {
  if (rows < 0 || cols < 0)
    return errorf("expected a non-negative shape, found [", rows, ", ", cols,
                  "]");
  if (!x && rows * cols > 0)
    return errorf("expected input data for a [", rows, ", ", cols,
                  "] tensor, found a null pointer");
  FP8_RETURN_IF_ERROR(checkRecipe(recipe, history));
  if (options.givenAmax && !takesGivenAmax(recipe))
    return errorf("expected per-tensor current scaling with a given amax, "
                  "found ",
                  toString(recipe.granularity),
                  recipe.mode == ScalingMode::Delayed ? " delayed" : "");

  const Granularity &g = recipe.granularity;
  Blocks b(rows, cols, g);
  AmaxResult amax = blockAmax(x, b);
  if (amax.firstNonFinite >= 0 && options.nonFinite == NonFinitePolicy::Error)
    return Status::error(describeNonFinite(x, amax.firstNonFinite, cols));

  QuantizedTensor q;
  q.format = recipe.format;
  q.rows = rows;
  q.cols = cols;
  q.granularity = g;
  q.scaleRows = b.sr;
  q.scaleCols = b.sc;
  q.scales.resize(size_t(b.count()));
  q.codes.resize(size_t(rows * cols));
  if (g.scale == ScaleFormat::UE8M0)
    q.scaleCodes.resize(size_t(b.count()));

  const ScaleResult scales =
      blockScales(amax, b, recipe, history, options.givenAmax, q);
  const bool wantStats = stats != nullptr;
  const std::vector<ChunkStats> part =
      encodeCodes(x, rows, cols, b, wantStats, q);
  if (!wantStats)
    return q;
  *stats = summarize(x, rows, cols, b, amax, scales, part, q);
  return q;
}

Expected<QuantizedTensor> quantizeBF16(const uint16_t *x, int64_t rows,
                                       int64_t cols, const QuantRecipe &recipe,
                                       QuantStats *stats, AmaxHistory *history,
                                       const QuantizeOptions &options) {
  if (rows < 0 || cols < 0)
    return errorf("expected a non-negative shape, found [", rows, ", ", cols,
                  "]");
  if (!x && rows * cols > 0)
    return errorf("expected input data for a [", rows, ", ", cols,
                  "] tensor, found a null pointer");
  std::vector<float> wide(size_t(rows * cols));
  parallelFor(rows * cols, 1 << 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      wide[size_t(i)] = bf16ToFloat(x[i]);
  });
  return quantize(wide.data(), rows, cols, recipe, stats, history, options);
}

//===----------------------------------------------------------------------===//
// dequantize, transpose, validate
//===----------------------------------------------------------------------===//

void dequantize(const QuantizedTensor &q, float *out) {
  const float *table = fp8DecodeTable(q.format);
  int64_t br = q.blockRows(), bc = q.blockCols();
  int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(q.cols, 1));
  parallelFor(q.rows, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float *rowScales = &q.scales[size_t((r / br) * q.scaleCols)];
      const uint8_t *codes = &q.codes[size_t(r * q.cols)];
      float *dst = out + r * q.cols;
      for (int64_t c = 0; c < q.cols; ++c)
        dst[c] = table[codes[c]] * rowScales[c / bc];
    }
  });
}

std::vector<float> dequantize(const QuantizedTensor &q) {
  std::vector<float> out(size_t(q.rows * q.cols));
  dequantize(q, out.data());
  return out;
}

QuantizedTensor transpose(const QuantizedTensor &q) {
  QuantizedTensor t;
  t.format = q.format;
  t.rows = q.cols;
  t.cols = q.rows;
  t.granularity = Granularity::block(q.granularity.cols, q.granularity.rows,
                                     q.granularity.scale);
  t.scaleRows = q.scaleCols;
  t.scaleCols = q.scaleRows;
  t.codes.resize(q.codes.size());
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t c = 0; c < q.cols; ++c)
      t.codes[size_t(c * q.rows + r)] = q.codes[size_t(r * q.cols + c)];
  t.scales.resize(q.scales.size());
  for (int64_t r = 0; r < q.scaleRows; ++r)
    for (int64_t c = 0; c < q.scaleCols; ++c)
      t.scales[size_t(c * q.scaleRows + r)] =
          q.scales[size_t(r * q.scaleCols + c)];
  if (!q.scaleCodes.empty()) {
    t.scaleCodes.resize(q.scaleCodes.size());
    for (int64_t r = 0; r < q.scaleRows; ++r)
      for (int64_t c = 0; c < q.scaleCols; ++c)
        t.scaleCodes[size_t(c * q.scaleRows + r)] =
            q.scaleCodes[size_t(r * q.scaleCols + c)];
  }
  return t;
}

Status validate(const QuantizedTensor &q, std::string_view name) {
  if (!isFP8(q.format))
    return errorf("expected ", name, " to hold an FP8 format, found ",
                  toString(q.format));
  if (q.rows < 0 || q.cols < 0)
    return errorf("expected ", name, " to have a non-negative shape, found [",
                  q.rows, ", ", q.cols, "]");
  FP8_RETURN_IF_ERROR(
      checkGranularity(q.granularity, std::string(name) + "'s granularity"));
  if (int64_t(q.codes.size()) != q.rows * q.cols)
    return errorf("expected ", name, " to hold ", q.rows * q.cols, " codes ([",
                  q.rows, ", ", q.cols, "]), found ", q.codes.size());
  int64_t sr = q.granularity.scaleRows(q.rows);
  int64_t sc = q.granularity.scaleCols(q.cols);
  if (q.scaleRows != sr || q.scaleCols != sc)
    return errorf("expected the scales of ", name, " to have shape [", sr, ", ",
                  sc, "] for ", toString(q.granularity),
                  " granularity, found [", q.scaleRows, ", ", q.scaleCols, "]");
  if (int64_t(q.scales.size()) != sr * sc)
    return errorf("expected ", name, " to hold ", sr * sc, " scales, found ",
                  q.scales.size());
  bool ue8m0 = q.granularity.scale == ScaleFormat::UE8M0;
  if (ue8m0 && q.scaleCodes.size() != q.scales.size())
    return errorf("expected ", name, " to hold ", q.scales.size(),
                  " ue8m0 scale bytes, found ", q.scaleCodes.size());
  if (!ue8m0 && !q.scaleCodes.empty())
    return errorf("expected no ue8m0 scale bytes in ", name, " (",
                  toString(q.granularity.scale), " scales), found ",
                  q.scaleCodes.size());
  for (size_t i = 0; ue8m0 && i < q.scales.size(); ++i) {
    float d = ue8m0ToFloat(q.scaleCodes[i]);
    if (!(d == q.scales[i] || (std::isnan(d) && std::isnan(q.scales[i]))))
      return errorf("expected scale ", i, " of ", name,
                    " to decode its ue8m0 byte (", d, "), found ", q.scales[i]);
  }
  return Status::ok();
}

} // namespace fp8::numerics
