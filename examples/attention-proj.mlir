// The projections around a Llama-2 7B attention layer (hidden 4096, 32
// heads): the fused QKV projection of the layer input and the output
// projection of the attention result, with the residual. The attention core
// itself (softmax(QK^T)V, FlashAttention) runs elsewhere: its output comes
// in as %attn. The token count M is dynamic.
//
//   qkv = x Wqkv^T,   y = x + attn Wo^T
//
// Recipe: per-tensor FP8 with delayed scaling for the activations (one scale
// per tensor from an amax history of 16 steps, the Transformer Engine
// recipe: no reduction over the tensor before it is quantized), per-tensor
// current scaling for the weights (quantized once), promotion into FP32 every
// 128 K elements. --fp8-quantize-annotated threads one amax history per
// activation through the function (an argument and a result each); fp8-run
// keeps it across runs. examples/README.md has the commands.

#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>

func.func @attention_proj(%x: tensor<?x4096xbf16>,
                          %attn: tensor<?x4096xbf16>,
                          %w_qkv: tensor<12288x4096xbf16> {fp8.weight},
                          %w_o: tensor<4096x4096xbf16> {fp8.weight})
    -> (tensor<?x12288xbf16>, tensor<?x4096xbf16>)
    attributes {fp8.recipe = #fp8.recipe<
        a = <f8E4M3FN, <per_tensor>, <delayed, history = 16>>,
        b = <f8E4M3FN, <per_tensor>>,
        promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x4096xbf16>

  %e1 = tensor.empty(%m) : tensor<?x12288xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x12288xbf16>) -> tensor<?x12288xbf16>
  %qkv = linalg.matmul indexing_maps = [#x, #wT, #y]
           ins(%x, %w_qkv : tensor<?x4096xbf16>, tensor<12288x4096xbf16>)
           outs(%z1 : tensor<?x12288xbf16>) -> tensor<?x12288xbf16>

  %e2 = tensor.empty(%m) : tensor<?x4096xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %o = linalg.matmul indexing_maps = [#x, #wT, #y]
         ins(%attn, %w_o : tensor<?x4096xbf16>, tensor<4096x4096xbf16>)
         outs(%z2 : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %out = linalg.add ins(%x, %o : tensor<?x4096xbf16>, tensor<?x4096xbf16>)
                    outs(%e2 : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %qkv, %out : tensor<?x12288xbf16>, tensor<?x4096xbf16>
}
