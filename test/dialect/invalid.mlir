// One case per diagnostic of the fp8 dialect (a message counts once whatever
// the values in it): its attribute parsers and verifiers, its ops' type
// constraints and verifiers, and every rule of core/RecipeRules.h that IR
// can reach (test/codegen/RecipeRulesTest.cpp has them all).
// RUN: fp8-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expected a granularity (per_tensor, per_row, per_column, mx or <rows>x<cols>), found '0x128'}}
func.func @granularity_zero_block() attributes {fp8.g = #fp8.granularity<0x128>}

// -----

// expected-error @+1 {{expected a scale format (f32, f32_pow2, ue8m0) after ':' in granularity '1x128:f16', found 'f16'}}
func.func @granularity_scale_format() attributes {fp8.g = #fp8.granularity<1x128:f16>}

// -----

// expected-error @+1 {{granularity 'mx' implies ue8m0 scales; found 'mx:ue8m0'}}
func.func @granularity_mx_format() attributes {fp8.g = #fp8.granularity<mx:ue8m0>}

// -----

// expected-error @+1 {{expected no delayed-scaling parameters (history, interval, margin, algo) with current scaling}}
func.func @scaling_current_params() attributes {fp8.s = #fp8.scaling<current, history = 32>}

// -----

// expected-error @+1 {{expected the amax history length to be in [1, 1048576], found 0}}
func.func @scaling_history() attributes {fp8.s = #fp8.scaling<delayed, history = 0>}

// -----

// expected-error @+1 {{expected the amax update interval to be in [1, 2147483647], found -1}}
func.func @scaling_interval() attributes {fp8.s = #fp8.scaling<delayed, interval = -1>}

// -----

// expected-error @+1 {{expected the margin to be in [0, 127] (a headroom of 2^margin on the amax), found 200}}
func.func @scaling_margin() attributes {fp8.s = #fp8.scaling<delayed, margin = 200>}

// -----

// expected-error @+1 {{expected an FP8 format (f8E4M3FN or f8E5M2), found 'bf16'}}
func.func @quant_format() attributes {fp8.q = #fp8.quant<bf16, <1x128>>}

// -----

// expected-error @+1 {{expected out to be bf16 or f32, found 'f16'}}
func.func @recipe_out() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <per_row>>, out = f16>}

// -----

// The recipe's granularities are logical ([M, K], [N, K]): mx is along K.
// expected-error @+1 {{expected B to have MX granularity like A (one ue8m0 scale per 1x32 elements along K), found 128x128 (k_major)}}
func.func @recipe_mx_pair() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <mx>>, b = <f8E4M3FN, <128x128>>>}

//===----------------------------------------------------------------------===//
// fp8.quantize
//===----------------------------------------------------------------------===//

// -----

func.func @quantize_output_type(%x: tensor<128x128xbf16>) {
  // expected-error @+1 {{result #0 must be 2D/3D tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<128x128xbf16>'}}
  %q, %s = fp8.quantize %x granularity <per_tensor>
      : tensor<128x128xbf16> -> tensor<128x128xbf16>, tensor<1x1xf32>
  return
}

// -----

func.func @quantize_rank(%x: tensor<128xbf16>) {
  // expected-error @+1 {{operand #0 must be 2D/3D tensor of bfloat16 type or 16-bit float or 32-bit float values, but got 'tensor<128xbf16>'}}
  %q, %s = fp8.quantize %x granularity <per_tensor>
      : tensor<128xbf16> -> tensor<128xf8E4M3FN>, tensor<1xf32>
  return
}

// -----

func.func @quantize_shapes(%x: tensor<128x128xbf16>) {
  // expected-error @+1 {{failed to verify that all of {input, output} have same shape}}
  %q, %s = fp8.quantize %x granularity <per_tensor>
      : tensor<128x128xbf16> -> tensor<128x64xf8E4M3FN>, tensor<1x1xf32>
  return
}

// -----

func.func @quantize_scale_type(%x: tensor<128x128xbf16>) {
  // expected-error @+1 {{result #1 must be 2D/3D tensor of 32-bit float or f8E8M0FNU type values, but got 'tensor<1x1xf16>'}}
  %q, %s = fp8.quantize %x granularity <per_tensor>
      : tensor<128x128xbf16> -> tensor<128x128xf8E4M3FN>, tensor<1x1xf16>
  return
}

// -----

// Dynamic sizes skip only their own comparison: the column count is checked.
func.func @quantize_scale_shape(%x: tensor<?x7168xbf16>) {
  // expected-error @+1 {{expected the scale of the input to have shape [?, 56] for a [?, 7168] operand with 1x128 granularity, found [?, 28]}}
  %q, %s = fp8.quantize %x granularity <1x128>
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x28xf32>
  return
}

// -----

func.func @quantize_scale_rank(%x: tensor<8x128x128xbf16>) {
  // expected-error @+1 {{expected the scale of the input to have rank 3 (the input's), found 2}}
  %q, %s = fp8.quantize %x granularity <per_tensor>
      : tensor<8x128x128xbf16> -> tensor<8x128x128xf8E4M3FN>, tensor<1x1xf32>
  return
}

// -----

func.func @quantize_delayed_granularity(%x: tensor<128x128xbf16>, %h: tensor<16xf32>) {
  // expected-error @+1 {{expected per_tensor granularity with delayed scaling (one amax history per tensor), found 1x128}}
  %q, %s, %h1 = fp8.quantize %x history %h granularity <1x128> scaling <delayed>
      : tensor<128x128xbf16>, tensor<16xf32>
      -> tensor<128x128xf8E4M3FN>, tensor<128x1xf32>, tensor<16xf32>
  return
}

// -----

func.func @quantize_delayed_no_history(%x: tensor<128x128xbf16>) {
  // expected-error @+1 {{expected an amax history operand with delayed scaling}}
  %q, %s = fp8.quantize %x granularity <per_tensor> scaling <delayed>
      : tensor<128x128xbf16> -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>
  return
}

// -----

func.func @quantize_current_history(%x: tensor<128x128xbf16>, %h: tensor<16xf32>) {
  // expected-error @+1 {{expected no amax history operand with current scaling}}
  %q, %s, %h1 = fp8.quantize %x history %h granularity <per_tensor>
      : tensor<128x128xbf16>, tensor<16xf32>
      -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>, tensor<16xf32>
  return
}

// -----

func.func @quantize_no_new_history(%x: tensor<128x128xbf16>, %h: tensor<16xf32>) {
  // expected-error @+1 {{expected a new_history result for the amax history operand}}
  %q, %s = fp8.quantize %x history %h granularity <per_tensor> scaling <delayed>
      : tensor<128x128xbf16>, tensor<16xf32>
      -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>
  return
}

// -----

func.func @quantize_stray_new_history(%x: tensor<128x128xbf16>) {
  // expected-error @+1 {{expected no new_history result without an amax history operand}}
  %q, %s, %h1 = fp8.quantize %x granularity <per_tensor>
      : tensor<128x128xbf16>
      -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>, tensor<16xf32>
  return
}

// -----

func.func @quantize_history_length(%x: tensor<128x128xbf16>, %h: tensor<8xf32>) {
  // expected-error @+1 {{expected the amax history to have shape [16] (the history length), found [8]}}
  %q, %s, %h1 = fp8.quantize %x history %h granularity <per_tensor> scaling <delayed>
      : tensor<128x128xbf16>, tensor<8xf32>
      -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>, tensor<8xf32>
  return
}

// -----

func.func @quantize_new_history_type(%x: tensor<128x128xbf16>, %h: tensor<16xf32>) {
  // expected-error @+1 {{expected new_history to have the amax history's type 'tensor<16xf32>', found 'tensor<?xf32>'}}
  %q, %s, %h1 = fp8.quantize %x history %h granularity <per_tensor> scaling <delayed>
      : tensor<128x128xbf16>, tensor<16xf32>
      -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>, tensor<?xf32>
  return
}

// -----

func.func @quantize_history_type(%x: tensor<128x128xbf16>, %h: tensor<16xbf16>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit float values, but got 'tensor<16xbf16>'}}
  %q, %s, %h1 = fp8.quantize %x history %h granularity <per_tensor> scaling <delayed>
      : tensor<128x128xbf16>, tensor<16xbf16>
      -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>, tensor<16xbf16>
  return
}

// -----

func.func @quantize_stats_type(%x: tensor<128x128xbf16>) {
  // expected-error @+1 {{result #2 must be tensor<3xf32> (amax, underflow count, range-collapse count), but got 'tensor<4xf32>'}}
  %q, %s, %st = fp8.quantize %x granularity <per_tensor>
      : tensor<128x128xbf16> -> tensor<128x128xf8E4M3FN>, tensor<1x1xf32>
        stats tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

// -----

func.func @dequantize_scale_element(%q: tensor<128x4096xf8E4M3FN>, %s: tensor<128x128xf32>) {
  // expected-error @+1 {{expected the scale of the input to be ue8m0 (ue8m0 scales), found f32}}
  %x = fp8.dequantize %q scale %s granularity <mx>
      : tensor<128x4096xf8E4M3FN>, tensor<128x128xf32> -> tensor<128x4096xbf16>
  return
}

// -----

func.func @dequantize_result_type(%q: tensor<128x4096xf8E4M3FN>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{result #0 must be 2D/3D tensor of bfloat16 type or 16-bit float or 32-bit float values, but got 'tensor<128x4096xf8E5M2>'}}
  %x = fp8.dequantize %q scale %s granularity <per_tensor>
      : tensor<128x4096xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x4096xf8E5M2>
  return
}

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_input_type(%a: tensor<128x256xbf16>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<128x256xbf16>'}}
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>,
                         %a scale %s granularity <per_tensor>
      : tensor<128x256xbf16>, tensor<1x1xf32>, tensor<128x256xbf16>, tensor<1x1xf32>
        -> tensor<128x128xbf16>
  return
}

// -----

func.func @matmul_result_type(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{custom op 'fp8.scaled_matmul' 'd' must be 2D tensor of bfloat16 type or 32-bit float values, but got 'tensor<128x128xf16>'}}
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>,
                         %a scale %s granularity <per_tensor>
      : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>,
        tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x128xf16>
  return
}

// -----

func.func @matmul_acc_type(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>,
                           %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op failed to verify that C has the result's type}}
  %d = "fp8.scaled_matmul"(%a, %s, %a, %s, %c) <{
      a_granularity = #fp8.granularity<per_tensor>,
      b_granularity = #fp8.granularity<per_tensor>}>
      : (tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>,
         tensor<1x1xf32>, tensor<128x128xf32>) -> tensor<128x128xbf16>
  return
}

// -----

func.func @matmul_k(%a: tensor<128x7168xf8E4M3FN>, %as: tensor<1x1xf32>,
                    %b: tensor<4096x4000xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  // expected-error @+1 {{expected K of B (4000) to equal K of A (7168)}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>,
                         %b scale %bs granularity <per_tensor>
      : tensor<128x7168xf8E4M3FN>, tensor<1x1xf32>,
        tensor<4096x4000xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x4096xbf16>
  return
}

// -----

// A stored [K, M]: its K is dimension 0.
func.func @matmul_m(%a: tensor<7168x128xf8E4M3FN>, %as: tensor<1x1xf32>,
                    %b: tensor<4096x7168xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the result's rows (64) to equal M (128)}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor> layout mn_major,
                         %b scale %bs granularity <per_tensor>
      : tensor<7168x128xf8E4M3FN>, tensor<1x1xf32>,
        tensor<4096x7168xf8E4M3FN>, tensor<1x1xf32> -> tensor<64x4096xbf16>
  return
}

// -----

func.func @matmul_n(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<1x1xf32>,
                    %b: tensor<4096x7168xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the result's columns (4000) to equal N (4096)}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>,
                         %b scale %bs granularity <per_tensor>
      : tensor<?x7168xf8E4M3FN>, tensor<1x1xf32>,
        tensor<4096x7168xf8E4M3FN>, tensor<1x1xf32> -> tensor<?x4000xbf16>
  return
}

// -----

func.func @matmul_b_scale_shape(%a: tensor<?x7168xf8E4M3FN>, %as: tensor<?x56xf32>,
                                %b: tensor<4096x7168xf8E4M3FN>, %bs: tensor<32x28xf32>) {
  // expected-error @+1 {{expected the scale of B to have shape [32, 56] for a [4096, 7168] operand with 128x128 granularity, found [32, 28]}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                         %b scale %bs granularity <128x128>
         promotion_interval 128
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
        tensor<4096x7168xf8E4M3FN>, tensor<32x28xf32> -> tensor<?x4096xbf16>
  return
}

// -----

func.func @matmul_b_scale_element(%a: tensor<128x4096xf8E4M3FN>, %as: tensor<128x128xf8E8M0FNU>,
                                  %b: tensor<256x4096xf8E4M3FN>, %bs: tensor<256x128xf32>) {
  // expected-error @+1 {{expected the scale of B to be ue8m0 (ue8m0 scales), found f32}}
  %d = fp8.scaled_matmul %a scale %as granularity <mx>, %b scale %bs granularity <mx>
      : tensor<128x4096xf8E4M3FN>, tensor<128x128xf8E8M0FNU>,
        tensor<256x4096xf8E4M3FN>, tensor<256x128xf32> -> tensor<128x256xbf16>
  return
}

// -----

// Per-row scales of an MN-major B ([K, N]) change at every K element.
func.func @matmul_k_block_step(%a: tensor<128x4096xf8E4M3FN>, %as: tensor<128x32xf32>,
                               %b: tensor<4096x256xf8E4M3FN>, %bs: tensor<4096x1xf32>) {
  // expected-error @+1 {{expected the K block of B's scales (1) to be a multiple of 32 (the FP8 MMA K step)}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                         %b scale %bs granularity <per_row> layout mn_major
         promotion_interval 128
      : tensor<128x4096xf8E4M3FN>, tensor<128x32xf32>,
        tensor<4096x256xf8E4M3FN>, tensor<4096x1xf32> -> tensor<128x256xbf16>
  return
}

// -----

func.func @matmul_k_blocks_differ(%a: tensor<128x4096xf8E4M3FN>, %as: tensor<128x32xf32>,
                                  %b: tensor<256x4096xf8E4M3FN>, %bs: tensor<2x64xf32>) {
  // expected-error @+1 {{expected the K blocks of A's and B's scales to be equal when both vary along K, found 128 and 64}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                         %b scale %bs granularity <128x64>
         promotion_interval 64
      : tensor<128x4096xf8E4M3FN>, tensor<128x32xf32>,
        tensor<256x4096xf8E4M3FN>, tensor<2x64xf32> -> tensor<128x256xbf16>
  return
}

// -----

func.func @matmul_promotion_multiple(%a: tensor<128x4096xf8E4M3FN>, %s: tensor<1x1xf32>,
                                     %b: tensor<256x4096xf8E4M3FN>) {
  // expected-error @+1 {{expected promotion_interval to be a positive multiple of 32, found 48}}
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>,
                         %b scale %s granularity <per_tensor>
         promotion_interval 48
      : tensor<128x4096xf8E4M3FN>, tensor<1x1xf32>,
        tensor<256x4096xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
  return
}

// -----

func.func @matmul_promotion_required(%a: tensor<128x4096xf8E4M3FN>, %as: tensor<128x32xf32>,
                                     %b: tensor<256x4096xf8E4M3FN>, %bs: tensor<2x32xf32>) {
  // expected-error @+1 {{expected a promotion_interval: the scales of A vary along K (blocks of 128), so partial sums must be promoted to apply them}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                         %b scale %bs granularity <128x128>
      : tensor<128x4096xf8E4M3FN>, tensor<128x32xf32>,
        tensor<256x4096xf8E4M3FN>, tensor<2x32xf32> -> tensor<128x256xbf16>
  return
}

// -----

func.func @matmul_promotion_divides(%a: tensor<128x4096xf8E4M3FN>, %as: tensor<128x32xf32>,
                                    %b: tensor<256x4096xf8E4M3FN>, %bs: tensor<2x32xf32>) {
  // expected-error @+1 {{expected promotion_interval (256) to divide the K block of A's scales (128)}}
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>,
                         %b scale %bs granularity <128x128>
         promotion_interval 256
      : tensor<128x4096xf8E4M3FN>, tensor<128x32xf32>,
        tensor<256x4096xf8E4M3FN>, tensor<2x32xf32> -> tensor<128x256xbf16>
  return
}

// -----

func.func @matmul_missing_granularity(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{'fp8.scaled_matmul' op requires attribute 'b_granularity'}}
  %d = "fp8.scaled_matmul"(%a, %s, %a, %s) <{
      a_granularity = #fp8.granularity<per_tensor>}>
      : (tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>,
         tensor<1x1xf32>) -> tensor<128x128xbf16>
  return
}

//===----------------------------------------------------------------------===//
// fp8.grouped_scaled_matmul
//===----------------------------------------------------------------------===//

// -----

func.func @grouped_b_rank(%off: tensor<9xi32>, %a: tensor<?x7168xf8E4M3FN>, %s: tensor<1x1xf32>,
                          %b: tensor<4096x7168xf8E4M3FN>) {
  // expected-error @+1 {{expected B of a contiguous grouped GEMM to have rank 3, found 2}}
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<9xi32>)
         %a scale %s granularity <per_tensor>, %b scale %s granularity <per_tensor>
      : tensor<?x7168xf8E4M3FN>, tensor<1x1xf32>, tensor<4096x7168xf8E4M3FN>,
        tensor<1x1xf32> -> tensor<?x4096xbf16>
  return
}

// -----

func.func @grouped_a_rank(%off: tensor<9xi32>, %a: tensor<8x?x7168xf8E4M3FN>, %as: tensor<1x1x1xf32>,
                          %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected A of a contiguous grouped GEMM to have rank 2, found 3}}
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<9xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<8x?x7168xf8E4M3FN>, tensor<1x1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<8x?x4096xbf16>
  return
}

// -----

func.func @grouped_d_rank(%vr: tensor<8xi32>, %a: tensor<8x256x7168xf8E4M3FN>, %as: tensor<8x1x1xf32>,
                          %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected the result of a masked grouped GEMM to have rank 3, found 2}}
  %d = fp8.grouped_scaled_matmul masked(%vr : tensor<8xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<8x256x7168xf8E4M3FN>, tensor<8x1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<2048x4096xbf16>
  return
}

// -----

func.func @grouped_offsets_type(%off: tensor<9xi64>, %a: tensor<?x7168xf8E4M3FN>, %as: tensor<1x1xf32>,
                                %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of 32-bit signless integer values, but got 'tensor<9xi64>'}}
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<9xi64>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<?x7168xf8E4M3FN>, tensor<1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<?x4096xbf16>
  return
}

