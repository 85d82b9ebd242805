// The activation quantize forms on one [M, 8192] bf16 tensor (M = 4096:
// 64 MiB), each feeding a narrow GEMM: per-tensor current and delayed
// scaling, 1x128 and per-row, and a residual add.
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @forms(%x: tensor<?x8192xbf16>, %y: tensor<?x8192xbf16>,
                 %w: tensor<256x8192xbf16> {fp8.weight})
    -> (tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x8192xbf16>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x8192xbf16>
  %e = tensor.empty(%m) : tensor<?x256xbf16>
  %a = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>}
         ins(%x, %w : tensor<?x8192xbf16>, tensor<256x8192xbf16>) outs(%e : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %b = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 16, margin = 0>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>}
         ins(%x, %w : tensor<?x8192xbf16>, tensor<256x8192xbf16>) outs(%e : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %c = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>}
         ins(%x, %w : tensor<?x8192xbf16>, tensor<256x8192xbf16>) outs(%e : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %e2 = tensor.empty(%m) : tensor<?x8192xbf16>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%x, %y : tensor<?x8192xbf16>, tensor<?x8192xbf16>) outs(%e2 : tensor<?x8192xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %o: bf16):
    %r = arith.addf %p, %q : bf16
    linalg.yield %r : bf16
  } -> tensor<?x8192xbf16>
  return %a, %b, %c, %sum : tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x8192xbf16>
}
