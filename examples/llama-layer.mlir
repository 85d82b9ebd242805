// The FP8 part of a Llama-3-8B decoder layer (hidden 4096, 32 query heads
// and 8 key/value heads of 128: fused QKV 6144, intermediate 14336) with
// the DeepSeek-V3 recipe on its five projections: activations quantized per
// token per 128 channels, weights in 128x128 blocks, promotion into FP32
// every 128 K elements. Attention itself (RoPE, softmax) is not an FP8
// GEMM: its output comes in as an argument, and the fused QKV projection
// goes out as a result. The token count M is dynamic.
//
//   qkv = rmsnorm(x, g_attn) W_qkv^T
//   h   = x + attn W_o^T
//   y   = h + down(silu(gate(n)) * up(n)),   n = rmsnorm(h, g_ffn)
//
// RMSNorm as Hugging Face's LlamaRMSNorm computes it: the mean of squares
// in f32, x * rsqrt(mean + eps) rounded to bf16, times the gain in bf16.
// The sum of squares is a linalg reduction along the row (the plan's
// reduce step); the normalization reads it broadcast along the row and the
// gain broadcast along the columns, and is fused into the quantize of the
// projection it feeds. examples/README.md has the commands.

#x   = affine_map<(m, n, k) -> (m, k)>
#wT  = affine_map<(m, n, k) -> (n, k)>
#y   = affine_map<(m, n, k) -> (m, n)>
#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
#col = affine_map<(m, n) -> (n)>

func.func @llama_layer(%x: tensor<?x4096xbf16>,
                       %attn: tensor<?x4096xbf16>,
                       %g_attn: tensor<4096xbf16>,
                       %g_ffn: tensor<4096xbf16>,
                       %w_qkv: tensor<6144x4096xbf16> {fp8.weight},
                       %w_o: tensor<4096x4096xbf16> {fp8.weight},
                       %w_gate: tensor<14336x4096xbf16> {fp8.weight},
                       %w_up: tensor<14336x4096xbf16> {fp8.weight},
                       %w_down: tensor<4096x14336xbf16> {fp8.weight})
    -> (tensor<?x6144xbf16>, tensor<?x4096xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %zero_f32 = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  %e_sum = tensor.empty(%m) : tensor<?xf32>
  %z_sum = linalg.fill ins(%zero_f32 : f32) outs(%e_sum : tensor<?xf32>) -> tensor<?xf32>
  %e_h = tensor.empty(%m) : tensor<?x4096xbf16>
  %z_h = linalg.fill ins(%zero : bf16) outs(%e_h : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>

  // RMSNorm before attention: the row sums of x^2, then the normalization.
  %ss1 = linalg.generic {indexing_maps = [#id, #row],
                         iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<?x4096xbf16>) outs(%z_sum : tensor<?xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %sq = arith.mulf %af, %af : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #row, #col, #id],
                        iterator_types = ["parallel", "parallel"]}
          ins(%x, %ss1, %g_attn : tensor<?x4096xbf16>, tensor<?xf32>, tensor<4096xbf16>)
          outs(%e_h : tensor<?x4096xbf16>) {
  ^bb0(%a: bf16, %s: f32, %g: bf16, %o: bf16):
    %inv_n = arith.constant 2.44140625e-04 : f32   // 1 / 4096
    %eps = arith.constant 1.0e-05 : f32
    %af = arith.extf %a : bf16 to f32
    %mean = arith.mulf %s, %inv_n : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %nf = arith.mulf %af, %r : f32
    %nb = arith.truncf %nf : f32 to bf16
    %prod = arith.mulf %g, %nb : bf16
    linalg.yield %prod : bf16
  } -> tensor<?x4096xbf16>

  // The fused QKV projection (GQA: 4096 + 2 x 1024 columns).
  %e_qkv = tensor.empty(%m) : tensor<?x6144xbf16>
  %z_qkv = linalg.fill ins(%zero : bf16) outs(%e_qkv : tensor<?x6144xbf16>) -> tensor<?x6144xbf16>
  %qkv = linalg.matmul indexing_maps = [#x, #wT, #y]
           ins(%n1, %w_qkv : tensor<?x4096xbf16>, tensor<6144x4096xbf16>)
           outs(%z_qkv : tensor<?x6144xbf16>) -> tensor<?x6144xbf16>

  // The output projection of the attention, and the residual.
  %o = linalg.matmul indexing_maps = [#x, #wT, #y]
         ins(%attn, %w_o : tensor<?x4096xbf16>, tensor<4096x4096xbf16>)
         outs(%z_h : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %h = linalg.add ins(%x, %o : tensor<?x4096xbf16>, tensor<?x4096xbf16>)
                  outs(%e_h : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>

  // RMSNorm before the feed-forward block.
  %ss2 = linalg.generic {indexing_maps = [#id, #row],
                         iterator_types = ["parallel", "reduction"]}
           ins(%h : tensor<?x4096xbf16>) outs(%z_sum : tensor<?xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %sq = arith.mulf %af, %af : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %n2 = linalg.generic {indexing_maps = [#id, #row, #col, #id],
                        iterator_types = ["parallel", "parallel"]}
          ins(%h, %ss2, %g_ffn : tensor<?x4096xbf16>, tensor<?xf32>, tensor<4096xbf16>)
          outs(%e_h : tensor<?x4096xbf16>) {
  ^bb0(%a: bf16, %s: f32, %g: bf16, %o2: bf16):
    %inv_n = arith.constant 2.44140625e-04 : f32
    %eps = arith.constant 1.0e-05 : f32
    %af = arith.extf %a : bf16 to f32
    %mean = arith.mulf %s, %inv_n : f32
    %v = arith.addf %mean, %eps : f32
    %r = math.rsqrt %v : f32
    %nf = arith.mulf %af, %r : f32
    %nb = arith.truncf %nf : f32 to bf16
    %prod = arith.mulf %g, %nb : bf16
    linalg.yield %prod : bf16
  } -> tensor<?x4096xbf16>

  // gate and up, SwiGLU in f32.
  %e_i = tensor.empty(%m) : tensor<?x14336xbf16>
  %z_i = linalg.fill ins(%zero : bf16) outs(%e_i : tensor<?x14336xbf16>) -> tensor<?x14336xbf16>
  %gate = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%n2, %w_gate : tensor<?x4096xbf16>, tensor<14336x4096xbf16>)
            outs(%z_i : tensor<?x14336xbf16>) -> tensor<?x14336xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%n2, %w_up : tensor<?x4096xbf16>, tensor<14336x4096xbf16>)
          outs(%z_i : tensor<?x14336xbf16>) -> tensor<?x14336xbf16>
  %act = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
           ins(%gate, %up : tensor<?x14336xbf16>, tensor<?x14336xbf16>)
           outs(%e_i : tensor<?x14336xbf16>) {
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
  } -> tensor<?x14336xbf16>

  // down, and the second residual.
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%act, %w_down : tensor<?x14336xbf16>, tensor<4096x14336xbf16>)
            outs(%z_h : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %out = linalg.add ins(%h, %down : tensor<?x4096xbf16>, tensor<?x4096xbf16>)
                    outs(%e_h : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %qkv, %out : tensor<?x6144xbf16>, tensor<?x4096xbf16>
}
