//===- GemmKernels.cpp - Register-tile kernels of the reference GEMM ------===//
//
// Bit-exactness between the two versions: products of FP8 values are exact
// in FP32, so a fused a*b+p rounds exactly like a separate multiply and add;
// the promotion is an explicit fma in both; the accumulator model is written
// once with GCC vector extensions and compiled for both targets (integer
// truncation and power-of-two scaling are exact in any ISA).
//
//===----------------------------------------------------------------------===//

#include "numerics/GemmKernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FP8_HAVE_X86 1
#else
#define FP8_HAVE_X86 0
#endif

namespace fp8::numerics::detail {

namespace {

//===----------------------------------------------------------------------===//
// Promotion (shared)
//===----------------------------------------------------------------------===//

/// acc = fma(part, sA[i] * sB[j], acc) or acc += part, over a whole tile.
inline __attribute__((always_inline)) void
promote(const TileF32 &t, int64_t chunk, const float *part, float *acc) {
  if (!t.scaleA) {
    for (int e = 0; e < kTileM * kTileN; ++e)
      acc[e] += part[e];
    return;
  }
  const float *sa = t.scaleA + chunk * t.strideA;
  const float *sb = t.scaleB + chunk * t.strideB;
  for (int i = 0; i < kTileM; ++i)
    for (int j = 0; j < kTileN; ++j) {
      int e = i * kTileN + j;
      acc[e] = std::fma(part[e], sa[i] * sb[j], acc[e]);
    }
}

//===----------------------------------------------------------------------===//
// The accumulator model, 8 lanes at a time
//===----------------------------------------------------------------------===//

// The 32-byte vectors below never cross a call boundary (everything is
// always_inline), so the ABI note GCC emits for the non-AVX build is moot.
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

inline __attribute__((always_inline)) v8f load8(const float *p) {
  v8f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline __attribute__((always_inline)) void store8(float *p, v8f v) {
  std::memcpy(p, &v, sizeof(v));
}

/// The biased float exponent field of each lane.
inline __attribute__((always_inline)) v8i exponentField(v8f v) {
  return ((v8i)v >> 23) & 0xFF;
}

/// One MMA step (Accumulator.h) for 8 output columns of row `i`: products
/// a[k][i] * b[k][j0 + lane] for k in [g0, g1), into the partial sums `t`.
/// Exponents are handled biased (+127); an FP8 subnormal (a float whose
/// exponent is below the format's emin) counts as emin.
inline __attribute__((always_inline)) v8f emulatedStep(v8f t,
                                                       const TileF32 &tile,
                                                       int i, int j0,
                                                       int64_t g0, int64_t g1) {
  const float *a = tile.a, *b = tile.b;
  const int bits = tile.model.mantissaBits;
  const v8i zero = {};
  const v8f zerof = {};
  const v8i minB = zero + (127 + tile.minExpB);
  const int minA = 127 + tile.minExpA;
  // The alignment exponent: the accumulator's, and each nonzero product's
  // exp(a) + exp(b) (before the product is normalized).
  v8i e = exponentField(t); // 0 for a zero accumulator: never the max
  for (int64_t k = g0; k < g1; ++k) {
    float av = a[k * kTileM + i];
    if (av == 0.0f)
      continue;
    uint32_t abits;
    std::memcpy(&abits, &av, sizeof(abits));
    int ea = std::max(int((abits >> 23) & 0xFF), minA) - 127;
    v8f bv = load8(b + k * kTileN + j0);
    v8i eb = exponentField(bv);
    eb = eb < minB ? minB : eb;
    v8i ep = (eb + ea) & (bv != zerof); // zero products do not count
    e = ep > e ? ep : e;
  }
  // q = 2^(e - bits), 1/q = 2^(bits - e), biased. FP8 product exponents are
  // at least -28 (E5M2 subnormals), so both stay normal; a lane with nothing
  // nonzero gets any valid exponent (its sum is 0).
  const v8i minExp = zero + (bits + 1);
  e = e < minExp ? minExp : e;
  v8f q = (v8f)((e - bits) << 23);
  v8f invq = (v8f)((254 + bits - e) << 23);
  // Align and truncate toward zero: exact integer sums (< 2^31: each term is
  // below 2^(bits + 2), and there are at most 33 of 2^25).
  v8i s = __builtin_convertvector(t * invq, v8i);
  for (int64_t k = g0; k < g1; ++k) {
    v8f p = a[k * kTileM + i] * load8(b + k * kTileN + j0);
    s += __builtin_convertvector(p * invq, v8i);
  }
  // Normalize: keep `bits` bits below the leading one. The leading bit of
  // |s| comes from its float conversion, exact below 2^24 (and for larger
  // values from |s| >> 8, which is).
  v8i sign = s >> 31;
  v8i mag = (s ^ sign) - sign;
  v8i big = mag >= (1 << 24);
  v8i y = big ? mag >> 8 : mag;
  v8f yf = __builtin_convertvector(y, v8f);
  v8i lead = exponentField(yf) - 127 + (big & 8);
  v8i shift = lead - bits;
  shift = shift > zero ? shift : zero;
  mag = (mag >> shift) << shift;
  v8f r = __builtin_convertvector(mag, v8f) * q;
  return s < 0 ? -r : r;
}

inline __attribute__((always_inline)) void emulatedTile(const TileF32 &t,
                                                        float *acc) {
  const int64_t group = std::max(t.model.groupK, 1);
  float part[kTileM * kTileN];
  int64_t chunk = 0;
  for (int64_t k0 = 0; k0 < t.k; k0 += t.interval, ++chunk) {
    int64_t k1 = std::min(t.k, k0 + t.interval);
    std::fill(part, part + kTileM * kTileN, 0.0f);
    for (int64_t g0 = k0; g0 < k1; g0 += group) {
      int64_t g1 = std::min(k1, g0 + group);
      for (int i = 0; i < kTileM; ++i)
        for (int j0 = 0; j0 < kTileN; j0 += 8) {
          float *dst = part + i * kTileN + j0;
          store8(dst, emulatedStep(load8(dst), t, i, j0, g0, g1));
        }
    }
    promote(t, chunk, part, acc);
  }
}

//===----------------------------------------------------------------------===//
// Portable kernels
//===----------------------------------------------------------------------===//

void fp32TilePortable(const TileF32 &t, float *acc) {
  float part[kTileM * kTileN];
  int64_t chunk = 0;
  for (int64_t k0 = 0; k0 < t.k; k0 += t.interval, ++chunk) {
    int64_t k1 = std::min(t.k, k0 + t.interval);
    std::fill(part, part + kTileM * kTileN, 0.0f);
    for (int64_t k = k0; k < k1; ++k) {
      const float *a = t.a + k * kTileM;
      const float *b = t.b + k * kTileN;
      for (int i = 0; i < kTileM; ++i)
        for (int j = 0; j < kTileN; ++j)
          part[i * kTileN + j] += a[i] * b[j]; // exact product, one rounding
    }
    promote(t, chunk, part, acc);
  }
}

void emulatedTilePortable(const TileF32 &t, float *acc) {
  emulatedTile(t, acc);
}

void fp64TilePortable(const double *a, const double *b, int64_t k,
                      double *acc) {
  double p[kTileM64 * kTileN64] = {};
  for (int64_t kk = 0; kk < k; ++kk)
    for (int i = 0; i < kTileM64; ++i)
      for (int j = 0; j < kTileN64; ++j)
        p[i * kTileN64 + j] = std::fma(
            a[kk * kTileM64 + i], b[kk * kTileN64 + j], p[i * kTileN64 + j]);
  std::copy(p, p + kTileM64 * kTileN64, acc);
}

//===----------------------------------------------------------------------===//
// AVX2 + FMA kernels
//===----------------------------------------------------------------------===//

#if FP8_HAVE_X86

__attribute__((target("avx2,fma"))) void fp32TileAvx2(const TileF32 &t,
                                                      float *acc) {
  static_assert(kTileM == 6 && kTileN == 16, "the AVX2 tile is 6x16");
  int64_t chunk = 0;
  for (int64_t k0 = 0; k0 < t.k; k0 += t.interval, ++chunk) {
    int64_t k1 = std::min(t.k, k0 + t.interval);
    __m256 p[kTileM][2];
#pragma GCC unroll 6
    for (int i = 0; i < kTileM; ++i)
      p[i][0] = p[i][1] = _mm256_setzero_ps();
    const float *a = t.a + k0 * kTileM;
    const float *b = t.b + k0 * kTileN;
    for (int64_t k = k0; k < k1; ++k, a += kTileM, b += kTileN) {
      __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
      for (int i = 0; i < kTileM; ++i) {
        __m256 av = _mm256_broadcast_ss(a + i);
        p[i][0] = _mm256_fmadd_ps(av, b0, p[i][0]);
        p[i][1] = _mm256_fmadd_ps(av, b1, p[i][1]);
      }
    }
    if (t.scaleA) {
      const float *sa = t.scaleA + chunk * t.strideA;
      const float *sb = t.scaleB + chunk * t.strideB;
      __m256 sb0 = _mm256_loadu_ps(sb), sb1 = _mm256_loadu_ps(sb + 8);
#pragma GCC unroll 6
      for (int i = 0; i < kTileM; ++i) {
        __m256 sai = _mm256_broadcast_ss(sa + i);
        float *row = acc + i * kTileN;
        _mm256_storeu_ps(row, _mm256_fmadd_ps(p[i][0], _mm256_mul_ps(sai, sb0),
                                              _mm256_loadu_ps(row)));
        _mm256_storeu_ps(row + 8,
                         _mm256_fmadd_ps(p[i][1], _mm256_mul_ps(sai, sb1),
                                         _mm256_loadu_ps(row + 8)));
      }
    } else {
#pragma GCC unroll 6
      for (int i = 0; i < kTileM; ++i) {
        float *row = acc + i * kTileN;
        _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), p[i][0]));
        _mm256_storeu_ps(row + 8,
                         _mm256_add_ps(_mm256_loadu_ps(row + 8), p[i][1]));
      }
    }
  }
}

