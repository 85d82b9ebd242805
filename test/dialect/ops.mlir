// Every fp8 op prints and parses back, in the custom and in the generic form,
// with static and dynamic shapes.
// RUN: fp8-opt %s | fp8-opt | FileCheck %s
// RUN: fp8-opt %s --mlir-print-op-generic | fp8-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// fp8.quantize
//===----------------------------------------------------------------------===//

// DeepSeek-V3 activations: 1x128 tiles, a dynamic token count, K = 7168.
// CHECK-LABEL: func.func @quantize_tiles
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<?x7168xbf16>)
// CHECK: fp8.quantize %[[X]] granularity <1x128> : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
func.func @quantize_tiles(%x: tensor<?x7168xbf16>) {
  %q, %s = fp8.quantize %x granularity <1x128>
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
  return
}

// A partial last block: ceil(4000 / 128) = 32 scales per row.
// CHECK-LABEL: func.func @quantize_partial_block
// CHECK: fp8.quantize %{{.+}} granularity <1x128> : tensor<64x4000xf32> -> tensor<64x4000xf8E4M3FN>, tensor<64x32xf32>
func.func @quantize_partial_block(%x: tensor<64x4000xf32>) {
  %q, %s = fp8.quantize %x granularity <1x128>
      : tensor<64x4000xf32> -> tensor<64x4000xf8E4M3FN>, tensor<64x32xf32>
  return
}

// A stack of expert weights: each group has its own 128x128 block scales.
// CHECK-LABEL: func.func @quantize_groups
// CHECK: fp8.quantize %{{.+}} granularity <128x128:f32_pow2> : tensor<8x4096x7168xbf16> -> tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32>
func.func @quantize_groups(%w: tensor<8x4096x7168xbf16>) {
  %q, %s = fp8.quantize %w granularity <128x128:f32_pow2>
      : tensor<8x4096x7168xbf16> -> tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32>
  return
}

// MX: UE8M0 scales; per-row and per-column; the monitor statistics.
// CHECK-LABEL: func.func @quantize_forms
// CHECK: fp8.quantize %{{.+}} granularity <1x32:ue8m0> : tensor<128x4096xf16> -> tensor<128x4096xf8E4M3FN>, tensor<128x128xf8E8M0FNU>
// CHECK: fp8.quantize %{{.+}} granularity <per_row> : tensor<128x4096xf16> -> tensor<128x4096xf8E5M2>, tensor<128x1xf32>
// CHECK: fp8.quantize %{{.+}} granularity <per_column:ue8m0> : tensor<128x4096xf16> -> tensor<128x4096xf8E5M2>, tensor<1x4096xf8E8M0FNU> stats tensor<3xf32>
func.func @quantize_forms(%x: tensor<128x4096xf16>) {
  %q0, %s0 = fp8.quantize %x granularity <mx>
      : tensor<128x4096xf16> -> tensor<128x4096xf8E4M3FN>, tensor<128x128xf8E8M0FNU>
  %q1, %s1 = fp8.quantize %x granularity <per_row> scaling <current>
      : tensor<128x4096xf16> -> tensor<128x4096xf8E5M2>, tensor<128x1xf32>
  %q2, %s2, %st = fp8.quantize %x granularity <per_column:ue8m0>
      : tensor<128x4096xf16> -> tensor<128x4096xf8E5M2>, tensor<1x4096xf8E8M0FNU>
        stats tensor<3xf32>
  return
}