// -----

func.func @grouped_offsets_count(%off: tensor<8xi32>, %a: tensor<?x7168xf8E4M3FN>, %as: tensor<1x1xf32>,
                                 %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected the group offsets to have one element more than there are groups (8), found 8}}
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<8xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<?x7168xf8E4M3FN>, tensor<1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<?x4096xbf16>
  return
}

// -----

func.func @grouped_valid_rows_count(%vr: tensor<4xi32>, %a: tensor<8x256x7168xf8E4M3FN>, %as: tensor<8x1x1xf32>,
                                    %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected the valid-row counts to have one element per group (8), found 4}}
  %d = fp8.grouped_scaled_matmul masked(%vr : tensor<4xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<8x256x7168xf8E4M3FN>, tensor<8x1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<8x256x4096xbf16>
  return
}

// -----

func.func @grouped_a_groups(%vr: tensor<8xi32>, %a: tensor<4x256x7168xf8E4M3FN>, %as: tensor<4x1x1xf32>,
                            %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected the group count of A (4) to equal the group count of B (8)}}
  %d = fp8.grouped_scaled_matmul masked(%vr : tensor<8xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<4x256x7168xf8E4M3FN>, tensor<4x1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<8x256x4096xbf16>
  return
}

// -----

func.func @grouped_d_groups(%vr: tensor<8xi32>, %a: tensor<8x256x7168xf8E4M3FN>, %as: tensor<8x1x1xf32>,
                            %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected the group count of the result (2) to equal the group count of B (8)}}
  %d = fp8.grouped_scaled_matmul masked(%vr : tensor<8xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<8x256x7168xf8E4M3FN>, tensor<8x1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<2x256x4096xbf16>
  return
}