__attribute__((target("avx2,fma"))) void emulatedTileAvx2(const TileF32 &t,
                                                          float *acc) {
  emulatedTile(t, acc);
}

__attribute__((target("avx2,fma"))) void
fp64TileAvx2(const double *a, const double *b, int64_t k, double *acc) {
  static_assert(kTileM64 == 6 && kTileN64 == 8, "the AVX2 FP64 tile is 6x8");
  __m256d p[kTileM64][2];
#pragma GCC unroll 6
  for (int i = 0; i < kTileM64; ++i)
    p[i][0] = p[i][1] = _mm256_setzero_pd();
  for (int64_t kk = 0; kk < k; ++kk, a += kTileM64, b += kTileN64) {
    __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
#pragma GCC unroll 6
    for (int i = 0; i < kTileM64; ++i) {
      __m256d av = _mm256_broadcast_sd(a + i);
      p[i][0] = _mm256_fmadd_pd(av, b0, p[i][0]);
      p[i][1] = _mm256_fmadd_pd(av, b1, p[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kTileM64; ++i) {
    _mm256_storeu_pd(acc + i * kTileN64, p[i][0]);
    _mm256_storeu_pd(acc + i * kTileN64 + 4, p[i][1]);
  }
}

#endif // FP8_HAVE_X86

} // namespace

bool cpuHasAvx2Fma() {
#if FP8_HAVE_X86
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

void runTileF32(const TileF32 &t, float *acc, bool portable) {
#if FP8_HAVE_X86
  if (!portable && cpuHasAvx2Fma()) {
    if (t.model.emulated())
      emulatedTileAvx2(t, acc);
    else
      fp32TileAvx2(t, acc);
    return;
  }
#endif
  if (t.model.emulated())
    emulatedTilePortable(t, acc);
  else
    fp32TilePortable(t, acc);
}

void runTileF64(const double *a, const double *b, int64_t k, double *acc,
                bool portable) {
#if FP8_HAVE_X86
  if (!portable && cpuHasAvx2Fma()) {
    fp64TileAvx2(a, b, k, acc);
    return;
  }
#endif
  fp64TilePortable(a, b, k, acc);
}

} // namespace fp8::numerics::detail