// Delayed scaling threads the amax history through SSA values.
// CHECK-LABEL: func.func @quantize_delayed
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<?x?xbf16>, %[[H:arg[0-9]+]]: tensor<1024xf32>)
// CHECK: %{{.+}}, %{{.+}}, %[[H1:.+]], %{{.+}} = fp8.quantize %[[X]] history %[[H]] granularity <per_tensor> scaling <delayed, history = 1024, margin = 1> : tensor<?x?xbf16>, tensor<1024xf32> -> tensor<?x?xf8E5M2>, tensor<1x1xf32>, tensor<1024xf32> stats tensor<3xf32>
// CHECK: fp8.quantize %[[X]] history %[[H1]] granularity <per_tensor> scaling <delayed, history = 1024, interval = 5, algo = most_recent> : tensor<?x?xbf16>, tensor<1024xf32> -> tensor<?x?xf8E4M3FN>, tensor<1x1xf32>, tensor<1024xf32>
func.func @quantize_delayed(%x: tensor<?x?xbf16>, %h0: tensor<1024xf32>) {
  %q, %s, %h1, %st = fp8.quantize %x history %h0 granularity <per_tensor>
      scaling <delayed, history = 1024, margin = 1>
      : tensor<?x?xbf16>, tensor<1024xf32>
      -> tensor<?x?xf8E5M2>, tensor<1x1xf32>, tensor<1024xf32> stats tensor<3xf32>
  %q2, %s2, %h2 = fp8.quantize %x history %h1 granularity <per_tensor>
      scaling <delayed, history = 1024, interval = 5, algo = most_recent>
      : tensor<?x?xbf16>, tensor<1024xf32>
      -> tensor<?x?xf8E4M3FN>, tensor<1x1xf32>, tensor<1024xf32>
  return
}

