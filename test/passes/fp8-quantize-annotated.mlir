// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-quantize-annotated | FileCheck %s
// Without folding, @nan_constant is no error (its expected-error is missing,
// hence `not`); the other splits print as usual.
// RUN: not fp8-opt %s -split-input-file -verify-diagnostics --fp8-quantize-annotated=fold-constants=false | FileCheck %s --check-prefix=NOFOLD

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// The function's recipe applies to its matmuls. The weight is quantized at
// the top (once), the activation once for both matmuls; the zero inits go.
// CHECK-LABEL: func.func @nt_default_recipe
// CHECK-SAME: (%[[X:.+]]: tensor<?x256xbf16>, %[[W:.+]]: tensor<512x256xbf16> {fp8.weight})
// CHECK: %[[XQ:.+]], %[[XS:.+]] = fp8.quantize %[[X]] granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
// CHECK: %[[WQ:.+]], %[[WS:.+]] = fp8.quantize %[[W]] granularity <128x128> : tensor<512x256xbf16> -> tensor<512x256xf8E4M3FN>, tensor<4x2xf32>
// CHECK-NOT: fp8.quantize
// CHECK-NOT: linalg.fill
// CHECK: fp8.scaled_matmul %[[XQ]] scale %[[XS]] granularity <1x128>, %[[WQ]] scale %[[WS]] granularity <128x128> promotion_interval 128 : {{.*}} -> tensor<?x512xbf16>
// CHECK: fp8.scaled_matmul %[[XQ]] scale %[[XS]] granularity <1x128>, %[[WQ]] scale %[[WS]] granularity <128x128>
// CHECK-NOT: linalg.matmul
func.func @nt_default_recipe(%x: tensor<?x256xbf16>, %w: tensor<512x256xbf16> {fp8.weight}) -> (tensor<?x512xbf16>, tensor<?x512xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%m) : tensor<?x512xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<?x256xbf16>, tensor<512x256xbf16>) outs(%z : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %y2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<?x256xbf16>, tensor<512x256xbf16>) outs(%z : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  return %y, %y2 : tensor<?x512xbf16>, tensor<?x512xbf16>
}

// -----

// An op's own recipe; B read [K, N] (plain linalg.matmul) is MN-major, and
// its per-row (logical [N, K]) granularity is per-column as stored. A
// non-zero init is accumulated. The unannotated matmul stays.
// CHECK-LABEL: func.func @nn_op_recipe
// CHECK-SAME: (%[[X:.+]]: tensor<64x256xf32>, %[[W:.+]]: tensor<256x128xf32>, %[[C:.+]]: tensor<64x128xf32>)
// CHECK: %[[XQ:.+]], %[[XS:.+]] = fp8.quantize %[[X]] granularity <per_row> : tensor<64x256xf32> -> tensor<64x256xf8E5M2>, tensor<64x1xf32>
// CHECK: %[[WQ:.+]], %[[WS:.+]] = fp8.quantize %[[W]] granularity <per_column> : tensor<256x128xf32> -> tensor<256x128xf8E4M3FN>, tensor<1x128xf32>
// CHECK: fp8.scaled_matmul %[[XQ]] scale %[[XS]] granularity <per_row>, %[[WQ]] scale %[[WS]] granularity <per_column> layout mn_major acc %[[C]] : {{.*}} -> tensor<64x128xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[W]]
func.func @nn_op_recipe(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>, %c: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %y = linalg.matmul {fp8.recipe = #fp8.recipe<a = <f8E5M2, <per_row>>, b = <f8E4M3FN, <per_row>>, out = f32>}
         ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  %u = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y, %u : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Delayed scaling threads an amax history through the function; the weight,
// quantized once, uses current scaling.
// CHECK-LABEL: func.func @delayed
// CHECK-SAME: (%[[X:.+]]: tensor<?x256xbf16>, %{{.+}}: tensor<128x256xbf16> {fp8.weight}, %[[H:.+]]: tensor<16xf32> {fp8.amax_history})
// CHECK-SAME: -> (tensor<?x128xbf16>, tensor<16xf32> {fp8.amax_history_of = 2 : i64})
// CHECK: %{{.+}}, %{{.+}}, %[[NEXT:.+]] = fp8.quantize %[[X]] history %[[H]] granularity <per_tensor> scaling <delayed, margin = 1>
// CHECK: fp8.quantize %{{.+}} granularity <per_tensor> : tensor<128x256xbf16>
// CHECK: return %{{.+}}, %[[NEXT]]
func.func @delayed(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16> {fp8.weight}) -> tensor<?x128xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 16, margin = 1>>, b = <f8E4M3FN, <per_tensor>, <delayed>>>} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%m) : tensor<?x128xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%e : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A constant weight is quantized at compile time (0.5 / (0.5 / 448) = 448),
// the original kept as fp8.source; fold-constants=false quantizes it in the
// plan instead.
// CHECK-LABEL: func.func @constant_weight
// CHECK: %[[WQ:.+]] = arith.constant {fp8.source = dense<5.000000e-01> : tensor<32x64xbf16>} dense<4.480000e+02> : tensor<32x64xf8E4M3FN>
// CHECK: %[[WS:.+]] = arith.constant dense<0.00111607148> : tensor<1x1xf32>
// CHECK: fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <per_tensor>, %[[WQ]] scale %[[WS]] granularity <per_tensor>
// NOFOLD-LABEL: func.func @constant_weight
// NOFOLD: %[[W:.+]] = arith.constant dense<5.000000e-01> : tensor<32x64xbf16>
// NOFOLD: fp8.quantize %[[W]] granularity <per_tensor>
func.func @constant_weight(%x: tensor<16x64xbf16>) -> tensor<16x32xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  %w = arith.constant dense<0.5> : tensor<32x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x32xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%z : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----

