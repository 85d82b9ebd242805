//===- ReferenceGemm.cpp - The CPU oracle for scaled FP8 GEMMs ------------===//
//
// Both operands are decoded once (a 256-entry table) into panels of
// kTileM (kTileN) rows by K, so the register-tile kernels stream them with
// unit stride whatever the layout. Output tiles are grouped into blocks of
// kBlockPanelsM x kBlockPanelsN panels, one parallelFor task each; inside a
// block the B panel stays in L2 while the A panels of the block pass by.
// Every output element is computed by one tile in a fixed order, so the
// result does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "numerics/ReferenceGemm.h"

#include "core/RecipeRules.h"
#include "numerics/Formats.h"
#include "numerics/GemmKernels.h"
#include "numerics/Parallel.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace fp8::numerics {

using detail::kTileM;
using detail::kTileM64;
using detail::kTileN;
using detail::kTileN64;

namespace {

/// Output panels per parallel task (96 x 128 FP32 outputs).
constexpr int64_t kBlockPanelsM = 16;
constexpr int64_t kBlockPanelsN = 8;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Packs a logical [rows, k] operand into panels of `tile` rows:
/// out[(p * k + kk) * tile + i] = value(p * tile + i, kk), zero beyond rows.
template <typename T, typename Value>
std::vector<T> packPanels(int64_t rows, int64_t k, int tile, Value value) {
  int64_t panels = ceilDiv(rows, tile);
  std::vector<T> out(size_t(panels * k * tile), T(0));
  parallelFor(panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T *dst = out.data() + p * k * tile;
      int64_t valid = std::min<int64_t>(tile, rows - p * tile);
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t i = 0; i < valid; ++i)
          dst[kk * tile + i] = value(p * tile + i, kk);
    }
  });
  return out;
}

/// Reads a quantized operand in its logical frame ([rows, K]).
struct LogicalOperand {
  const QuantizedTensor &t;
  Layout layout;
  const float *table;

  LogicalOperand(const QuantizedTensor &t, Layout layout)
      : t(t), layout(layout), table(fp8DecodeTable(t.format)) {}

  uint8_t code(int64_t r, int64_t k) const {
    return layout == Layout::KMajor ? t.codes[size_t(r * t.cols + k)]
                                    : t.codes[size_t(k * t.cols + r)];
  }
  float value(int64_t r, int64_t k) const { return table[code(r, k)]; }
  float scale(int64_t r, int64_t k) const {
    return layout == Layout::KMajor ? t.scaleAt(r, k) : t.scaleAt(k, r);
  }
};

/// Runs `tile(mPanel, nPanel)` over every output tile, in parallel blocks.
template <typename Tile>
void forEachTile(int64_t mPanels, int64_t nPanels, Tile tile) {
  int64_t mBlocks = ceilDiv(mPanels, kBlockPanelsM);
  int64_t nBlocks = ceilDiv(nPanels, kBlockPanelsN);
  parallelFor(mBlocks * nBlocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t mb = t / nBlocks, nb = t % nBlocks;
      int64_t np1 = std::min(nPanels, (nb + 1) * kBlockPanelsN);
      int64_t mp1 = std::min(mPanels, (mb + 1) * kBlockPanelsM);
      for (int64_t np = nb * kBlockPanelsN; np < np1; ++np)
        for (int64_t mp = mb * kBlockPanelsM; mp < mp1; ++mp)
          tile(mp, np);
    }
  });
}

} // namespace

Expected<GemmShape> gemmShape(int64_t aRows, int64_t aCols, Layout layoutA,
                              int64_t bRows, int64_t bCols, Layout layoutB) {
  bool aK = layoutA == Layout::KMajor, bK = layoutB == Layout::KMajor;
  GemmShape s;
  s.m = aK ? aRows : aCols;
  s.k = aK ? aCols : aRows;
  s.n = bK ? bRows : bCols;
  int64_t kB = bK ? bCols : bRows;
  if (s.m < 0 || s.k < 0 || s.n < 0 || kB < 0)
    return errorf("expected non-negative operand shapes, found A [", aRows,
                  ", ", aCols, "] and B [", bRows, ", ", bCols, "]");
  if (kB != s.k)
    return errorf("expected K of B (", kB, ") to equal K of A (", s.k,
                  "): A is [", aRows, ", ", aCols, "] ", toString(layoutA),
                  ", B is [", bRows, ", ", bCols, "] ", toString(layoutB));
  return s;
}