// -----

func.func @grouped_d_rows(%vr: tensor<8xi32>, %a: tensor<8x256x7168xf8E4M3FN>, %as: tensor<8x1x1xf32>,
                          %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected the result's rows (128) to equal A's maxM (256)}}
  %d = fp8.grouped_scaled_matmul masked(%vr : tensor<8xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<8x256x7168xf8E4M3FN>, tensor<8x1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<8x128x4096xbf16>
  return
}

// -----

func.func @along_k_b_rank(%off: tensor<9xi32>, %a: tensor<4096x?xf8E4M3FN>, %as: tensor<1x1xf32>,
                          %b: tensor<8x7168x?xf8E4M3FN>, %bs: tensor<8x1x1xf32>) {
  // expected-error @+1 {{expected B of a K-grouped GEMM to have rank 2, found 3}}
  %d = fp8.grouped_scaled_matmul along_k(%off : tensor<9xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<4096x?xf8E4M3FN>, tensor<1x1xf32>, tensor<8x7168x?xf8E4M3FN>,
        tensor<8x1x1xf32> -> tensor<8x4096x7168xf32>
  return
}

// -----

func.func @along_k_d_rank(%off: tensor<9xi32>, %a: tensor<4096x?xf8E4M3FN>, %as: tensor<1x1xf32>,
                          %b: tensor<7168x?xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the result of a K-grouped GEMM to have rank 3, found 2}}
  %d = fp8.grouped_scaled_matmul along_k(%off : tensor<9xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<4096x?xf8E4M3FN>, tensor<1x1xf32>, tensor<7168x?xf8E4M3FN>,
        tensor<1x1xf32> -> tensor<4096x7168xf32>
  return
}