// A batched matmul: each operand quantized per group, a grouped GEMM whose
// every group is full (valid rows = M).
// CHECK-LABEL: func.func @batched
// CHECK: fp8.quantize %{{.+}} granularity <1x128> : tensor<4x?x256xbf16> -> tensor<4x?x256xf8E4M3FN>, tensor<4x?x2xf32>
// CHECK: fp8.quantize %{{.+}} granularity <128x128> : tensor<4x128x256xbf16> -> tensor<4x128x256xf8E4M3FN>, tensor<4x1x2xf32>
// CHECK: %[[M32:.+]] = arith.index_cast %{{.+}} : index to i32
// CHECK: %[[ROWS:.+]] = tensor.splat %[[M32]] : tensor<4xi32>
// CHECK: fp8.grouped_scaled_matmul masked(%[[ROWS]] : tensor<4xi32>) {{.*}} promotion_interval 128 {fp8.full_batch} : {{.*}} -> tensor<4x?x128xbf16>
func.func @batched(%x: tensor<4x?x256xbf16>, %w: tensor<4x128x256xbf16>) -> tensor<4x?x128xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c1 : tensor<4x?x256xbf16>
  %e = tensor.empty(%m) : tensor<4x?x128xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x?x128xbf16>) -> tensor<4x?x128xbf16>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%x, %w : tensor<4x?x256xbf16>, tensor<4x128x256xbf16>) outs(%z : tensor<4x?x128xbf16>) -> tensor<4x?x128xbf16>
  return %y : tensor<4x?x128xbf16>
}

// -----

