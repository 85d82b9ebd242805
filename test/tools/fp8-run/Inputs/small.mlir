// A small graph with every kind of step the plans have: quantize on the row
// path (1x128), on the block path (128x128 weights, prepare), with delayed
// scaling (an amax history state), a compile-time constant weight, an FP8
// transpose of a weight read [K, N], SwiGLU fused into a quantize, a GEMM
// accumulating into C, a residual add, and a batched matmul.

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

func.func @small(%x: tensor<?x256xbf16>, %c: tensor<?x256xbf16>,
                 %wg: tensor<256x256xbf16> {fp8.weight},
                 %wu: tensor<256x256xbf16> {fp8.weight},
                 %wd: tensor<256x256xbf16> {fp8.weight},
                 %bx: tensor<2x?x256xbf16>, %bw: tensor<2x128x256xbf16> {fp8.weight})
    -> (tensor<?x256xbf16>, tensor<?x128xbf16>, tensor<2x?x128xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%m) : tensor<?x256xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %gate = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %wg : tensor<?x256xbf16>, tensor<256x256xbf16>) outs(%z : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %up = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %wu : tensor<?x256xbf16>, tensor<256x256xbf16>) outs(%z : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x256xbf16>, tensor<?x256xbf16>) outs(%e : tensor<?x256xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %o: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %n = arith.negf %gf : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %s = arith.divf %gf, %d : f32
    %p = arith.mulf %s, %uf : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x256xbf16>
  // down(h) accumulated onto %c; W_down read as stored [K, N]: transposed.
  %down = linalg.matmul ins(%h, %wd : tensor<?x256xbf16>, tensor<256x256xbf16>) outs(%c : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %y = linalg.add ins(%x, %down : tensor<?x256xbf16>, tensor<?x256xbf16>) outs(%e : tensor<?x256xbf16>) -> tensor<?x256xbf16>

  // Per-tensor delayed scaling on the activation, a constant weight.
  %wk = arith.constant dense<0.0625> : tensor<128x256xbf16>
  %e2 = tensor.empty(%m) : tensor<?x128xbf16>
  %k = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 4, margin = 1>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>}
         ins(%y, %wk : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%e2 : tensor<?x128xbf16>) -> tensor<?x128xbf16>

  // A batched matmul.
  %bm = tensor.dim %bx, %c1 : tensor<2x?x256xbf16>
  %e3 = tensor.empty(%bm) : tensor<2x?x128xbf16>
  %bz = linalg.fill ins(%zero : bf16) outs(%e3 : tensor<2x?x128xbf16>) -> tensor<2x?x128xbf16>
  %b = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%bx, %bw : tensor<2x?x256xbf16>, tensor<2x128x256xbf16>) outs(%bz : tensor<2x?x128xbf16>) -> tensor<2x?x128xbf16>
  return %y, %k, %b : tensor<?x256xbf16>, tensor<?x128xbf16>, tensor<2x?x128xbf16>
}