Expected<std::vector<float>> referenceGemm(const QuantizedTensor &a,
                                           Layout layoutA,
                                           const QuantizedTensor &b,
                                           Layout layoutB, const float *c,
                                           const ReferenceGemmOptions &opts) {
  FP8_RETURN_IF_ERROR(validate(a, "A"));
  FP8_RETURN_IF_ERROR(validate(b, "B"));
  Expected<GemmShape> shape =
      gemmShape(a.rows, a.cols, layoutA, b.rows, b.cols, layoutB);
  if (!shape)
    return shape.status();
  const GemmShape s = *shape;
  const AccumulatorModel &model = opts.accumulator;
  if (model.mantissaBits < 0 || model.mantissaBits > kMaxAccumulatorBits)
    return errorf("expected the accumulator mantissa bits to be in [0, ",
                  kMaxAccumulatorBits, "] (0: FP32 sums), found ",
                  model.mantissaBits);
  // The emulated sums are exact 32-bit integers: (groupK + 1) terms below
  // 2^(mantissaBits + 2) each.
  int64_t maxGroup =
      model.emulated()
          ? std::min<int64_t>(1024,
                              (int64_t(1) << (29 - model.mantissaBits)) - 1)
          : 1024;
  if (model.groupK < 1 || model.groupK > maxGroup)
    return errorf("expected the accumulator group (products per MMA step) "
                  "to be in [1, ",
                  maxGroup, "] with ", model.mantissaBits,
                  " mantissa bits, found ", model.groupK);
  OperandSpec specA{a.format, layoutA, a.granularity};
  OperandSpec specB{b.format, layoutB, b.granularity};
  const std::optional<int64_t> interval = opts.promotionInterval;
  FP8_RETURN_IF_ERROR(checkGemmRecipe(specA, specB, interval, DType::F32));

  std::vector<float> d(size_t(s.m * s.n), 0.0f);
  if (s.m == 0 || s.n == 0)
    return d;

  int64_t kbA = kBlock(a.granularity, layoutA);
  int64_t kbB = kBlock(b.granularity, layoutB);
  bool varying = kbA != Granularity::kWhole || kbB != Granularity::kWhole;
  int64_t chunkK = interval ? *interval
                   : varying
                       ? (kbA != Granularity::kWhole ? kbA : kbB) // MX: 32
                       : std::max<int64_t>(s.k, 1);

  LogicalOperand la(a, layoutA), lb(b, layoutB);
  int64_t mPanels = ceilDiv(s.m, kTileM), nPanels = ceilDiv(s.n, kTileN);
  int64_t mPad = mPanels * kTileM, nPad = nPanels * kTileN;
  std::vector<float> pa = packPanels<float>(
      s.m, s.k, kTileM, [&](int64_t m, int64_t k) { return la.value(m, k); });
  std::vector<float> pb = packPanels<float>(
      s.n, s.k, kTileN, [&](int64_t n, int64_t k) { return lb.value(n, k); });

  // Scales: per chunk when they vary along K, else one per row / column
  // applied after the loop. Padding rows get 0 (their outputs are dropped).
  int64_t chunks = s.k == 0 ? 0 : ceilDiv(s.k, chunkK);
  std::vector<float> sa, sb;
  if (varying) {
    sa.assign(size_t(chunks * mPad), 0.0f);
    sb.assign(size_t(chunks * nPad), 0.0f);
    for (int64_t ch = 0; ch < chunks; ++ch) {
      for (int64_t m = 0; m < s.m; ++m)
        sa[size_t(ch * mPad + m)] = la.scale(m, ch * chunkK);
      for (int64_t n = 0; n < s.n; ++n)
        sb[size_t(ch * nPad + n)] = lb.scale(n, ch * chunkK);
    }
  } else {
    sa.assign(size_t(mPad), 0.0f);
    sb.assign(size_t(nPad), 0.0f);
    if (s.k > 0) {
      for (int64_t m = 0; m < s.m; ++m)
        sa[size_t(m)] = la.scale(m, 0);
      for (int64_t n = 0; n < s.n; ++n)
        sb[size_t(n)] = lb.scale(n, 0);
    }
  }

  forEachTile(mPanels, nPanels, [&](int64_t mp, int64_t np) {
    detail::TileF32 t;
    t.a = pa.data() + mp * s.k * kTileM;
    t.b = pb.data() + np * s.k * kTileN;
    t.k = s.k;
    t.interval = chunkK;
    if (varying) {
      t.scaleA = sa.data() + mp * kTileM;
      t.scaleB = sb.data() + np * kTileN;
      t.strideA = mPad;
      t.strideB = nPad;
    }
    t.model = model;
    t.minExpA = 1 - fp8Format(a.format).bias;
    t.minExpB = 1 - fp8Format(b.format).bias;
    float acc[kTileM * kTileN] = {};
    detail::runTileF32(t, acc, opts.portableKernels);
    for (int64_t i = 0; i < kTileM; ++i) {
      int64_t m = mp * kTileM + i;
      if (m >= s.m)
        break;
      for (int64_t j = 0; j < kTileN; ++j) {
        int64_t n = np * kTileN + j;
        if (n >= s.n)
          break;
        float v = acc[i * kTileN + j];
        const float *cv = c ? c + m * s.n + n : nullptr;
        if (varying) {
          d[size_t(m * s.n + n)] = cv ? v + *cv : v;
        } else {
          float scale = sa[size_t(m)] * sb[size_t(n)];
          d[size_t(m * s.n + n)] = cv ? std::fma(v, scale, *cv) : v * scale;
        }
      }
    }
  });
  return d;
}