// Elementwise ops and unannotated functions are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: fp8.
// CHECK: linalg.generic
// CHECK: linalg.matmul
func.func @untouched(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
         ins(%x : tensor<8x16xf32>) outs(%x : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  %y = linalg.matmul ins(%g, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @recipe_on_elementwise(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expected 'fp8.recipe' on a matmul-family op (a linalg contraction such as linalg.matmul or linalg.batch_matmul), found 'linalg.generic'}}
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
         ins(%x : tensor<8x16xf32>) outs(%x : tensor<8x16xf32>)
         attrs = {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  return %g : tensor<8x16xf32>
}

// -----

func.func @integer_operands(%x: tensor<8x16xi8>, %w: tensor<16x8xi8>, %c: tensor<8x8xbf16>) -> tensor<8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{expected bf16, f16 or f32 operands to quantize, found A of type 'tensor<8x16xi8>'}}
  %y = linalg.matmul ins(%x, %w : tensor<8x16xi8>, tensor<16x8xi8>) outs(%c : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  return %y : tensor<8x8xbf16>
}

// -----

func.func @out_mismatch(%x: tensor<8x16xbf16>, %w: tensor<16x8xbf16>, %c: tensor<8x8xf32>) -> tensor<8x8xf32>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{expected the result element type ('f32') to be the recipe's out ('bf16'): state `out = f32` in the recipe}}
  %y = linalg.matmul ins(%x, %w : tensor<8x16xbf16>, tensor<16x8xbf16>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @two_k_dims(%x: tensor<8x4x4xf32>, %w: tensor<8x4x4xf32>, %c: tensor<8x8xbf16>) -> tensor<8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{expected a matmul with one M, one N and one K dimension and at most one batch dimension}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>, affine_map<(m, n, k1, k2) -> (n, k1, k2)>, affine_map<(m, n, k1, k2) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
         ins(%x, %w : tensor<8x4x4xf32>, tensor<8x4x4xf32>) outs(%c : tensor<8x8xbf16>) {
  ^bb0(%a: f32, %b: f32, %o: bf16):
    %p = arith.mulf %a, %b : f32
    %t = arith.truncf %p : f32 to bf16
    %s = arith.addf %o, %t : bf16
    linalg.yield %s : bf16
  } -> tensor<8x8xbf16>
  return %y : tensor<8x8xbf16>
}

// -----

func.func @result_layout(%x: tensor<8x16xbf16>, %w: tensor<8x16xbf16>, %c: tensor<8x8xbf16>) -> tensor<8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{expected the result indexed [batch, M, N]}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (n, m)>]
         ins(%x, %w : tensor<8x16xbf16>, tensor<8x16xbf16>) outs(%c : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  return %y : tensor<8x8xbf16>
}

// -----

func.func @batch_inside(%x: tensor<8x4x16xbf16>, %w: tensor<4x8x16xbf16>, %c: tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{expected A indexed [batch, M, K] or [batch, K, M] and B [batch, N, K] or [batch, K, N] (batch outermost, when there is one)}}
  %y = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (m, b, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
         ins(%x, %w : tensor<8x4x16xbf16>, tensor<4x8x16xbf16>) outs(%c : tensor<4x8x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %p = arith.mulf %a, %b : bf16
    %s = arith.addf %o, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<4x8x8xbf16>
  return %y : tensor<4x8x8xbf16>
}

// -----

func.func @batched_accumulate(%x: tensor<4x8x16xbf16>, %w: tensor<4x8x16xbf16>, %c: tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{expected a zero init for a batched matmul (grouped FP8 GEMMs do not accumulate)}}
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%x, %w : tensor<4x8x16xbf16>, tensor<4x8x16xbf16>) outs(%c : tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
  return %y : tensor<4x8x8xbf16>
}

// -----

func.func @batched_dynamic_count(%x: tensor<?x8x16xbf16>, %w: tensor<?x8x16xbf16>, %c: tensor<?x8x8xbf16>) -> tensor<?x8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  %zero = arith.constant 0.0 : bf16
  %z = linalg.fill ins(%zero : bf16) outs(%c : tensor<?x8x8xbf16>) -> tensor<?x8x8xbf16>
  // expected-error @+1 {{expected a static batch count, found 'tensor<?x8x16xbf16>'}}
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%x, %w : tensor<?x8x16xbf16>, tensor<?x8x16xbf16>) outs(%z : tensor<?x8x8xbf16>) -> tensor<?x8x8xbf16>
  return %y : tensor<?x8x8xbf16>
}

// -----

func.func @batched_delayed(%x: tensor<4x8x16xbf16>, %w: tensor<4x8x16xbf16>) -> tensor<4x8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed>>, b = <f8E4M3FN, <per_tensor>>>} {
  %e = tensor.empty() : tensor<4x8x8xbf16>
  // expected-error @+1 {{expected delayed scaling on a rank-2 operand (one amax history per tensor), found 'tensor<4x8x16xbf16>'}}
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%x, %w : tensor<4x8x16xbf16>, tensor<4x8x16xbf16>) outs(%e : tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
  return %y : tensor<4x8x8xbf16>
}

