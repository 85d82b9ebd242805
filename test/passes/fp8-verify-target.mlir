// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-verify-target=arch=sm_90a | FileCheck %s
// sm_100a's rules: fp8-verify-target-sm100a.mlir.
// RUN: not fp8-opt %s --fp8-verify-target=arch=sm_90 2>&1 | FileCheck %s --check-prefix=BADARCH
// RUN: not fp8-opt %s --fp8-verify-target=arch=h100 2>&1 | FileCheck %s --check-prefix=BADARCH2

// BADARCH: error: expected arch sm_90a or sm_100a, found 'sm_90' (the arch-specific features FP8 needs, wgmma and tcgen05, exist only for the 'a' targets: sm_90a)
// BADARCH2: error: expected arch sm_90a or sm_100a, found 'h100'{{$}}

// A K-major GEMM is legal as it is; the module records the target.
// CHECK: module attributes {fp8.target = "sm_90a"}
// CHECK-LABEL: func.func @nt
// CHECK-NOT: fp8.transpose
// CHECK: fp8.scaled_matmul
func.func @nt(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
              %b: tensor<512x256xf8E4M3FN>, %bs: tensor<4x2xf32>) -> tensor<?x512xbf16> {
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>, %b scale %bs granularity <128x128>
         promotion_interval 128
      : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<512x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<?x512xbf16>
  return %d : tensor<?x512xbf16>
}

// -----

// B stored [K, N]: transposed in FP8 with its scales (per-column as stored,
// per-row once K-major), and the GEMM reads it K-major.
// CHECK-LABEL: func.func @nn
// CHECK-SAME: %[[B:[^:]+]]: tensor<256x512xf8E4M3FN>, %[[BS:[^:]+]]: tensor<1x512xf32>
// CHECK: %[[T:.+]], %[[TS:.+]] = fp8.transpose %[[B]] scale %[[BS]] granularity <per_column> : tensor<256x512xf8E4M3FN>, tensor<1x512xf32> -> tensor<512x256xf8E4M3FN>, tensor<512x1xf32>
// CHECK: fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <per_row>, %[[T]] scale %[[TS]] granularity <per_row> promotion_interval 128 :
// CHECK-NOT: mn_major
func.func @nn(%a: tensor<?x256xf8E5M2>, %as: tensor<?x1xf32>,
              %b: tensor<256x512xf8E4M3FN>, %bs: tensor<1x512xf32>) -> tensor<?x512xbf16> {
  %d = fp8.scaled_matmul %a scale %as granularity <per_row>, %b scale %bs granularity <per_column> layout mn_major
         promotion_interval 128
      : tensor<?x256xf8E5M2>, tensor<?x1xf32>, tensor<256x512xf8E4M3FN>, tensor<1x512xf32> -> tensor<?x512xbf16>
  return %d : tensor<?x512xbf16>
}

// -----

// A stored [K, M] too (the weight-gradient layout): both transposed.
// CHECK-LABEL: func.func @tn
// CHECK: %[[TA:.+]], %[[TAS:.+]] = fp8.transpose %{{.+}} granularity <128x1> : tensor<256x64xf8E4M3FN>, tensor<2x64xf32> -> tensor<64x256xf8E4M3FN>, tensor<64x2xf32>
// CHECK: %[[TB:.+]], %[[TBS:.+]] = fp8.transpose %{{.+}} granularity <128x128> : tensor<256x128xf8E4M3FN>, tensor<2x1xf32> -> tensor<128x256xf8E4M3FN>, tensor<1x2xf32>
// CHECK: fp8.scaled_matmul %[[TA]] scale %[[TAS]] granularity <1x128>, %[[TB]] scale %[[TBS]] granularity <128x128>
func.func @tn(%a: tensor<256x64xf8E4M3FN>, %as: tensor<2x64xf32>,
              %b: tensor<256x128xf8E4M3FN>, %bs: tensor<2x1xf32>) -> tensor<64x128xf32> {
  %d = fp8.scaled_matmul %a scale %as granularity <128x1> layout mn_major, %b scale %bs granularity <128x128> layout mn_major
         promotion_interval 128
      : tensor<256x64xf8E4M3FN>, tensor<2x64xf32>, tensor<256x128xf8E4M3FN>, tensor<2x1xf32> -> tensor<64x128xf32>
  return %d : tensor<64x128xf32>
}

// -----

