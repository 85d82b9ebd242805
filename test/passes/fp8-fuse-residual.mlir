// RUN: fp8-opt %s -split-input-file --fp8-fuse-residual | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-compile=fuse-residual=true | FileCheck %s --check-prefix=COMPILE
// RUN: fp8-opt %s -split-input-file --fp8-compile | FileCheck %s --check-prefix=DEFAULT

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// x + matmul (linalg.add): the matmul accumulates into x, the add is gone.
// CHECK-LABEL: func.func @named_add
// CHECK: %[[MM:.+]] = linalg.matmul {{.*}}ins(%{{.+}}, %{{.+}} : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%arg0 : tensor<?x128xbf16>)
// CHECK-NOT: linalg.add
// CHECK: return %[[MM]]
// COMPILE-LABEL: func.func @named_add
// COMPILE: fp8.scaled_matmul {{.*}} acc %arg0 promotion_interval 128 {fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm90a_n128_k256_e4m3t1x128_e4m3t128x128_p128_bf16acc_
// COMPILE-NEXT: return %{{.+}} : tensor<?x128xbf16>
// DEFAULT-LABEL: func.func @named_add
// DEFAULT: linalg.add {{.*}}fp8.kernel = {kind = "elementwise"
func.func @named_add(%x: tensor<?x128xbf16>, %a: tensor<?x256xbf16>, %w: tensor<128x256xbf16> {fp8.weight})
    -> tensor<?x128xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %a, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%m) : tensor<?x128xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %p = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         ins(%a, %w : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %y = linalg.add ins(%x, %p : tensor<?x128xbf16>, tensor<?x128xbf16>) outs(%e : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// The product first, the add widened to f32 and rounded back; arith.addf on
// tensors.
// CHECK-LABEL: func.func @generic_and_arith
// CHECK: %[[P:.+]] = linalg.matmul {{.*}}outs(%arg0 : tensor<64x128xbf16>)
// CHECK: %[[Q:.+]] = linalg.matmul {{.*}}outs(%[[P]] : tensor<64x128xbf16>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: arith.addf
// CHECK: return %[[Q]]
func.func @generic_and_arith(%x: tensor<64x128xbf16>, %a: tensor<64x256xbf16>, %w: tensor<128x256xbf16>)
    -> tensor<64x128xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x128xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %p = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%p, %x : tensor<64x128xbf16>, tensor<64x128xbf16>) outs(%e : tensor<64x128xbf16>) {
  ^bb0(%u: bf16, %v: bf16, %o: bf16):
    %uf = arith.extf %u : bf16 to f32
    %vf = arith.extf %v : bf16 to f32
    %s = arith.addf %uf, %vf : f32
    %r = arith.truncf %s : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<64x128xbf16>
  %q = linalg.matmul indexing_maps = [#mk, #nk, #mn]
         ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y = arith.addf %q, %h : tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// Left alone: a product with a second user; a subtraction; a residual
// defined after the matmul; a matmul that already accumulates; a bias
// broadcast along the rows.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.matmul
// CHECK: linalg.add
// CHECK: linalg.matmul
// CHECK: arith.subf
// CHECK: linalg.matmul
// CHECK: arith.negf
// CHECK: linalg.add
// CHECK: linalg.matmul {{.*}}outs(%arg0 : tensor<64x128xbf16>)
// CHECK: linalg.add
// CHECK: linalg.matmul
// CHECK: linalg.generic
func.func @left_alone(%x: tensor<64x128xbf16>, %a: tensor<64x256xbf16>, %w: tensor<128x256xbf16>, %b: tensor<128xbf16>)
    -> (tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x128xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %p1 = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y1 = linalg.add ins(%x, %p1 : tensor<64x128xbf16>, tensor<64x128xbf16>) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %p2 = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y2 = arith.subf %x, %p2 : tensor<64x128xbf16>
  %p3 = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %late = arith.negf %x : tensor<64x128xbf16>
  %y3 = linalg.add ins(%late, %p3 : tensor<64x128xbf16>, tensor<64x128xbf16>) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %p4 = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%x : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y4 = linalg.add ins(%x, %p4 : tensor<64x128xbf16>, tensor<64x128xbf16>) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %p5 = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y5 = linalg.generic {indexing_maps = [#id, affine_map<(m, n) -> (n)>, #id], iterator_types = ["parallel", "parallel"]}
          ins(%p5, %b : tensor<64x128xbf16>, tensor<128xbf16>) outs(%e : tensor<64x128xbf16>) {
  ^bb0(%u: bf16, %v: bf16, %o: bf16):
    %s = arith.addf %u, %v : bf16
    linalg.yield %s : bf16
  } -> tensor<64x128xbf16>
  return %p1, %y1, %y2, %y3, %y4, %y5 : tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>
}