// -----

func.func @nan_constant(%x: tensor<16x64xbf16>) -> tensor<16x32xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  // expected-error @+1 {{cannot quantize this constant at compile time: expected finite inputs, found nan at (0, 0) (flat index 0)}}
  %w = arith.constant dense<0x7FC0> : tensor<32x64xbf16>
  %e = tensor.empty() : tensor<16x32xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%e : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----

// expected-error @+1 {{expected a single-block function body to quantize its matmuls, found 2 blocks}}
func.func @multi_block(%x: tensor<8x16xbf16>, %w: tensor<8x16xbf16>, %c: tensor<8x8xbf16>) -> tensor<8x8xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>>} {
  cf.br ^bb1
^bb1:
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x16xbf16>, tensor<8x16xbf16>) outs(%c : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  return %y : tensor<8x8xbf16>
}

// -----

// An f16 result has no recipe: the message does not suggest `out = f16`,
// which the recipe refuses.
func.func @f16_result(%x: tensor<64x128xf16>, %w: tensor<128x128xf16> {fp8.weight}) -> tensor<64x128xf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>} {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x128xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<64x128xf16>) -> tensor<64x128xf16>
  // expected-error @+1 {{expected the result element type to be bf16 or f32 (what scaled FP8 GEMMs write), found 'f16': make the matmul's result bf16 or f32}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<64x128xf16>, tensor<128x128xf16>) outs(%z : tensor<64x128xf16>) -> tensor<64x128xf16>
  return %y : tensor<64x128xf16>
}

// -----

// Grouped matmuls: along M both operands are K-major and keep the recipe's
// granularities (the experts' rows 1x128, their weights 128x128); along K
// (the experts' weight gradients) the tokens run down the rows of both, so
// both are MN-major and the recipe's 1x128 (in the GEMM's frame) is stored
// as 128x1, one scale per 128 tokens of a channel.
// CHECK-LABEL: func.func @grouped_forms
// CHECK: fp8.quantize %arg1 granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
// CHECK: fp8.quantize %arg2 granularity <128x128> : tensor<4x128x256xbf16> -> tensor<4x128x256xf8E4M3FN>, tensor<4x1x2xf32>
// CHECK: fp8.quantize %arg3 granularity <128x1> : tensor<?x128xbf16> -> tensor<?x128xf8E4M3FN>, tensor<?x128xf32>
// CHECK: fp8.quantize %arg1 granularity <128x1> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x256xf32>
// CHECK: fp8.grouped_scaled_matmul contiguous(%arg0 : tensor<5xi32>) %{{.+}} granularity <1x128>, %{{.+}} granularity <128x128> promotion_interval 128
// CHECK: fp8.grouped_scaled_matmul along_k(%arg0 : tensor<5xi32>) %{{.+}} granularity <128x1> layout mn_major, %{{.+}} granularity <128x1> layout mn_major promotion_interval 128 : {{.*}} -> tensor<4x128x256xf32>
func.func @grouped_forms(%offsets: tensor<5xi32>, %x: tensor<?x256xbf16>,
                         %w: tensor<4x128x256xbf16> {fp8.weight},
                         %dy: tensor<?x128xbf16>)
    -> (tensor<?x128xbf16>, tensor<4x128x256xf32>) {
  %y = fp8.grouped_matmul contiguous(%offsets : tensor<5xi32>) %x, %w
      {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>}
      : tensor<?x256xbf16>, tensor<4x128x256xbf16> -> tensor<?x128xbf16>
  %dw = fp8.grouped_matmul along_k(%offsets : tensor<5xi32>) %dy, %x
      {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <1x128>>, promotion_interval = 128, out = f32>}
      : tensor<?x128xbf16>, tensor<?x256xbf16> -> tensor<4x128x256xf32>
  return %y, %dw : tensor<?x128xbf16>, tensor<4x128x256xf32>
}
