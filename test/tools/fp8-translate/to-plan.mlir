// The plan of a compiled graph: buffers with their roles and symbolic
// shapes, the steps in order with their phases and kernel specs, the
// unquantized reference. (invalid-plan.mlir has the errors.)
// RUN: fp8-opt %s --fp8-compile=arch=sm_90a --mlir-print-debuginfo | fp8-translate --fp8-to-plan | FileCheck %s

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// CHECK:      "format": 1,
// CHECK-NEXT: "function": "block",
// CHECK-NEXT: "arch": "sm_90a",
// CHECK-NEXT: "dims": [
// CHECK-NEXT:   "M"
// CHECK-NEXT: ],
// CHECK:      "name": "arg0",
// CHECK-NEXT: "role": "input",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT:   "M",
// CHECK-NEXT:   256
// CHECK:      "name": "arg1",
// CHECK-NEXT: "role": "weight",
// CHECK:      "name": "arg2",
// CHECK-NEXT: "role": "state",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT:   20
// CHECK-NEXT: ],
// CHECK-NEXT: "history": 16
// Scales of a per-tensor quantize: [1, 1].
// CHECK:      "name": "t1",
// CHECK-NEXT: "role": "temp",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT:   1,
// CHECK-NEXT:   1
// CHECK:      "name": "result0",
// CHECK-NEXT: "role": "output",
// CHECK:      "steps": [
// CHECK:      "name": "quantize_0",
// CHECK-NEXT: "kind": "quantize",
// CHECK-NEXT: "phase": "run",
// CHECK-NEXT: "op": "fp8.quantize at to-plan.mlir:{{[0-9]+}}:{{[0-9]+}}",
// CHECK-NEXT: "inputs": [
// CHECK-NEXT:   "arg0"
// CHECK:      "state": "arg2",
// CHECK-NEXT: "kernel": "fp8_quant_e4m3_wxw_delayed_{{[0-9a-f]+}}",
// CHECK:      "mode": "delayed"
// CHECK:      "name": "quantize_1",
// CHECK-NEXT: "kind": "quantize",
// CHECK-NEXT: "phase": "prepare",
// CHECK:      "name": "gemm_2",
// CHECK-NEXT: "kind": "gemm",
// CHECK-NEXT: "phase": "run",
// CHECK:      "batch": 1,
// CHECK-NEXT: "tile_source": "heuristic for M = 4096 (m-hint), 132 SMs",
// CHECK-NEXT: "runtime_tile": false,
// CHECK-NEXT: "spec": {
// CHECK:      "name": "elementwise_3",
// CHECK-NEXT: "kind": "elementwise",
// CHECK:      "op": "linalg.generic at to-plan.mlir:{{[0-9]+}}:{{[0-9]+}}",
// CHECK:      "op": "tanh",
// CHECK:      "outputs": [
// CHECK-NEXT:   "result0"
// CHECK-NEXT: ],
// CHECK:      "reference": [
// CHECK:      "op": "matmul",
// CHECK-NEXT: "inputs": [
// CHECK-NEXT:   "arg0",
// CHECK-NEXT:   "arg1"
// CHECK-NEXT: ],
// CHECK-NEXT: "out": "t4",
// CHECK-NEXT: "dtype": "bf16",
// CHECK:      "a_layout": "k_major",
// CHECK-NEXT: "b_layout": "k_major",
// CHECK-NEXT: "batched": false
// CHECK:      "op": "elementwise",
// CHECK-NEXT: "inputs": [
// CHECK-NEXT:   "t4"
// CHECK-NEXT: ],
// CHECK-NEXT: "out": "result0",
func.func @block(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16> {fp8.weight}) -> tensor<?x128xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%m) : tensor<?x128xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%e : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%y : tensor<?x128xbf16>) outs(%e : tensor<?x128xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %f = arith.extf %a : bf16 to f32
    %h = math.tanh %f : f32
    %r = arith.truncf %h : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x128xbf16>
  return %t : tensor<?x128xbf16>
}
