// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-verify-target=arch=sm_100a | FileCheck %s
//
// sm_100a's recipe rules, checked by --fp8-verify-target: what it accepts
// the Blackwell generator implements as stated (test/codegen/
// RecipeSpaceTest.cpp enumerates the whole space); the rest is refused here
// with what the target supports.

// MX on both operands: legal as it is.
// CHECK: module attributes {fp8.target = "sm_100a"}
// CHECK-LABEL: func.func @mx
// CHECK: fp8.scaled_matmul {{.*}} granularity <1x32:ue8m0>
func.func @mx(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x8xf8E8M0FNU>,
              %b: tensor<256x256xf8E4M3FN>, %bs: tensor<256x8xf8E8M0FNU>) -> tensor<128x256xbf16> {
  %d = fp8.scaled_matmul %a scale %as granularity <mx>, %b scale %bs granularity <mx>
      : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU> -> tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}

// -----

// The DeepSeek recipe with power-of-two scales, promotion every 32 (each
// tcgen05.mma step accumulates in FP32): B stored [K, N] is transposed.
// CHECK-LABEL: func.func @deepseek_pow2_nn
// CHECK: fp8.transpose
// CHECK: fp8.scaled_matmul {{.*}} granularity <1x128:f32_pow2>, {{.*}} granularity <128x128:f32_pow2> promotion_interval 32
func.func @deepseek_pow2_nn(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                            %b: tensor<256x512xf8E4M3FN>, %bs: tensor<2x4xf32>) -> tensor<?x512xbf16> {
  %d = fp8.scaled_matmul %a scale %as granularity <1x128:f32_pow2>, %b scale %bs granularity <128x128:f32_pow2> layout mn_major
         promotion_interval 32
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x512xf8E4M3FN>, tensor<2x4xf32> -> tensor<?x512xbf16>
  return %d : tensor<?x512xbf16>
}

// -----

func.func @f32_scales_along_k(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                              %b: tensor<512x256xf8E4M3FN>, %bs: tensor<4x2xf32>) -> tensor<?x512xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected power-of-two scales (f32_pow2 or ue8m0) for A's 1x128 granularity on sm_100a, found f32}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>, %b scale %bs granularity <128x128>
         promotion_interval 32
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<512x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<?x512xbf16>
  return %d : tensor<?x512xbf16>
}

// -----

func.func @interval_128(%a: tensor<64x256xf8E4M3FN>, %as: tensor<1x1xf32>,
                        %b: tensor<64x256xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected promotion interval 32 (or 0) on sm_100a, found 128}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
         promotion_interval 128
      : tensor<64x256xf8E4M3FN>, tensor<1x1xf32>, tensor<64x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}

// -----

func.func @k_alignment(%a: tensor<64x200xf8E4M3FN>, %as: tensor<1x1xf32>,
                       %b: tensor<64x200xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected K (200) to be a multiple of 16 on sm_100a: TMA moves FP8 rows of 16-byte multiples}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<64x200xf8E4M3FN>, tensor<1x1xf32>, tensor<64x200xf8E4M3FN>, tensor<1x1xf32> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}
