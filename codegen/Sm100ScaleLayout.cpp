//===- Sm100ScaleLayout.cpp - UE8M0 scales as the sm_100a GEMM reads them -===//

#include "codegen/Sm100ScaleLayout.h"

#include <cmath>
#include <cstring>

namespace fp8 {

std::optional<uint8_t> ue8m0OfPowerOfTwo(float scale) {
  uint32_t bits;
  std::memcpy(&bits, &scale, sizeof(bits));
  if (std::isnan(scale))
    return uint8_t(0xFF);
  if (bits == 0x00400000u) // 2^-127, the smallest UE8M0 value
    return uint8_t(0);
  const uint32_t exponent = (bits >> 23) & 0xFF;
  const uint32_t mantissa = bits & 0x7FFFFF;
  if ((bits >> 31) != 0 || exponent == 0 || exponent == 0xFF || mantissa != 0)
    return std::nullopt;
  return uint8_t(exponent); // both biased by 127
}

Expected<std::vector<uint8_t>> packSm100Scales(const ScaleTensorView &v,
                                               std::string_view name) {
  const Granularity &g = v.granularity;
  if (v.rows <= 0 || v.k <= 0)
    return errorf("expected a non-empty ", name, ", found ", v.rows, "x", v.k);
  if (g.rows < 0 || g.cols < 0)
    return errorf("expected non-negative scale block extents for ", name,
                  ", found ", g.rows, "x", g.cols);
  const int64_t br = Granularity::extent(g.rows, v.rows);
  const int64_t bc = Granularity::extent(g.cols, v.k);
  // NOTE: one UE8M0 byte covers 32 K elements (the MX block of
  // tcgen05.mma kind::mxf8f6f4 block32): a scale block along K must start
  // and end on that grid, unless it spans the whole K.
  if (g.cols != Granularity::kWhole && bc % fp8k::sf::kKBlock != 0)
    return errorf("expected the K block of ", name, "'s scales (", bc,
                  ") to be a multiple of ", fp8k::sf::kKBlock,
                  " on sm_100a (one UE8M0 scale per 32 K elements)");
  const int64_t scaleCols = g.scaleCols(v.k);
  const int64_t kBlocks = fp8k::sf::k_blocks(v.k);
  std::vector<uint8_t> out(size_t(sm100ScaleBytes(v.rows, v.k)), 127);
  for (int64_t r = 0; r < v.rows; ++r) {
    const float *row = v.scales + (r / br) * scaleCols;
    for (int64_t kb = 0; kb < kBlocks; ++kb) {
      const int64_t c = kb * fp8k::sf::kKBlock / bc;
      const float s = row[c];
      auto code = ue8m0OfPowerOfTwo(s);
      if (!code)
        return errorf("expected power-of-two scales for ", name,
                      " on sm_100a (they become UE8M0 block scales), found ", s,
                      " at scale (", r / br, ", ", c, ") of granularity ",
                      toString(g), ": quantize with f32_pow2 or ue8m0 scales");
      out[size_t(sm100ScaleOffset(v.rows, r, kb))] = *code;
    }
  }
  return out;
}

float sm100ScaleAt(const std::vector<uint8_t> &packed, int64_t rows, int64_t r,
                   int64_t kb) {
  const uint8_t code = packed[size_t(sm100ScaleOffset(rows, r, kb))];
  if (code == 0xFF)
    return std::nanf("");
  if (code == 0) {
    const uint32_t bits = 0x00400000u;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  const uint32_t bits = uint32_t(code) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

} // namespace fp8
