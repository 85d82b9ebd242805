// The input gradient of a projection in training: for y = x W^T with W
// stored [out, in] = [11008, 4096] (an FFN up projection), the backward pass
// computes dX = dY W. The token count M is dynamic.
//
// Recipe: the gradient dY in E5M2 (the wider range gradients need) with one
// scale per token (per-row), the weight in E4M3 with one scale per channel:
// per-row in the GEMM's logical frame, where B is [N, K] = [in, out], i.e.
// one scale per input channel. Promotion into FP32 every 128 K elements.
//
// Here W is read as it is stored, [K, N] (linalg.matmul's plain maps): an
// MN-major operand, which Hopper's FP8 wgmma cannot read. On sm_90a,
// --fp8-verify-target quantizes W per column and inserts an FP8 transpose
// (codes and scales) before the GEMM: the on-demand transpose of the Ling
// 2.0 training recipe, done once per weight in the plan's prepare steps.
// examples/README.md has the commands.

func.func @grad_projection(%dy: tensor<?x11008xbf16>,
                           %w: tensor<11008x4096xbf16> {fp8.weight})
    -> tensor<?x4096xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E5M2, <per_row>>,
                                         b = <f8E4M3FN, <per_row>>,
                                         promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %dy, %c0 : tensor<?x11008xbf16>
  %e = tensor.empty(%m) : tensor<?x4096xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %dx = linalg.matmul ins(%dy, %w : tensor<?x11008xbf16>, tensor<11008x4096xbf16>)
                      outs(%z : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %dx : tensor<?x4096xbf16>
}