func.func @mx(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x8xf8E8M0FNU>,
              %b: tensor<256x256xf8E4M3FN>, %bs: tensor<256x8xf8E8M0FNU>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op uses MX scaling (1x32 blocks with ue8m0 scales along K), which needs sm_100a: Hopper's FP8 wgmma has no block-scaled form (use 1x128 blocks on sm_90a)}}
  %d = fp8.scaled_matmul %a scale %as granularity <mx>, %b scale %bs granularity <mx>
      : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU> -> tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}

// -----

func.func @k_alignment(%a: tensor<64x200xf8E4M3FN>, %as: tensor<1x1xf32>,
                       %b: tensor<64x200xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected K (200) to be a multiple of 16 on sm_90a: TMA moves FP8 rows of 16-byte multiples}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<64x200xf8E4M3FN>, tensor<1x1xf32>, tensor<64x200xf8E4M3FN>, tensor<1x1xf32> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}

// -----

func.func @k_block_64(%a: tensor<64x256xf8E4M3FN>, %as: tensor<64x4xf32>,
                      %b: tensor<64x256xf8E4M3FN>, %bs: tensor<1x4xf32>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected the K block of A's scales (64) to be a multiple of 128 on sm_90a (scales are applied per 128-wide k-block); MX 1x32 scaling needs sm_100a}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x64>, %b scale %bs granularity <wholex64>
         promotion_interval 64
      : tensor<64x256xf8E4M3FN>, tensor<64x4xf32>, tensor<64x256xf8E4M3FN>, tensor<1x4xf32> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}

// -----

func.func @b_outer_block(%a: tensor<64x256xf8E4M3FN>, %as: tensor<64x2xf32>,
                         %b: tensor<64x256xf8E4M3FN>, %bs: tensor<16x2xf32>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expected B's scale block along N (4) to be 1, whole, or a multiple of 8 on sm_90a}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>, %b scale %bs granularity <4x128>
         promotion_interval 128
      : tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<64x256xf8E4M3FN>, tensor<16x2xf32> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}

// -----

// Interval 96 with K-constant scales runs as stated (promotion at run-time
// steps); with 1x128 scales it cannot divide their K block.
// CHECK-LABEL: func.func @interval_96
// CHECK: promotion_interval 96
func.func @interval_96(%a: tensor<64x256xf8E4M3FN>, %as: tensor<64x1xf32>,
                       %b: tensor<64x256xf8E4M3FN>, %bs: tensor<64x1xf32>) -> tensor<64x64xbf16> {
  %d = fp8.scaled_matmul %a scale %as granularity <per_row>, %b scale %bs granularity <per_row>
         promotion_interval 96
      : tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<64x256xf8E4M3FN>, tensor<64x1xf32> -> tensor<64x64xbf16>
  return %d : tensor<64x64xbf16>
}

// -----

// A K-grouped GEMM (the experts' weight gradients) of token-major operands:
// both are transposed in FP8, their 128x1 scales becoming 1x128.
// CHECK-LABEL: func.func @along_k_transposed
// CHECK: %[[A:.+]], %[[AS:.+]] = fp8.transpose %arg1 scale %arg2 granularity <128x1> : tensor<?x128xf8E5M2>, tensor<?x128xf32> -> tensor<128x?xf8E5M2>, tensor<128x?xf32>
// CHECK: %[[B:.+]], %[[BS:.+]] = fp8.transpose %arg3 scale %arg4 granularity <128x1> : tensor<?x256xf8E4M3FN>, tensor<?x256xf32> -> tensor<256x?xf8E4M3FN>, tensor<256x?xf32>
// CHECK: fp8.grouped_scaled_matmul along_k(%arg0 : tensor<5xi32>) %[[A]] scale %[[AS]] granularity <1x128>, %[[B]] scale %[[BS]] granularity <1x128> promotion_interval 128
func.func @along_k_transposed(%offsets: tensor<5xi32>, %a: tensor<?x128xf8E5M2>, %as: tensor<?x128xf32>,
                              %b: tensor<?x256xf8E4M3FN>, %bs: tensor<?x256xf32>) -> tensor<4x128x256xf32> {
  %d = fp8.grouped_scaled_matmul along_k(%offsets : tensor<5xi32>)
         %a scale %as granularity <128x1> layout mn_major,
         %b scale %bs granularity <128x1> layout mn_major promotion_interval 128
      : tensor<?x128xf8E5M2>, tensor<?x128xf32>, tensor<?x256xf8E4M3FN>, tensor<?x256xf32> -> tensor<4x128x256xf32>
  return %d : tensor<4x128x256xf32>
}
