// The pipeline for Blackwell: an MX recipe compiles to the sm_100a
// block-scaled tcgen05 kernels; for Hopper it is refused with a diagnostic.
// RUN: fp8-opt %s --fp8-compile=arch=sm_100a | FileCheck %s
// RUN: fp8-opt %s --fp8-compile=arch=sm_100a --mlir-print-debuginfo \
// RUN:   | fp8-translate --fp8-to-cuda | FileCheck %s --check-prefix=CUDA
// RUN: not fp8-opt %s --fp8-compile=arch=sm_90a 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SM90

// CHECK-LABEL: func.func @proj
// CHECK: fp8.quantize
// CHECK-SAME: fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_1x32e8_
// CHECK: fp8.scaled_matmul
// CHECK-SAME: fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm100a_n4096_k7168_e4m3t1x32e8_e4m3t1x32e8_p0_bf16_

// CUDA: kernel {{[0-9]+}}: fp8_gemm_sm100a_
// CUDA: tcgen05.alloc
// CUDA: tcgen05.mma.cta_group::{{[12]}}.kind::mxf8f6f4.block_scale.block32

// SM90: error: 'fp8.scaled_matmul' op uses MX scaling {{.*}} which needs sm_100a

func.func @proj(%x: tensor<?x7168xbf16>, %w: tensor<4096x7168xbf16> {fp8.weight})
    -> tensor<?x4096xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <mx>>,
                                         b = <f8E4M3FN, <mx>>>} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x7168xbf16>
  %init = tensor.empty(%m) : tensor<?x4096xbf16>
  %zero = arith.constant 0.0 : bf16
  %fill = linalg.fill ins(%zero : bf16) outs(%init : tensor<?x4096xbf16>)
      -> tensor<?x4096xbf16>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x7168xbf16>, tensor<4096x7168xbf16>)
      outs(%fill : tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