// -----

func.func @along_k_k_block(%off: tensor<9xi32>, %a: tensor<512x1024xf8E4M3FN>, %as: tensor<512x4xf32>,
                           %b: tensor<256x1024xf8E4M3FN>, %bs: tensor<256x4xf32>) {
  // expected-error @+1 {{expected K blocks of 128 (or scales constant along K) for A of a K-grouped GEMM, whose groups start at multiples of 128, found 256}}
  %d = fp8.grouped_scaled_matmul along_k(%off : tensor<9xi32>)
         %a scale %as granularity <1x256>, %b scale %bs granularity <1x256>
         promotion_interval 256
      : tensor<512x1024xf8E4M3FN>, tensor<512x4xf32>, tensor<256x1024xf8E4M3FN>,
        tensor<256x4xf32> -> tensor<8x512x256xf32>
  return
}

// -----

func.func @along_k_no_groups(%off: tensor<1xi32>, %a: tensor<512x?xf8E4M3FN>, %as: tensor<1x1xf32>,
                             %b: tensor<256x?xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  // expected-error @+1 {{expected at least one group in the result [G, M, N], found 0}}
  %d = fp8.grouped_scaled_matmul along_k(%off : tensor<1xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<512x?xf8E4M3FN>, tensor<1x1xf32>, tensor<256x?xf8E4M3FN>,
        tensor<1x1xf32> -> tensor<0x512x256xf32>
  return
}

// -----

// B's scales keep the group dimension.
func.func @grouped_b_scale_rank(%off: tensor<9xi32>, %a: tensor<?x7168xf8E4M3FN>, %as: tensor<1x1xf32>,
                                %b: tensor<8x4096x7168xf8E4M3FN>, %bs: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the scale of B to have rank 3 (B's), found 2}}
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<9xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<?x7168xf8E4M3FN>, tensor<1x1xf32>, tensor<8x4096x7168xf8E4M3FN>,
        tensor<1x1xf32> -> tensor<?x4096xbf16>
  return
}

//===----------------------------------------------------------------------===//
// fp8.transpose
//===----------------------------------------------------------------------===//

// -----

func.func @transpose_element_type(%x: tensor<8x16xf8E4M3FN>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the output to have the input's element type 'f8E4M3FN', found 'f8E5M2'}}
  %t, %ts = fp8.transpose %x scale %s granularity <per_tensor>
      : tensor<8x16xf8E4M3FN>, tensor<1x1xf32> -> tensor<16x8xf8E5M2>, tensor<1x1xf32>
  return
}

// -----

func.func @transpose_rank(%x: tensor<8x16xf8E4M3FN>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the output to have the input's rank (2), found 3}}
  %t, %ts = fp8.transpose %x scale %s granularity <per_tensor>
      : tensor<8x16xf8E4M3FN>, tensor<1x1xf32> -> tensor<1x16x8xf8E4M3FN>, tensor<1x1x1xf32>
  return
}

// -----

func.func @transpose_shape(%x: tensor<8x16xf8E4M3FN>, %s: tensor<1x1xf32>) {
  // expected-error @+1 {{expected the output shape [16, 8] (the input's last two dimensions swapped), found [8, 16]}}
  %t, %ts = fp8.transpose %x scale %s granularity <per_tensor>
      : tensor<8x16xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x16xf8E4M3FN>, tensor<1x1xf32>
  return
}

// -----

func.func @transpose_input_scale(%x: tensor<8x256xf8E4M3FN>, %s: tensor<8x1xf32>) {
  // expected-error @+1 {{expected the scale of the input to have shape [8, 2] for a [8, 256] operand with 1x128 granularity, found [8, 1]}}
  %t, %ts = fp8.transpose %x scale %s granularity <1x128>
      : tensor<8x256xf8E4M3FN>, tensor<8x1xf32> -> tensor<256x8xf8E4M3FN>, tensor<2x8xf32>
  return
}

// -----

func.func @transpose_output_scale(%x: tensor<8x256xf8E4M3FN>, %s: tensor<8x2xf32>) {
  // expected-error @+1 {{expected the scale of the output to have shape [2, 8] for a [256, 8] operand with 128x1 granularity, found [8, 2]}}
  %t, %ts = fp8.transpose %x scale %s granularity <1x128>
      : tensor<8x256xf8E4M3FN>, tensor<8x2xf32> -> tensor<256x8xf8E4M3FN>, tensor<8x2xf32>
  return
}

// -----

func.func @transpose_output_scale_type(%x: tensor<8x256xf8E4M3FN>, %s: tensor<8x8xf8E8M0FNU>) {
  // expected-error @+1 {{expected the scale of the output to be ue8m0 (ue8m0 scales), found f32}}
  %t, %ts = fp8.transpose %x scale %s granularity <mx>
      : tensor<8x256xf8E4M3FN>, tensor<8x8xf8E8M0FNU> -> tensor<256x8xf8E4M3FN>, tensor<8x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// Annotations (the pipeline's discardable attributes)
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{expected 'fp8.recipe' to be an #fp8.recipe attribute, found #fp8.granularity<1x128>}}
func.func @recipe_attr() attributes {fp8.recipe = #fp8.granularity<1x128>} {
  return
}

// -----

// expected-error @+1 {{expected 'fp8.target' to be "sm_90a" or "sm_100a", found "sm_90"}}
module attributes {fp8.target = "sm_90"} {
}

// -----

// expected-error @+1 {{expected 'fp8.target' on a module, found it on func.func}}
func.func @target_on_func() attributes {fp8.target = "sm_90a"} {
  return
}

// -----

// expected-error @+1 {{expected 'fp8.weight' on argument 0 to be a unit attribute ({fp8.weight}), found 1 : i64}}
func.func @weight_attr(%w: tensor<8x8xbf16> {fp8.weight = 1}) {
  return
}

// -----

// expected-error @+1 {{expected argument 0 marked 'fp8.amax_history' to be a ranked tensor, found 'f32'}}
func.func @history_type(%h: f32 {fp8.amax_history}) {
  return
}

// -----

// A GEMM spec is read by the plan's reader: its messages, its ranges.
// expected-error @+1 {{expected 'n' in kernel spec to be an integer in [1, 2147483647], found 0}}
func.func @gemm_spec_range() attributes {fp8.s = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor"}, k = 32, n = 0, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>} {
  return
}

// -----

// expected-error @+1 {{expected 'promotion_interval' in kernel spec to be an integer in [0, 2147483647], found -32}}
func.func @gemm_spec_promotion() attributes {fp8.s = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor"}, k = 32, n = 8, out = "bf16", promotion_interval = -32, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>} {
  return
}

// -----

// expected-error @+1 {{expected the GEMM spec as a dictionary ({arch = ..., n = ..., ...}), found [1, 2]}}
func.func @gemm_spec_not_a_dictionary() attributes {fp8.s = #fp8.gemm<[1, 2]>} {
  return
}

// -----

// MoE routing.
func.func @permute_experts(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected 1 <= experts <= 1024, found 0}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 0
      : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xbf16>, tensor<1xi32>, tensor<?x2xi32>
  return
}

// -----

func.func @permute_align(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected 1 <= align <= 1024, found 2048}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4 align 2048
      : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xbf16>, tensor<5xi32>, tensor<?x2xi32>
  return
}

// -----

func.func @permute_tokens(%x: tensor<8x64xbf16>, %ids: tensor<7x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected ids [T, topK] for x [T, H], found 'tensor<7x2xi32>' for 'tensor<8x64xbf16>'}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4
      : tensor<8x64xbf16>, tensor<7x2xi32> -> tensor<?x64xbf16>, tensor<5xi32>, tensor<7x2xi32>
  return
}

// -----

func.func @permute_rows_type(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected rows with x's element type and width, found 'tensor<?x64xf32>' for 'tensor<?x64xbf16>'}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4
      : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xf32>, tensor<5xi32>, tensor<?x2xi32>
  return
}

// -----

func.func @permute_offsets(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected offsets of 5 elements (experts + 1), found 'tensor<4xi32>'}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4
      : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xbf16>, tensor<4xi32>, tensor<?x2xi32>
  return
}

