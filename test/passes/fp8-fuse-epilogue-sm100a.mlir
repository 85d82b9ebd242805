// sm_100a has no quantizing epilogue (codegen/Sm100Gemm.h): with an MX
// recipe, the GELU between two projections stays where it was, fused into
// the second projection's quantize.
// RUN: fp8-opt %s "--fp8-compile=arch=sm_100a fuse-epilogue=true" | FileCheck %s

#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// CHECK-LABEL: func.func @gelu
// CHECK-NOT: fp8.epilogue
// CHECK-NOT: fp8.interleave_rows
// CHECK: fp8.quantize {{.*}}fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_1x32e8_fused_
// CHECK-NOT: fp8.epilogue
// CHECK: return
func.func @gelu(%x: tensor<?x256xbf16>, %w_up: tensor<384x256xbf16> {fp8.weight},
                %w_down: tensor<256x384xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <mx>>, b = <f8E4M3FN, <mx>>>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%up : tensor<?x384xbf16>) outs(%e1 : tensor<?x384xbf16>) {
  ^bb0(%u: bf16, %out: bf16):
    %uf = arith.extf %u : bf16 to f32
    %c = arith.constant 0.70710678 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.mulf %uf, %c : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %q = arith.mulf %uf, %p : f32
    %g = arith.mulf %q, %half : f32
    %r = arith.truncf %g : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}