// Sizes near INT64_MAX: the ceil-div does not overflow.
// CHECK-LABEL: func.func @quantize_huge
// CHECK: tensor<9223372036854775807x72057594037927936xf32>
func.func @quantize_huge(%x: tensor<9223372036854775807x9223372036854775807xbf16>) {
  %q, %s = fp8.quantize %x granularity <1x128>
      : tensor<9223372036854775807x9223372036854775807xbf16>
      -> tensor<9223372036854775807x9223372036854775807xf8E4M3FN>,
         tensor<9223372036854775807x72057594037927936xf32>
  return
}

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: (%[[Q:arg[0-9]+]]: tensor<4096x7168xf8E4M3FN>, %[[S:arg[0-9]+]]: tensor<32x56xf32>
// CHECK: fp8.dequantize %[[Q]] scale %[[S]] granularity <128x128> : tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<4096x7168xbf16>
// CHECK: fp8.dequantize %{{.+}} scale %{{.+}} granularity <1x32:ue8m0> : tensor<?x8x64xf8E5M2>, tensor<?x8x2xf8E8M0FNU> -> tensor<?x8x64xf32>
func.func @dequantize(%q: tensor<4096x7168xf8E4M3FN>, %s: tensor<32x56xf32>,
                      %q3: tensor<?x8x64xf8E5M2>, %s3: tensor<?x8x2xf8E8M0FNU>) {
  %w = fp8.dequantize %q scale %s granularity <128x128>
      : tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<4096x7168xbf16>
  %x = fp8.dequantize %q3 scale %s3 granularity <mx>
      : tensor<?x8x64xf8E5M2>, tensor<?x8x2xf8E8M0FNU> -> tensor<?x8x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul
//===----------------------------------------------------------------------===//

// DeepSeek-V3: 1x128 activations, 128x128 weights, promotion every 128.
// CHECK-LABEL: func.func @matmul_deepseek
// CHECK-SAME: (%[[A:arg[0-9]+]]: tensor<?x7168xf8E4M3FN>, %[[AS:arg[0-9]+]]: tensor<?x56xf32>, %[[B:arg[0-9]+]]: tensor<4096x7168xf8E4M3FN>, %[[BS:arg[0-9]+]]: tensor<32x56xf32>)
// CHECK: %[[D:.+]] = fp8.scaled_matmul %[[A]] scale %[[AS]] granularity <1x128>, %[[B]] scale %[[BS]] granularity <128x128> promotion_interval 128 : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<?x4096xbf16>
// CHECK: return %[[D]]
func.func @matmul_deepseek(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                           %b: tensor<4096x7168xf8E4M3FN>, %bs: tensor<32x56xf32>)
    -> tensor<?x4096xbf16> {
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                         %b scale %bs granularity <128x128>
         promotion_interval 128
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
        tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<?x4096xbf16>
  return %d : tensor<?x4096xbf16>
}

// Per-tensor scales, tensor-core accumulation only, E5M2 x E4M3, f32 out.
// CHECK-LABEL: func.func @matmul_per_tensor
// CHECK: fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <per_tensor>, %{{.+}} scale %{{.+}} granularity <per_tensor> : tensor<512x512xf8E5M2>, tensor<1x1xf32>, tensor<512x512xf8E4M3FN>, tensor<1x1xf32> -> tensor<512x512xf32>
func.func @matmul_per_tensor(%a: tensor<512x512xf8E5M2>, %as: tensor<1x1xf32>,
                             %b: tensor<512x512xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>,
                         %b scale %bs granularity <per_tensor>
      : tensor<512x512xf8E5M2>, tensor<1x1xf32>,
        tensor<512x512xf8E4M3FN>, tensor<1x1xf32> -> tensor<512x512xf32>
  return
}

// MX on both operands (no promotion needed), B stored [K, N], C accumulated.
// CHECK-LABEL: func.func @matmul_mx
// CHECK-SAME: %[[C:arg[0-9]+]]: tensor<128x256xf32>
// CHECK: fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <1x32:ue8m0>, %{{.+}} scale %{{.+}} granularity <32x1:ue8m0> layout mn_major acc %[[C]] : tensor<128x4096xf8E4M3FN>, tensor<128x128xf8E8M0FNU>, tensor<4096x256xf8E5M2>, tensor<128x256xf8E8M0FNU> -> tensor<128x256xf32>
func.func @matmul_mx(%a: tensor<128x4096xf8E4M3FN>, %as: tensor<128x128xf8E8M0FNU>,
                     %b: tensor<4096x256xf8E5M2>, %bs: tensor<128x256xf8E8M0FNU>,
                     %c: tensor<128x256xf32>) {
  %d = fp8.scaled_matmul %a scale %as granularity <mx>,
                         %b scale %bs granularity <32x1:ue8m0> layout mn_major
         acc %c
      : tensor<128x4096xf8E4M3FN>, tensor<128x128xf8E8M0FNU>,
        tensor<4096x256xf8E5M2>, tensor<128x256xf8E8M0FNU> -> tensor<128x256xf32>
  return
}

// A stored [K, M] with its 1x128 tiles transposed to 128x1; per-channel
// f32_pow2 weights; a partial last K block; everything dynamic but N.
// CHECK-LABEL: func.func @matmul_mn_major
// CHECK: fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <128x1> layout mn_major, %{{.+}} scale %{{.+}} granularity <per_row:f32_pow2> promotion_interval 64 : tensor<4000x?xf8E4M3FN>, tensor<32x?xf32>, tensor<256x4000xf8E4M3FN>, tensor<256x1xf32> -> tensor<?x256xbf16>
// CHECK: fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <1x128>, %{{.+}} scale %{{.+}} granularity <128x128> layout mn_major promotion_interval 128 : tensor<?x?xf8E4M3FN>, tensor<?x?xf32>, tensor<?x256xf8E4M3FN>, tensor<?x2xf32> -> tensor<?x256xbf16>
func.func @matmul_mn_major(%a: tensor<4000x?xf8E4M3FN>, %as: tensor<32x?xf32>,
                           %b: tensor<256x4000xf8E4M3FN>, %bs: tensor<256x1xf32>,
                           %a2: tensor<?x?xf8E4M3FN>, %as2: tensor<?x?xf32>,
                           %b2: tensor<?x256xf8E4M3FN>, %bs2: tensor<?x2xf32>) {
  %d = fp8.scaled_matmul %a scale %as granularity <128x1> layout mn_major,
                         %b scale %bs granularity <per_row:f32_pow2>
         promotion_interval 64
      : tensor<4000x?xf8E4M3FN>, tensor<32x?xf32>,
        tensor<256x4000xf8E4M3FN>, tensor<256x1xf32> -> tensor<?x256xbf16>
  %d2 = fp8.scaled_matmul %a2 scale %as2 granularity <1x128> layout k_major,
                          %b2 scale %bs2 granularity <128x128> layout mn_major
         promotion_interval 128
      : tensor<?x?xf8E4M3FN>, tensor<?x?xf32>,
        tensor<?x256xf8E4M3FN>, tensor<?x2xf32> -> tensor<?x256xbf16>
  return
}

//===----------------------------------------------------------------------===//
// fp8.grouped_scaled_matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @grouped_contiguous
// CHECK-SAME: (%[[OFF:arg[0-9]+]]: tensor<9xi32>
// CHECK: fp8.grouped_scaled_matmul contiguous(%[[OFF]] : tensor<9xi32>) %{{.+}} scale %{{.+}} granularity <1x128>, %{{.+}} scale %{{.+}} granularity <128x128> promotion_interval 128 : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>, tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32> -> tensor<?x4096xbf16>
// CHECK: fp8.grouped_scaled_matmul contiguous(%{{.+}} : tensor<?xi32>) %{{.+}} scale %{{.+}} granularity <per_row>, %{{.+}} scale %{{.+}} granularity <per_column> layout mn_major : tensor<?x7168xf8E5M2>, tensor<?x1xf32>, tensor<?x7168x4096xf8E4M3FN>, tensor<?x1x4096xf32> -> tensor<?x4096xf32>
func.func @grouped_contiguous(%off: tensor<9xi32>, %a: tensor<?x7168xf8E4M3FN>,
                              %as: tensor<?x56xf32>,
                              %b: tensor<8x4096x7168xf8E4M3FN>,
                              %bs: tensor<8x32x56xf32>,
                              %off2: tensor<?xi32>, %a2: tensor<?x7168xf8E5M2>,
                              %as2: tensor<?x1xf32>,
                              %b2: tensor<?x7168x4096xf8E4M3FN>,
                              %bs2: tensor<?x1x4096xf32>) {
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<9xi32>)
         %a scale %as granularity <1x128>,
         %b scale %bs granularity <128x128>
         promotion_interval 128
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
        tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32> -> tensor<?x4096xbf16>
  %d2 = fp8.grouped_scaled_matmul contiguous(%off2 : tensor<?xi32>)
         %a2 scale %as2 granularity <per_row>,
         %b2 scale %bs2 granularity <per_column> layout mn_major
      : tensor<?x7168xf8E5M2>, tensor<?x1xf32>,
        tensor<?x7168x4096xf8E4M3FN>, tensor<?x1x4096xf32> -> tensor<?x4096xf32>
  return
}

// CHECK-LABEL: func.func @grouped_masked
// CHECK-SAME: (%[[VR:arg[0-9]+]]: tensor<8xi32>
// CHECK: fp8.grouped_scaled_matmul masked(%[[VR]] : tensor<8xi32>) %{{.+}} scale %{{.+}} granularity <1x128>, %{{.+}} scale %{{.+}} granularity <128x128> promotion_interval 128 : tensor<8x256x7168xf8E4M3FN>, tensor<8x256x56xf32>, tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32> -> tensor<8x256x4096xbf16>
func.func @grouped_masked(%vr: tensor<8xi32>, %a: tensor<8x256x7168xf8E4M3FN>,
                          %as: tensor<8x256x56xf32>,
                          %b: tensor<8x4096x7168xf8E4M3FN>,
                          %bs: tensor<8x32x56xf32>) {
  %d = fp8.grouped_scaled_matmul masked(%vr : tensor<8xi32>)
         %a scale %as granularity <1x128>,
         %b scale %bs granularity <128x128>
         promotion_interval 128
      : tensor<8x256x7168xf8E4M3FN>, tensor<8x256x56xf32>,
        tensor<8x4096x7168xf8E4M3FN>, tensor<8x32x56xf32>
        -> tensor<8x256x4096xbf16>
  return
}

// The experts' weight gradients: groups along K (the tokens), A and B one
// matrix each, D one result per group.
// CHECK-LABEL: func.func @grouped_along_k
// CHECK-SAME: (%[[OFF:arg[0-9]+]]: tensor<9xi32>
// CHECK: fp8.grouped_scaled_matmul along_k(%[[OFF]] : tensor<9xi32>) %{{.+}} scale %{{.+}} granularity <1x128>, %{{.+}} scale %{{.+}} granularity <1x128> promotion_interval 128 : tensor<4096x?xf8E5M2>, tensor<4096x?xf32>, tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
// CHECK: fp8.grouped_scaled_matmul along_k(%[[OFF]] : tensor<9xi32>) %{{.+}} scale %{{.+}} granularity <128x1> layout mn_major, %{{.+}} scale %{{.+}} granularity <per_tensor> layout mn_major promotion_interval 128 : tensor<?x4096xf8E5M2>, tensor<?x4096xf32>, tensor<?x7168xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x4096x7168xbf16>
func.func @grouped_along_k(%off: tensor<9xi32>, %a: tensor<4096x?xf8E5M2>,
                           %as: tensor<4096x?xf32>,
                           %b: tensor<7168x?xf8E4M3FN>,
                           %bs: tensor<7168x?xf32>,
                           %at: tensor<?x4096xf8E5M2>, %ats: tensor<?x4096xf32>,
                           %bt: tensor<?x7168xf8E4M3FN>, %bts: tensor<1x1xf32>) {
  %d = fp8.grouped_scaled_matmul along_k(%off : tensor<9xi32>)
         %a scale %as granularity <1x128>,
         %b scale %bs granularity <1x128>
         promotion_interval 128
      : tensor<4096x?xf8E5M2>, tensor<4096x?xf32>,
        tensor<7168x?xf8E4M3FN>, tensor<7168x?xf32> -> tensor<8x4096x7168xf32>
  %e = fp8.grouped_scaled_matmul along_k(%off : tensor<9xi32>)
         %at scale %ats granularity <128x1> layout mn_major,
         %bt scale %bts granularity <per_tensor> layout mn_major
         promotion_interval 128
      : tensor<?x4096xf8E5M2>, tensor<?x4096xf32>,
        tensor<?x7168xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x4096x7168xbf16>
  return
}

//===----------------------------------------------------------------------===//
// fp8.transpose
//===----------------------------------------------------------------------===//

// A [K, N] weight with 128x128 blocks made K-major; a stack of per-column
// scaled matrices with a dynamic size.
// CHECK-LABEL: func.func @transpose
// CHECK: fp8.transpose %{{.+}} scale %{{.+}} granularity <128x128> : tensor<7168x4096xf8E4M3FN>, tensor<56x32xf32> -> tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32>
// CHECK: fp8.transpose %{{.+}} scale %{{.+}} granularity <per_column> : tensor<4x?x256xf8E5M2>, tensor<4x1x256xf32> -> tensor<4x256x?xf8E5M2>, tensor<4x256x1xf32>
func.func @transpose(%w: tensor<7168x4096xf8E4M3FN>, %ws: tensor<56x32xf32>,
                     %g: tensor<4x?x256xf8E5M2>, %gs: tensor<4x1x256xf32>) {
  %t, %ts = fp8.transpose %w scale %ws granularity <128x128>
      : tensor<7168x4096xf8E4M3FN>, tensor<56x32xf32> -> tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32>
  %u, %us = fp8.transpose %g scale %gs granularity <per_column>
      : tensor<4x?x256xf8E5M2>, tensor<4x1x256xf32> -> tensor<4x256x?xf8E5M2>, tensor<4x256x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Annotations (the pipeline's discardable attributes)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @annotated
// CHECK-SAME: {fp8.weight}
// CHECK-SAME: {fp8.amax_history}
// CHECK-SAME: attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>}
func.func @annotated(%w: tensor<8x8xbf16> {fp8.weight}, %h: tensor<16xf32> {fp8.amax_history})
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  return
}

//===----------------------------------------------------------------------===//
// MoE routing
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @moe
// CHECK: fp8.moe_permute %{{.*}}, %{{.*}} experts 4 align 2 : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xbf16>, tensor<5xi32>, tensor<?x2xi32>
// CHECK: fp8.grouped_matmul contiguous(%{{.*}} : tensor<5xi32>) %{{.*}}, %{{.*}} : tensor<?x64xbf16>, tensor<4x32x64xbf16> -> tensor<?x32xbf16>
// CHECK: fp8.grouped_matmul masked(%{{.*}} : tensor<4xi32>) %{{.*}}, %{{.*}} : tensor<4x?x64xbf16>, tensor<4x32x64xbf16> -> tensor<4x?x32xf32>
// CHECK: fp8.moe_unpermute %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x2xf32> -> tensor<?x64xbf16>
// CHECK: fp8.grouped_matmul along_k(%{{.*}} : tensor<5xi32>) %{{.*}}, %{{.*}} : tensor<?x64xbf16>, tensor<?x32xbf16> -> tensor<4x64x32xf32>
func.func @moe(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>, %w: tensor<4x32x64xbf16>,
               %v: tensor<4xi32>, %s: tensor<4x?x64xbf16>, %y: tensor<?x64xbf16>,
               %rw: tensor<?x2xf32>) {
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4 align 2
      : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xbf16>, tensor<5xi32>, tensor<?x2xi32>
  %d = fp8.grouped_matmul contiguous(%o : tensor<5xi32>) %r, %w
      : tensor<?x64xbf16>, tensor<4x32x64xbf16> -> tensor<?x32xbf16>
  %m = fp8.grouped_matmul masked(%v : tensor<4xi32>) %s, %w
      : tensor<4x?x64xbf16>, tensor<4x32x64xbf16> -> tensor<4x?x32xf32>
  %u = fp8.moe_unpermute %y, %p, %rw
      : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x2xf32> -> tensor<?x64xbf16>
  %dw = fp8.grouped_matmul along_k(%o : tensor<5xi32>) %r, %d
      : tensor<?x64xbf16>, tensor<?x32xbf16> -> tensor<4x64x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// fp8.interleave_rows, fp8.deinterleave_cols
//===----------------------------------------------------------------------===//

// A gate and an up projection's weights in 128-row blocks, and one GEMM's
// result split again.
// CHECK-LABEL: func.func @interleave
// CHECK: fp8.interleave_rows %{{.*}}, %{{.*}} block 128 : tensor<256x64xbf16> -> tensor<512x64xbf16>
// CHECK: fp8.deinterleave_cols %{{.*}} block 128 : tensor<?x512xbf16> -> tensor<?x256xbf16>
// CHECK: fp8.interleave_rows %{{.*}}, %{{.*}} block 3 : tensor<?x7xf32> -> tensor<?x7xf32>
func.func @interleave(%g: tensor<256x64xbf16>, %u: tensor<256x64xbf16>,
                      %d: tensor<?x512xbf16>, %x: tensor<?x7xf32>) {
  %w = fp8.interleave_rows %g, %u block 128
      : tensor<256x64xbf16> -> tensor<512x64xbf16>
  %a, %b = fp8.deinterleave_cols %d block 128
      : tensor<?x512xbf16> -> tensor<?x256xbf16>
  %y = fp8.interleave_rows %x, %x block 3 : tensor<?x7xf32> -> tensor<?x7xf32>
  return
}