// -----

func.func @permute_positions(%x: tensor<?x64xbf16>, %ids: tensor<?x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected positions of the ids' type 'tensor<?x2xi32>', found 'tensor<?x3xi32>'}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4
      : tensor<?x64xbf16>, tensor<?x2xi32> -> tensor<?x64xbf16>, tensor<5xi32>, tensor<?x3xi32>
  return
}

// -----

func.func @permute_rows(%x: tensor<8x64xbf16>, %ids: tensor<8x2xi32>) {
  // expected-error @+1 {{'fp8.moe_permute' op expected 28 rows (topK * T + experts * (align - 1)), found 16}}
  %r, %o, %p = fp8.moe_permute %x, %ids experts 4 align 4
      : tensor<8x64xbf16>, tensor<8x2xi32> -> tensor<16x64xbf16>, tensor<5xi32>, tensor<8x2xi32>
  return
}

// -----

func.func @grouped_rank(%o: tensor<5xi32>, %a: tensor<4x8x64xbf16>, %b: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected A and D of rank 2 ([R, K], [R, N]) in the contiguous form, found 'tensor<4x8x64xbf16>' and 'tensor<4x8x32xbf16>'}}
  %d = fp8.grouped_matmul contiguous(%o : tensor<5xi32>) %a, %b
      : tensor<4x8x64xbf16>, tensor<4x32x64xbf16> -> tensor<4x8x32xbf16>
  return
}

