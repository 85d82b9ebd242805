// The weight gradients of the experts of examples/moe.mlir (hidden 7168, 16
// experts of intermediate 2048), as the backward pass of a DeepSeek-V3-style
// training step computes them: for each expert e, over the rows routed to it,
//
//   dW_gate[e] = d_gate_e^T rows_e     dW_up[e] = d_up_e^T rows_e
//   dW_down[e] = d_y_e^T h_e
//
// The forward pass saved rows (the tokens in expert order), gate and up (the
// gate and up projections' outputs); SwiGLU is recomputed from them, as
// DeepSeek-V3 does, and differentiated:
//
//   s = sigmoid(gate)    h = gate s up    d_up = d_h gate s
//   d_gate = d_h up s (1 + gate (1 - s))
//
// d_y is the gradient of the down projection's output rows, d_h that of its
// input (from the down projection's input gradient). Every tensor is
// [R, channels], its rows in expert order; the group offsets are the ones the
// forward's `fp8.moe_permute ... align 128` gave (each expert's rows padded
// to a multiple of 128, so that a group starts at a scale block). R is
// dynamic.
//
// Recipe: DeepSeek-V3's for the weight gradients, E4M3 on both operands in
// 1x128 blocks along K, which is the tokens here (per 128 tokens of one
// channel), promotion into FP32 every 128 tokens, FP32 results. The operands
// are stored token-major and Hopper's FP8 wgmma reads K-major only:
// --fp8-verify-target transposes each in FP8 (codes and scales) before its
// K-grouped GEMM; the SwiGLU terms fuse into the quantizes.
// examples/README.md has the commands.

#id = affine_map<(m, n) -> (m, n)>

func.func @moe_wgrad(%rows: tensor<?x7168xbf16>,
                     %gate: tensor<?x2048xbf16>,
                     %up: tensor<?x2048xbf16>,
                     %d_h: tensor<?x2048xbf16>,
                     %d_y: tensor<?x7168xbf16>,
                     %offsets: tensor<17xi32>)
    -> (tensor<16x2048x7168xf32>, tensor<16x2048x7168xf32>,
        tensor<16x7168x2048xf32>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <1x128>>,
                                         promotion_interval = 128,
                                         out = f32>} {
  %c0 = arith.constant 0 : index
  %r = tensor.dim %gate, %c0 : tensor<?x2048xbf16>
  %e = tensor.empty(%r) : tensor<?x2048xbf16>

  // h = silu(gate) * up, recomputed.
  %h = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x2048xbf16>, tensor<?x2048xbf16>)
         outs(%e : tensor<?x2048xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %res = arith.truncf %prod : f32 to bf16
    linalg.yield %res : bf16
  } -> tensor<?x2048xbf16>

  // d_up = d_h * silu(gate).
  %d_up = linalg.generic {indexing_maps = [#id, #id, #id],
                          iterator_types = ["parallel", "parallel"]}
         ins(%d_h, %gate : tensor<?x2048xbf16>, tensor<?x2048xbf16>)
         outs(%e : tensor<?x2048xbf16>) {
  ^bb0(%dh: bf16, %g: bf16, %out: bf16):
    %dhf = arith.extf %dh : bf16 to f32
    %gf = arith.extf %g : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %dhf, %silu : f32
    %res = arith.truncf %prod : f32 to bf16
    linalg.yield %res : bf16
  } -> tensor<?x2048xbf16>

  // d_gate = d_h * up * s * (1 + gate * (1 - s)), s = sigmoid(gate).
  %d_gate = linalg.generic {indexing_maps = [#id, #id, #id, #id],
                            iterator_types = ["parallel", "parallel"]}
         ins(%d_h, %gate, %up
             : tensor<?x2048xbf16>, tensor<?x2048xbf16>, tensor<?x2048xbf16>)
         outs(%e : tensor<?x2048xbf16>) {
  ^bb0(%dh: bf16, %g: bf16, %u: bf16, %out: bf16):
    %dhf = arith.extf %dh : bf16 to f32
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %s = arith.divf %one, %den : f32
    %oms = arith.subf %one, %s : f32
    %t = arith.mulf %gf, %oms : f32
    %dsilu_over_s = arith.addf %t, %one : f32
    %dsilu = arith.mulf %s, %dsilu_over_s : f32
    %a = arith.mulf %dhf, %uf : f32
    %prod = arith.mulf %a, %dsilu : f32
    %res = arith.truncf %prod : f32 to bf16
    linalg.yield %res : bf16
  } -> tensor<?x2048xbf16>

  %dw_gate = fp8.grouped_matmul along_k(%offsets : tensor<17xi32>) %d_gate, %rows
      : tensor<?x2048xbf16>, tensor<?x7168xbf16> -> tensor<16x2048x7168xf32>
  %dw_up = fp8.grouped_matmul along_k(%offsets : tensor<17xi32>) %d_up, %rows
      : tensor<?x2048xbf16>, tensor<?x7168xbf16> -> tensor<16x2048x7168xf32>
  %dw_down = fp8.grouped_matmul along_k(%offsets : tensor<17xi32>) %d_y, %h
      : tensor<?x7168xbf16>, tensor<?x2048xbf16> -> tensor<16x7168x2048xf32>
  return %dw_gate, %dw_up, %dw_down
      : tensor<16x2048x7168xf32>, tensor<16x2048x7168xf32>,
        tensor<16x7168x2048xf32>
}
