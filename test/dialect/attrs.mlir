// Every attribute form of the fp8 dialect prints and parses back, in the
// custom and in the generic form.
// RUN: fp8-opt %s | fp8-opt | FileCheck %s
// RUN: fp8-opt %s --mlir-print-op-generic | fp8-opt | FileCheck %s

// Named forms, blocks (whole in either dimension), scale formats. An
// explicit f32 is the default; mx is sugar for 1x32:ue8m0.
// CHECK-LABEL: func.func @granularity
// CHECK-SAME: fp8.g0 = #fp8.granularity<per_tensor>
// CHECK-SAME: fp8.g1 = #fp8.granularity<per_row>
// CHECK-SAME: fp8.g2 = #fp8.granularity<per_column>
// CHECK-SAME: fp8.g3 = #fp8.granularity<1x128>
// CHECK-SAME: fp8.g4 = #fp8.granularity<128x128>
// CHECK-SAME: fp8.g5 = #fp8.granularity<1x32:ue8m0>
// CHECK-SAME: fp8.g6 = #fp8.granularity<1x32:ue8m0>
// CHECK-SAME: fp8.g7 = #fp8.granularity<1x32>
// CHECK-SAME: fp8.g8 = #fp8.granularity<128xwhole:f32_pow2>
// CHECK-SAME: fp8.g9 = #fp8.granularity<wholex128:ue8m0>
// CHECK-SAME: fp8.ga = #fp8.granularity<per_row:f32_pow2>
// CHECK-SAME: fp8.gb = #fp8.granularity<per_tensor>
// CHECK-SAME: fp8.gc = #fp8.granularity<1x128>
func.func @granularity() attributes {
  fp8.g0 = #fp8.granularity<per_tensor>,
  fp8.g1 = #fp8.granularity<per_row>,
  fp8.g2 = #fp8.granularity<per_column>,
  fp8.g3 = #fp8.granularity<1x128>,
  fp8.g4 = #fp8.granularity<128x128>,
  fp8.g5 = #fp8.granularity<mx>,
  fp8.g6 = #fp8.granularity<1x32:ue8m0>,
  fp8.g7 = #fp8.granularity<1x32>,
  fp8.g8 = #fp8.granularity<128xwhole:f32_pow2>,
  fp8.g9 = #fp8.granularity<wholex128:ue8m0>,
  fp8.ga = #fp8.granularity<per_row:f32_pow2>,
  fp8.gb = #fp8.granularity<wholexwhole:f32>,
  fp8.gc = #fp8.granularity<1 x 128>
} {
  return
}

// Parameters equal to their default are not printed; any order parses.
// CHECK-LABEL: func.func @scaling
// CHECK-SAME: fp8.s0 = #fp8.scaling<current>
// CHECK-SAME: fp8.s1 = #fp8.scaling<delayed>
// CHECK-SAME: fp8.s2 = #fp8.scaling<delayed>
// CHECK-SAME: fp8.s3 = #fp8.scaling<delayed, history = 1024, interval = 4, margin = 2, algo = most_recent>
// CHECK-SAME: fp8.s4 = #fp8.scaling<delayed, interval = 5>
func.func @scaling() attributes {
  fp8.s0 = #fp8.scaling<current>,
  fp8.s1 = #fp8.scaling<delayed>,
  fp8.s2 = #fp8.scaling<delayed, history = 16, interval = 1, margin = 0, algo = max>,
  fp8.s3 = #fp8.scaling<delayed, algo = most_recent, margin = 2, history = 1024, interval = 4>,
  fp8.s4 = #fp8.scaling<delayed, interval = 5>
} {
  return
}

// CHECK-LABEL: func.func @quant
// CHECK-SAME: fp8.q0 = #fp8.quant<f8E4M3FN, <1x128>>
// CHECK-SAME: fp8.q1 = #fp8.quant<f8E5M2, <per_tensor>, <delayed, history = 1024>>
// CHECK-SAME: fp8.q2 = #fp8.quant<f8E4M3FN, <128x128:f32_pow2>>
// CHECK-SAME: fp8.q3 = #fp8.quant<f8E4M3FN, <1x32:ue8m0>>
func.func @quant() attributes {
  fp8.q0 = #fp8.quant<f8E4M3FN, <1x128>>,
  fp8.q1 = #fp8.quant<f8E5M2, <per_tensor>, <delayed, history = 1024>>,
  fp8.q2 = #fp8.quant<f8E4M3FN, <128x128:f32_pow2>, <current>>,
  fp8.q3 = #fp8.quant<f8E4M3FN, #fp8.granularity<mx>, #fp8.scaling<current>>
} {
  return
}

