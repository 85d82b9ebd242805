// RUN: fp8-opt %s -verify-diagnostics --fp8-compile=arch=sm_100a | FileCheck %s

// Negative: the sm_100a GEMM's epilogue writes no amax (checkGemmSpec
// refuses amax_out there), so on sm_100a the per-tensor quantize of a
// GEMM's result computes its own amax, as without the option.
// CHECK-LABEL: func.func @sm100
// CHECK: fp8.scaled_matmul {{.*}}fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm100a_
// CHECK-NOT: amax_{{(in|out)}}
// CHECK: return

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @sm100(%x: tensor<?x256xbf16>, %w1: tensor<512x256xbf16> {fp8.weight},
                 %w2: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 32>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x512xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %h = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w1 : tensor<?x256xbf16>, tensor<512x256xbf16>) outs(%z1 : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%h, %w2 : tensor<?x512xbf16>, tensor<256x512xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