namespace {

/// The FP64 product of two packed double panels sets (+ C).
std::vector<double> gemmF64(const std::vector<double> &pa,
                            const std::vector<double> &pb, const GemmShape &s,
                            const float *c) {
  std::vector<double> d(size_t(s.m * s.n), 0.0);
  if (s.m == 0 || s.n == 0)
    return d;
  int64_t mPanels = ceilDiv(s.m, kTileM64), nPanels = ceilDiv(s.n, kTileN64);
  forEachTile(mPanels, nPanels, [&](int64_t mp, int64_t np) {
    double acc[kTileM64 * kTileN64];
    detail::runTileF64(pa.data() + mp * s.k * kTileM64,
                       pb.data() + np * s.k * kTileN64, s.k, acc,
                       /*portable=*/false);
    for (int64_t i = 0; i < kTileM64; ++i) {
      int64_t m = mp * kTileM64 + i;
      if (m >= s.m)
        break;
      for (int64_t j = 0; j < kTileN64; ++j) {
        int64_t n = np * kTileN64 + j;
        if (n >= s.n)
          break;
        double v = acc[i * kTileN64 + j];
        d[size_t(m * s.n + n)] = c ? v + double(c[m * s.n + n]) : v;
      }
    }
  });
  return d;
}

} // namespace

Expected<std::vector<double>> referenceGemmF64(const QuantizedTensor &a,
                                               Layout layoutA,
                                               const QuantizedTensor &b,
                                               Layout layoutB, const float *c) {
  FP8_RETURN_IF_ERROR(validate(a, "A"));
  FP8_RETURN_IF_ERROR(validate(b, "B"));
  Expected<GemmShape> shape =
      gemmShape(a.rows, a.cols, layoutA, b.rows, b.cols, layoutB);
  if (!shape)
    return shape.status();
  const GemmShape s = *shape;
  LogicalOperand la(a, layoutA), lb(b, layoutB);
  // decode(q) * scale: at most 4 + 24 significant bits, exact in FP64.
  auto pa = packPanels<double>(s.m, s.k, kTileM64, [&](int64_t m, int64_t k) {
    return double(la.value(m, k)) * double(la.scale(m, k));
  });
  auto pb = packPanels<double>(s.n, s.k, kTileN64, [&](int64_t n, int64_t k) {
    return double(lb.value(n, k)) * double(lb.scale(n, k));
  });
  return gemmF64(pa, pb, s, c);
}

Expected<std::vector<double>>
referenceGemmUnquantized(const float *a, Layout layoutA, const float *b,
                         Layout layoutB, int64_t m, int64_t n, int64_t k,
                         const float *c) {
  if (m < 0 || n < 0 || k < 0)
    return errorf("expected a non-negative GEMM shape, found M ", m, ", N ", n,
                  ", K ", k);
  if ((!a && m * k > 0) || (!b && n * k > 0))
    return errorf("expected input data for A and B, found a null pointer");
  GemmShape s{m, n, k};
  auto pa = packPanels<double>(m, k, kTileM64, [&](int64_t r, int64_t kk) {
    return double(layoutA == Layout::KMajor ? a[r * k + kk] : a[kk * m + r]);
  });
  auto pb = packPanels<double>(n, k, kTileN64, [&](int64_t r, int64_t kk) {
    return double(layoutB == Layout::KMajor ? b[r * k + kk] : b[kk * n + r]);
  });
  return gemmF64(pa, pb, s, c);
}

} // namespace fp8::numerics
