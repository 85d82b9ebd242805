// A DeepSeek-V3-style mixture-of-experts block: hidden 7168, expert
// intermediate 2048, 16 experts, each token routed to 8 of them, with the
// DeepSeek-V3 FP8 recipe on the experts' projections: activations quantized
// per token per 128 channels, weights in 128x128 blocks, tensor-core
// partial sums promoted into FP32 every 128 K elements. The token count M is
// dynamic; the routing (the top-8 expert ids and their weights per token)
// is an input, as the router computes it.
//
//   rows      = the tokens gathered by expert (8 copies of each token)
//   h         = silu(rows W_gate[e]^T) * (rows W_up[e]^T)   per expert e
//   y[t]      = sum_j weights[t, j] * (h W_down[e_j]^T)[row of (t, j)]
//
// The experts' weights are stacked [E, out, in], PyTorch's nn.Linear layout
// per expert (K-major, as Hopper's FP8 tensor cores read them). The
// compiled plan runs five steps: the permute (routing, gather and 1x128
// quantize in one pass), the gate and up grouped GEMMs, SwiGLU fused into
// the quantize of h, the down grouped GEMM, and the weighted unpermute.
// examples/README.md has the commands.

#id = affine_map<(m, n) -> (m, n)>

func.func @moe(%x: tensor<?x7168xbf16>,
               %ids: tensor<?x8xi32>,
               %weights: tensor<?x8xf32>,
               %w_gate: tensor<16x2048x7168xbf16> {fp8.weight},
               %w_up: tensor<16x2048x7168xbf16> {fp8.weight},
               %w_down: tensor<16x7168x2048xbf16> {fp8.weight})
    -> tensor<?x7168xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  // Dispatch: each token's 8 copies, grouped by expert.
  %rows, %offsets, %positions = fp8.moe_permute %x, %ids experts 16
      : tensor<?x7168xbf16>, tensor<?x8xi32>
      -> tensor<?x7168xbf16>, tensor<17xi32>, tensor<?x8xi32>

  // gate = rows W_gate[e]^T, up = rows W_up[e]^T, per expert.
  %gate = fp8.grouped_matmul contiguous(%offsets : tensor<17xi32>) %rows, %w_gate
      : tensor<?x7168xbf16>, tensor<16x2048x7168xbf16>
      -> tensor<?x2048xbf16>
  %up = fp8.grouped_matmul contiguous(%offsets : tensor<17xi32>) %rows, %w_up
      : tensor<?x7168xbf16>, tensor<16x2048x7168xbf16>
      -> tensor<?x2048xbf16>

  // SwiGLU: silu(gate) * up = gate / (1 + exp(-gate)) * up, in f32.
  %c0 = arith.constant 0 : index
  %r = tensor.dim %gate, %c0 : tensor<?x2048xbf16>
  %e = tensor.empty(%r) : tensor<?x2048xbf16>
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

  // down = h W_down[e]^T, per expert.
  %down = fp8.grouped_matmul contiguous(%offsets : tensor<17xi32>) %h, %w_down
      : tensor<?x2048xbf16>, tensor<16x7168x2048xbf16>
      -> tensor<?x7168xbf16>

  // Combine: each token's 8 expert outputs, weighted by the router.
  %y = fp8.moe_unpermute %down, %positions, %weights
      : tensor<?x7168xbf16>, tensor<?x8xi32>, tensor<?x8xf32>
      -> tensor<?x7168xbf16>
  return %y : tensor<?x7168xbf16>
}