// -----

func.func @grouped_k(%o: tensor<5xi32>, %a: tensor<?x64xbf16>, %b: tensor<4x32x128xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected A and B [E, N, K] with equal K, found 'tensor<?x64xbf16>' and 'tensor<4x32x128xbf16>'}}
  %d = fp8.grouped_matmul contiguous(%o : tensor<5xi32>) %a, %b
      : tensor<?x64xbf16>, tensor<4x32x128xbf16> -> tensor<?x32xbf16>
  return
}

// -----

func.func @grouped_offsets(%o: tensor<4xi32>, %a: tensor<?x64xbf16>, %b: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected offsets of E + 1 elements for B 'tensor<4x32x64xbf16>', found 'tensor<4xi32>'}}
  %d = fp8.grouped_matmul contiguous(%o : tensor<4xi32>) %a, %b
      : tensor<?x64xbf16>, tensor<4x32x64xbf16> -> tensor<?x32xbf16>
  return
}

// -----

func.func @grouped_valid_rows(%v: tensor<5xi32>, %a: tensor<4x8x64xbf16>, %b: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected valid rows of E elements for B 'tensor<4x32x64xbf16>', found 'tensor<5xi32>'}}
  %d = fp8.grouped_matmul masked(%v : tensor<5xi32>) %a, %b
      : tensor<4x8x64xbf16>, tensor<4x32x64xbf16> -> tensor<4x8x32xbf16>
  return
}

