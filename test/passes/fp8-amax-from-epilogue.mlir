// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-compile=arch=sm_90a | FileCheck %s
// RUN: fp8-opt %s -split-input-file -verify-diagnostics "--fp8-compile=arch=sm_90a amax-from-epilogue=false" | FileCheck %s --check-prefix=OFF
// RUN: fp8-opt %s -split-input-file --fp8-compile=arch=sm_90a | fp8-translate --fp8-to-plan -split-input-file | FileCheck %s --check-prefix=PLAN

// A per-tensor current-scaling quantize of a GEMM's result, as stored,
// reads the amax the GEMM's epilogue writes (--fp8-outline-kernels'
// amax-from-epilogue): the GEMM's spec gets amax_out, the quantize's
// amax_in, and the plan a buffer of D's amax between the two steps.

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// h = x w1^T feeds the second GEMM, quantized per tensor: its quantize
// reads h's amax. x and the weights are arguments: their quantizes compute
// their own amax.
// CHECK-LABEL: func.func @two_gemms
// CHECK: fp8.quantize %arg0 granularity <per_tensor> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_wxw_{{[0-9a-f]+}}"
// CHECK-NOT: amax_in
// CHECK: fp8.scaled_matmul {{.*}}fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm90a_{{.*}}_bf16amax_{{.*}}", spec = #fp8.gemm<{{{.*}}amax_out = true
// CHECK: fp8.quantize %{{.+}} granularity <per_tensor> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_wxw_amaxin_{{[0-9a-f]+}}", spec = {amax_in = true
// CHECK: fp8.scaled_matmul {{.*}}fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm90a_{{.*}}_bf16_
// CHECK-NOT: amax_out
// CHECK: return
// OFF-LABEL: func.func @two_gemms
// OFF-NOT: amax_{{(in|out)}}
// OFF: return
// PLAN: "name": "gemm_{{[0-9]+}}"
// PLAN: "outputs": [
// PLAN-NEXT: "[[D:[a-z0-9_]+]]",
// PLAN-NEXT: "[[D]]_amax"
// PLAN: "inputs": [
// PLAN-NEXT: "[[D]]",
// PLAN-NEXT: "[[D]]_amax"
// PLAN: "kernel": "fp8_quant_e4m3_wxw_amaxin_{{[0-9a-f]+}}"
// PLAN-NEXT: "spec": {
// PLAN-NEXT: "amax_in": true
func.func @two_gemms(%x: tensor<?x256xbf16>, %w1: tensor<512x256xbf16> {fp8.weight},
                     %w2: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>} {
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

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// Negative: h reaches its quantize through ReLU, fused into the quantize:
// the quantized values are not D's, so the quantize computes their amax
// and the GEMM writes none.
// CHECK-LABEL: func.func @through_relu
// CHECK-NOT: amax_{{(in|out)}}
// CHECK: return
// PLAN-NOT: _amax"
func.func @through_relu(%x: tensor<?x256xbf16>, %w1: tensor<512x256xbf16> {fp8.weight},
                        %w2: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x512xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %h = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w1 : tensor<?x256xbf16>, tensor<512x256xbf16>) outs(%z1 : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%h : tensor<?x512xbf16>) outs(%e1 : tensor<?x512xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %z = arith.constant 0.0 : bf16
    %v = arith.maximumf %a, %z : bf16
    linalg.yield %v : bf16
  } -> tensor<?x512xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%r, %w2 : tensor<?x512xbf16>, tensor<256x512xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Negative: the DeepSeek recipe quantizes h in 1x128 row blocks, whose
// kernel reads each block once anyway: no amax.
// CHECK-LABEL: func.func @row_blocks
// CHECK-NOT: amax_{{(in|out)}}
// CHECK: return
func.func @row_blocks(%x: tensor<?x256xbf16>, %w1: tensor<512x256xbf16> {fp8.weight},
                      %w2: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
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

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Negative: delayed scaling's quantize predicts its scale from a history
// and records the step's amax itself: no amax from the epilogue.
// CHECK-LABEL: func.func @delayed
// CHECK-NOT: amax_{{(in|out)}}
// CHECK: return
func.func @delayed(%x: tensor<?x256xbf16>, %w1: tensor<512x256xbf16> {fp8.weight},
                   %w2: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 16>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>} {
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
