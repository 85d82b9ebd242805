// The registered pipeline: quantize, canonicalize + cse, verify for the
// target, select tiles, outline kernels; its options reach every pass.
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-compile=arch=sm_90a | FileCheck %s
// RUN: fp8-opt %s -split-input-file -verify-diagnostics "--fp8-compile=arch=sm_90a m-hint=0 fuse-elementwise=false fold-constants=false" | FileCheck %s --check-prefix=OPTS
// RUN: fp8-opt %s -split-input-file -verify-diagnostics "--fp8-compile=arch=sm_90a tuning-db=%S/Inputs/tuning-db.json" | FileCheck %s --check-prefix=DB
// RUN: fp8-opt %s -split-input-file -verify-diagnostics "--fp8-compile=arch=sm_90a sm-count=114" | FileCheck %s --check-prefix=SMS
// RUN: not fp8-opt %s "--fp8-compile=arch=sm_89" 2>&1 | FileCheck %s --check-prefix=ARCH

// ARCH: error: expected arch sm_90a or sm_100a, found 'sm_89'

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// CHECK: module attributes {fp8.target = "sm_90a"}
// CHECK-LABEL: func.func @ffn
// The constant weight is quantized at compile time (no kernel); the weight
// argument and the activations get quantize kernels; ReLU is fused into
// the quantize of its result; the constant read [K, N] is transposed.
// CHECK: %[[WS:.+]] = arith.constant dense<5.58035739E-4> : tensor<4x2xf32>
// CHECK: %[[WQ:.+]] = arith.constant {fp8.source = dense<2.500000e-01> : tensor<512x256xbf16>} dense<4.480000e+02> : tensor<512x256xf8E4M3FN>
// CHECK: fp8.quantize %arg0 granularity <1x128> {fp8.kernel = {kind = "quantize"
// CHECK: fp8.quantize %arg1 granularity <128x128> {fp8.kernel = {kind = "quantize"
// CHECK: fp8.scaled_matmul {{.*}}fp8.kernel = {kind = "gemm"{{.*}}fp8.tile_source = "heuristic for M = 4096 (m-hint), 132 SMs"
// CHECK: linalg.generic {{.*}}fp8.fused_into = "fp8_quant_e4m3_1x128_fused_{{[0-9a-f]+}}"
// CHECK: fp8.quantize %{{.+}} granularity <1x128> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_1x128_fused_
// CHECK: fp8.transpose %[[WQ]] scale %[[WS]] granularity <128x128> {fp8.kernel = {kind = "transpose"
// CHECK: fp8.scaled_matmul {{.*}}fp8.kernel = {kind = "gemm"
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// OPTS-LABEL: func.func @ffn
// OPTS: fp8.quantize %cst granularity <128x128> {fp8.kernel
// OPTS: fp8.tile_source = "runtime"
// OPTS: linalg.generic {{.*}}fp8.kernel = {kind = "elementwise"
// DB-LABEL: func.func @ffn
// DB: fp8.tile_source = "tuning-db: nearest, measured at 256x512x256 for M = 4096 (m-hint)"
// DB: fp8.tile_source = "tuning-db: nearest, measured at 256x512x256 for M = 4096 (m-hint)"
// SMS: fp8.tile_source = "heuristic for M = 4096 (m-hint), 114 SMs"
func.func @ffn(%x: tensor<?x256xbf16>, %w1: tensor<512x256xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %w2 = arith.constant dense<0.25> : tensor<512x256xbf16>
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
  %r2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%r2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  // B is the constant read [K, N]: MN-major.
  %y = linalg.matmul ins(%r, %w2 : tensor<?x512xbf16>, tensor<512x256xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