// -----

func.func @grouped_weights_rank(%o: tensor<5xi32>, %a: tensor<?x64xbf16>, %b: tensor<32x64xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected the experts' weights B [E, N, K], found 'tensor<32x64xbf16>'}}
  %d = fp8.grouped_matmul contiguous(%o : tensor<5xi32>) %a, %b
      : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xbf16>
  return
}

// -----

func.func @along_k_ranks(%o: tensor<5xi32>, %a: tensor<4x?x64xbf16>, %b: tensor<?x32xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected A [R, M], B [R, N] and D [E, M, N] in the along_k form, found 'tensor<4x?x64xbf16>', 'tensor<?x32xbf16>' and 'tensor<4x64x32xf32>'}}
  %d = fp8.grouped_matmul along_k(%o : tensor<5xi32>) %a, %b
      : tensor<4x?x64xbf16>, tensor<?x32xbf16> -> tensor<4x64x32xf32>
  return
}

// -----

func.func @along_k_rows(%o: tensor<5xi32>, %a: tensor<256x64xbf16>, %b: tensor<128x32xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected A and B with equal rows (the tokens), found 'tensor<256x64xbf16>' and 'tensor<128x32xbf16>'}}
  %d = fp8.grouped_matmul along_k(%o : tensor<5xi32>) %a, %b
      : tensor<256x64xbf16>, tensor<128x32xbf16> -> tensor<4x64x32xf32>
  return
}

// -----