// DeepSeek-V3; per-channel with tensor-core accumulation only and an f32
// result; MX; per-tensor delayed scaling with E5M2 gradients.
// CHECK-LABEL: func.func @recipe
// CHECK-SAME: fp8.r0 = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>
// CHECK-SAME: fp8.r1 = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <per_row>>, out = f32>
// CHECK-SAME: fp8.r2 = #fp8.recipe<a = <f8E4M3FN, <1x32:ue8m0>>, b = <f8E4M3FN, <1x32:ue8m0>>>
// CHECK-SAME: fp8.r3 = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 1024>>, b = <f8E5M2, <per_tensor>, <delayed, history = 1024>>>
// CHECK-SAME: fp8.r4 = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 64>
func.func @recipe() attributes {
  fp8.r0 = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>,
                       promotion_interval = 128>,
  fp8.r1 = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <per_row>>,
                       out = f32>,
  fp8.r2 = #fp8.recipe<a = <f8E4M3FN, <mx>>, b = <f8E4M3FN, <mx>>, out = bf16>,
  fp8.r3 = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 1024>>,
                       b = <f8E5M2, <per_tensor>, <delayed, history = 1024>>>,
  fp8.r4 = #fp8.recipe<promotion_interval = 64, b = <f8E4M3FN, <128x128>>,
                       a = <f8E4M3FN, <1x128>>>
} {
  return
}

// CHECK-LABEL: func.func @enums
// CHECK-SAME: fp8.e0 = #fp8<layout k_major>
// CHECK-SAME: fp8.e1 = #fp8<layout mn_major>
// CHECK-SAME: fp8.e2 = #fp8<group_mode contiguous>
// CHECK-SAME: fp8.e3 = #fp8<group_mode masked>
func.func @enums() attributes {
  fp8.e0 = #fp8<layout k_major>,
  fp8.e1 = #fp8<layout mn_major>,
  fp8.e2 = #fp8<group_mode contiguous>,
  fp8.e3 = #fp8<group_mode masked>
} {
  return
}

// A GEMM's kernel spec: fields left out take their defaults, the printed
// form has every field (promotion_interval 0: no promotion; m -1: dynamic).
// CHECK-LABEL: func.func @gemm_spec
// CHECK-SAME: fp8.s0 = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128", layout = "k_major"}, accumulate = false, arch = "sm_90a", b = {format = "e4m3fn", granularity = "128x128", layout = "k_major"}, groups = 1, k = 7168, kind = "dense", m = -1, n = 4096, out = "bf16", promotion_interval = 128, tile = {block_k = 128, block_m = 128, block_n = 128, cluster_m = 1, cluster_n = 1, cta_group = 1, math_warpgroups = 2, overlap = "none", persistent = true, raster = "along_n", split_k = 1, stages = 4, swizzle_group = 8, tail_split = 1}}>
// CHECK-SAME: fp8.s1 = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x32:ue8m0", layout = "k_major"}, accumulate = true, arch = "sm_100a", b = {format = "e5m2", granularity = "1x32:ue8m0", layout = "k_major"}, groups = 1, k = 256, kind = "dense", m = 512, n = 8, out = "f32", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 64, cluster_m = 2, cluster_n = 1, cta_group = 2, math_warpgroups = 1, overlap = "none", persistent = false, raster = "along_m", split_k = 1, stages = 3, swizzle_group = 4, tail_split = 1}}>
func.func @gemm_spec() attributes {
  fp8.s0 = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128"}, arch = "sm_90a",
                      b = {format = "e4m3fn", granularity = "128x128"}, k = 7168, m = -1,
                      n = 4096, out = "bf16", promotion_interval = 128,
                      tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>,
  fp8.s1 = #fp8.gemm<{a = {format = "e4m3fn", granularity = "mx"}, accumulate = true,
                      arch = "sm_100a", b = {format = "e5m2", granularity = "mx"}, k = 256,
                      m = 512, n = 8, out = "f32", promotion_interval = 0,
                      tile = {block_k = 128, block_m = 128, block_n = 64, stages = 3,
                              math_warpgroups = 1, cluster_m = 2, cta_group = 2,
                              persistent = false, raster = "along_m", swizzle_group = 4}}>
} {
  return
}
