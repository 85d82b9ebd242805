// Three FP8 recipes as the fp8 dialect states them (scripts/run-example.sh
// parses, verifies and prints this file with fp8-opt). See
// docs/recipe-attributes.md.

// DeepSeek-V3 inference projection: activations quantized per token per 128
// channels (current scaling), weights stored in 128x128 blocks, tensor-core
// partial sums promoted into FP32 every 128 K elements.
func.func @deepseek_v3_projection(%x: tensor<?x7168xbf16>,
                                  %w: tensor<4096x7168xf8E4M3FN>,
                                  %w_scale: tensor<32x56xf32>)
    -> tensor<?x4096xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %xq, %x_scale = fp8.quantize %x granularity <1x128>
      : tensor<?x7168xbf16> -> tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>
  %y = fp8.scaled_matmul %xq scale %x_scale granularity <1x128>,
                         %w scale %w_scale granularity <128x128>
         promotion_interval 128
      : tensor<?x7168xf8E4M3FN>, tensor<?x56xf32>,
        tensor<4096x7168xf8E4M3FN>, tensor<32x56xf32> -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// A training-style per-tensor recipe: E5M2 gradients with delayed scaling
// (the amax history threads through the step), E4M3 weights with current
// scaling, tensor-core accumulation only, f32 weight gradient.
func.func @delayed_scaling_wgrad(%grad: tensor<4096x?xbf16>,
                                 %history: tensor<1024xf32>,
                                 %x: tensor<7168x?xbf16>)
    -> (tensor<4096x7168xf32>, tensor<1024xf32>, tensor<3xf32>) {
  %gq, %g_scale, %next, %stats = fp8.quantize %grad history %history
      granularity <per_tensor> scaling <delayed, history = 1024, margin = 1>
      : tensor<4096x?xbf16>, tensor<1024xf32>
      -> tensor<4096x?xf8E5M2>, tensor<1x1xf32>, tensor<1024xf32>
         stats tensor<3xf32>
  %xq, %x_scale = fp8.quantize %x granularity <per_tensor>
      : tensor<7168x?xbf16> -> tensor<7168x?xf8E4M3FN>, tensor<1x1xf32>
  %dw = fp8.scaled_matmul %gq scale %g_scale granularity <per_tensor>,
                          %xq scale %x_scale granularity <per_tensor>
      : tensor<4096x?xf8E5M2>, tensor<1x1xf32>,
        tensor<7168x?xf8E4M3FN>, tensor<1x1xf32> -> tensor<4096x7168xf32>
  return %dw, %next, %stats : tensor<4096x7168xf32>, tensor<1024xf32>, tensor<3xf32>
}

// MoE experts with MX scaling (one UE8M0 scale per 1x32 along K on both
// operands, applied by Blackwell's block-scaled MMA): tokens of 8 experts
// stacked along M, expert g owning rows offsets[g] to offsets[g + 1].
func.func @moe_mx(%offsets: tensor<9xi32>, %x: tensor<?x2048xbf16>,
                  %w: tensor<8x1408x2048xf8E4M3FN>,
                  %w_scale: tensor<8x1408x64xf8E8M0FNU>)
    -> tensor<?x1408xbf16> {
  %xq, %x_scale = fp8.quantize %x granularity <mx>
      : tensor<?x2048xbf16> -> tensor<?x2048xf8E4M3FN>, tensor<?x64xf8E8M0FNU>
  %y = fp8.grouped_scaled_matmul contiguous(%offsets : tensor<9xi32>)
         %xq scale %x_scale granularity <mx>, %w scale %w_scale granularity <mx>
      : tensor<?x2048xf8E4M3FN>, tensor<?x64xf8E8M0FNU>,
        tensor<8x1408x2048xf8E4M3FN>, tensor<8x1408x64xf8E8M0FNU>
        -> tensor<?x1408xbf16>
  return %y : tensor<?x1408xbf16>
}
