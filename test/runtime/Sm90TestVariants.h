//===- Sm90TestVariants.h - The sm_90a compile tests' recipes ---*- C++ -*-===//
//
// The recipe variants (granularities, promotion intervals, outputs,
// formats) that the sm_90a compile tests cross with tiles, and the spec of
// one of them for an N x K GEMM.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TEST_RUNTIME_SM90TESTVARIANTS_H
#define FP8_TEST_RUNTIME_SM90TESTVARIANTS_H

#include "core/KernelSpec.h"

namespace fp8::test {

struct Variant {
  const char *name;
  Granularity a, b;
  int64_t promotion;
  DType out = DType::BF16;
  bool accumulate = false;
  DType fa = DType::E4M3FN, fb = DType::E4M3FN;
};

inline const Variant kVariants[] = {
    {"deepseek", Granularity::block(1, 128), Granularity::block(128, 128), 128},
    {"deepseek_p32", Granularity::block(1, 128), Granularity::block(128, 128),
     32},
    {"deepseek_p64_f32", Granularity::block(1, 128),
     Granularity::block(128, 128), 64, DType::F32},
    {"wgrad_1x128", Granularity::block(1, 128), Granularity::block(1, 128),
     128},
    {"per_tensor_p0", Granularity::perTensor(), Granularity::perTensor(), 0},
    {"per_tensor_p512", Granularity::perTensor(), Granularity::perTensor(),
     512},
    {"per_row", Granularity::perRow(), Granularity::perRow(), 128},
    {"ue8m0", Granularity::block(1, 128, ScaleFormat::UE8M0),
     Granularity::block(128, 128, ScaleFormat::UE8M0), 128},
    {"e5m2_acc", Granularity::block(1, 128), Granularity::block(128, 128), 128,
     DType::BF16, true, DType::E5M2, DType::E4M3FN},
    // Intervals that neither divide nor are a multiple of a k-block: the
    // promotion steps are chosen at run time.
    {"per_row_p96", Granularity::perRow(), Granularity::perRow(), 96},
    {"per_tensor_p160_f32", Granularity::perTensor(), Granularity::perTensor(),
     160, DType::F32},
};

/// The variant's recipe for an N x K GEMM with BLOCK_M rows per tile.
inline KernelSpec variantSpec(const Variant &v, int64_t n, int64_t k,
                              int blockM) {
  KernelSpec s;
  s.n = n;
  s.k = k;
  s.a.granularity = v.a;
  s.b.granularity = v.b;
  s.a.format = v.fa;
  s.b.format = v.fb;
  s.promotionInterval = promotionFromInt(v.promotion);
  s.out = v.out;
  s.accumulate = v.accumulate;
  s.tile.blockM = blockM;
  s.tile.mathWarpgroups = blockM / 64;
  return s;
}

} // namespace fp8::test

#endif // FP8_TEST_RUNTIME_SM90TESTVARIANTS_H
