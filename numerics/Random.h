//===- Random.h - Deterministic test and benchmark inputs -------*- C++ -*-===//
//
// Seeded generators for the tensors the tests, the benchmarks and
// fp8-numerics feed to the GEMMs. The uniform stream is xoshiro256** (bit-
// identical everywhere); normal values use Box-Muller on it, so they depend
// only on the seed and the C library's log/cos (correctly rounded in glibc
// for these arguments in practice).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_NUMERICS_RANDOM_H
#define FP8_RUNTIME_NUMERICS_RANDOM_H

#include "core/Recipe.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fp8::numerics {

/// The shape of a random tensor's values.
enum class Distribution : uint8_t {
  Normal,   ///< N(0, 1) scaled by `scale`
  Uniform,  ///< U[-1, 1) scaled by `scale`
  Positive, ///< U[0, 1) scaled by `scale` (same-sign inputs: worst case for
            ///< a truncating accumulator)
  Outliers, ///< Normal, with a fraction of elements multiplied by a large
            ///< factor (massive activations)
};

/// "normal", "uniform", "positive", "outliers".
std::string_view toString(Distribution d);
std::optional<Distribution> parseDistribution(std::string_view s);

/// Parameters of a random tensor.
struct RandomSpec {
  Distribution dist = Distribution::Normal;
  float scale = 1.0f;            ///< multiplies every value
  uint64_t seed = 1;             ///< same seed, same tensor
  double outlierFraction = 1e-3; ///< Outliers: share of elements hit
  float outlierScale = 100.0f;   ///< Outliers: factor applied to them
};

/// `n` floats drawn as `spec` says.
std::vector<float> randomTensor(int64_t n, const RandomSpec &spec);

/// The same values rounded to bf16 (nearest-even), as bit patterns.
std::vector<uint16_t> randomTensorBF16(int64_t n, const RandomSpec &spec);

/// `n` FP8 codes of `format` (E4M3FN, E5M2) as a benchmark's or a tuner's
/// operands: N(0, 1) rounded to the format, from a table of 4096 such codes
/// drawn once and indexed at random (12 bits of the uniform stream each).
/// A conversion per element takes 30-90 ns and a GEMM's operands hold up
/// to 10^9 codes; the table takes ~1-5 ns per code.
std::vector<uint8_t> randomCodes(int64_t n, DType format, uint64_t seed);

/// xoshiro256** seeded through splitmix64: the uniform source above.
class Rng {
public:
  explicit Rng(uint64_t seed);
  /// 64 random bits.
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box-Muller, one value per call).
  double normal();

private:
  uint64_t s_[4];
};

} // namespace fp8::numerics

#endif // FP8_RUNTIME_NUMERICS_RANDOM_H