func.func @along_k_d(%o: tensor<5xi32>, %a: tensor<?x64xbf16>, %b: tensor<?x32xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected D [E, M, N] for A 'tensor<?x64xbf16>' and B 'tensor<?x32xbf16>', found 'tensor<4x32x64xf32>'}}
  %d = fp8.grouped_matmul along_k(%o : tensor<5xi32>) %a, %b
      : tensor<?x64xbf16>, tensor<?x32xbf16> -> tensor<4x32x64xf32>
  return
}

// -----

func.func @along_k_experts(%o: tensor<1xi32>, %a: tensor<?x64xbf16>, %b: tensor<?x32xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected at least one expert in D, found 'tensor<0x64x32xf32>'}}
  %d = fp8.grouped_matmul along_k(%o : tensor<1xi32>) %a, %b
      : tensor<?x64xbf16>, tensor<?x32xbf16> -> tensor<0x64x32xf32>
  return
}

// -----

func.func @along_k_offsets(%o: tensor<4xi32>, %a: tensor<?x64xbf16>, %b: tensor<?x32xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected offsets of E + 1 elements for D 'tensor<4x64x32xf32>', found 'tensor<4xi32>'}}
  %d = fp8.grouped_matmul along_k(%o : tensor<4xi32>) %a, %b
      : tensor<?x64xbf16>, tensor<?x32xbf16> -> tensor<4x64x32xf32>
  return
}

// -----

func.func @grouped_d(%v: tensor<4xi32>, %a: tensor<4x8x64xbf16>, %b: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{'fp8.grouped_matmul' op expected D [E, maxM, N] for A 'tensor<4x8x64xbf16>' and B 'tensor<4x32x64xbf16>', found 'tensor<4x8x16xbf16>'}}
  %d = fp8.grouped_matmul masked(%v : tensor<4xi32>) %a, %b
      : tensor<4x8x64xbf16>, tensor<4x32x64xbf16> -> tensor<4x8x16xbf16>
  return
}

// -----

func.func @unpermute_weights(%y: tensor<?x64xbf16>, %p: tensor<?x2xi32>, %w: tensor<?x3xf32>) {
  // expected-error @+1 {{'fp8.moe_unpermute' op expected weights shaped like the positions 'tensor<?x2xi32>', found 'tensor<?x3xf32>'}}
  %o = fp8.moe_unpermute %y, %p, %w
      : tensor<?x64xbf16>, tensor<?x2xi32>, tensor<?x3xf32> -> tensor<?x64xbf16>
  return
}

// -----

func.func @unpermute_out(%y: tensor<?x64xbf16>, %p: tensor<8x2xi32>, %w: tensor<8x2xf32>) {
  // expected-error @+1 {{'fp8.moe_unpermute' op expected out [T, H] for positions 'tensor<8x2xi32>' and y 'tensor<?x64xbf16>', found 'tensor<7x64xbf16>'}}
  %o = fp8.moe_unpermute %y, %p, %w
      : tensor<?x64xbf16>, tensor<8x2xi32>, tensor<8x2xf32> -> tensor<7x64xbf16>
  return
}

// -----

func.func @interleave_rows_block(%g: tensor<200x64xbf16>) {
  // expected-error @+1 {{'fp8.interleave_rows' op expected the rows (200) to be a multiple of the block (128)}}
  %w = fp8.interleave_rows %g, %g block 128 : tensor<200x64xbf16> -> tensor<400x64xbf16>
  return
}

// -----

func.func @interleave_rows_result(%g: tensor<256x64xbf16>) {
  // expected-error @+1 {{'fp8.interleave_rows' op expected a result of twice the rows of 'tensor<256x64xbf16>', found 'tensor<256x64xbf16>'}}
  %w = fp8.interleave_rows %g, %g block 128 : tensor<256x64xbf16> -> tensor<256x64xbf16>
  return
}

// -----

func.func @interleave_rows_type(%g: tensor<256x64xbf16>) {
  // expected-error @+1 {{'fp8.interleave_rows' op expected the result's element type 'bf16', found 'f32'}}
  %w = fp8.interleave_rows %g, %g block 128 : tensor<256x64xbf16> -> tensor<512x64xf32>
  return
}

// -----

func.func @interleave_rows_zero_block(%g: tensor<256x64xbf16>) {
  // expected-error @+1 {{'fp8.interleave_rows' op attribute 'block' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %w = fp8.interleave_rows %g, %g block 0 : tensor<256x64xbf16> -> tensor<512x64xbf16>
  return
}

// -----

func.func @deinterleave_cols_block(%d: tensor<?x384xbf16>) {
  // expected-error @+1 {{'fp8.deinterleave_cols' op expected the columns (384) to be a multiple of twice the block (256)}}
  %a, %b = fp8.deinterleave_cols %d block 128 : tensor<?x384xbf16> -> tensor<?x192xbf16>
  return
}

// -----

func.func @deinterleave_cols_result(%d: tensor<8x512xbf16>) {
  // expected-error @+1 {{'fp8.deinterleave_cols' op expected results of half the columns of 'tensor<8x512xbf16>', found 'tensor<8x512xbf16>'}}
  %a, %b = fp8.deinterleave_cols %d block 128 : tensor<8x512xbf16> -> tensor<8x512xbf16>
  return
}
