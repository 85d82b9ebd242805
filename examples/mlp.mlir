// A Llama-style feed-forward block (the FFN of Llama-2 7B: hidden 4096,
// intermediate 11008) with the DeepSeek-V3 FP8 recipe on its three
// projections: activations quantized per token per 128 channels, weights in
// 128x128 blocks, tensor-core partial sums promoted into FP32 every 128 K
// elements. The token count M is dynamic.
//
//   y = x + down(silu(gate(x)) * up(x))
//
// Weights are stored as PyTorch's nn.Linear does, [out, in]: each projection
// multiplies by the transpose (the indexing maps of linalg.matmul say so),
// which is the K-major "NT" layout Hopper's FP8 tensor cores want. The
// recipe on the function applies to every matmul in it. examples/README.md
// has the commands.

#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

func.func @mlp(%x: tensor<?x4096xbf16>,
               %w_gate: tensor<11008x4096xbf16> {fp8.weight},
               %w_up: tensor<11008x4096xbf16> {fp8.weight},
               %w_down: tensor<4096x11008xbf16> {fp8.weight})
    -> tensor<?x4096xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x4096xbf16>

  // gate = x W_gate^T, up = x W_up^T
  %e1 = tensor.empty(%m) : tensor<?x11008xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x11008xbf16>) -> tensor<?x11008xbf16>
  %gate = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%x, %w_gate : tensor<?x4096xbf16>, tensor<11008x4096xbf16>)
            outs(%z1 : tensor<?x11008xbf16>) -> tensor<?x11008xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x4096xbf16>, tensor<11008x4096xbf16>)
          outs(%z1 : tensor<?x11008xbf16>) -> tensor<?x11008xbf16>

  // SwiGLU: silu(gate) * up = gate / (1 + exp(-gate)) * up, in f32.
  %h = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x11008xbf16>, tensor<?x11008xbf16>)
         outs(%e1 : tensor<?x11008xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %r = arith.truncf %prod : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x11008xbf16>

  // down = h W_down^T, then the residual.
  %e2 = tensor.empty(%m) : tensor<?x4096xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x11008xbf16>, tensor<4096x11008xbf16>)
            outs(%z2 : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %out = linalg.add ins(%x, %down : tensor<?x4096xbf16>, tensor<?x4096xbf16>)
                    outs(%e2 : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %out : tensor<?x4096xbf16>
}
