// RUN: fp8-opt %s -split-input-file --fp8-quantize-annotated --canonicalize --cse --fp8-verify-target --fp8-fuse-epilogue | FileCheck %s
// RUN: fp8-opt %s -split-input-file "--fp8-compile=fuse-epilogue=true" | FileCheck %s --check-prefix=COMPILE
// RUN: fp8-opt %s -split-input-file --fp8-compile | FileCheck %s --check-prefix=DEFAULT
// RUN: not fp8-opt %s -split-input-file --fp8-fuse-epilogue 2>&1 | FileCheck %s --check-prefix=NOTARGET

// The pass runs after --fp8-verify-target (it needs the target and K-major
// operands); the first RUN line brings the IR there.
// NOTARGET: error: expected the module's 'fp8.target' (run --fp8-verify-target{arch=...} first)

// Gate and up projections (SwiGLU, DeepSeek recipe): one GEMM over their
// weights interleaved in 128-row blocks, quantized once; its result split
// for the SwiGLU, which the next quantize takes; marked fp8.epilogue.
// CHECK-LABEL: func.func @swiglu_pair
// CHECK-SAME: (%[[X:.+]]: tensor<?x256xbf16>, %[[WG:.+]]: tensor<384x256xbf16> {fp8.weight}, %[[WU:.+]]: tensor<384x256xbf16> {fp8.weight}
// CHECK: %[[W:.+]] = fp8.interleave_rows %[[WG]], %[[WU]] block 128 : tensor<384x256xbf16> -> tensor<768x256xbf16>
// CHECK: %[[WQ:.+]], %[[WS:.+]] = fp8.quantize %[[W]] granularity <128x128> : tensor<768x256xbf16> -> tensor<768x256xf8E4M3FN>, tensor<6x2xf32>
// CHECK: %[[GU:.+]] = fp8.scaled_matmul %{{.+}} scale %{{.+}} granularity <1x128>, %[[WQ]] scale %[[WS]] granularity <128x128> promotion_interval 128 {fp8.epilogue} : {{.*}} -> tensor<?x768xbf16>
// CHECK: %[[G:.+]], %[[U:.+]] = fp8.deinterleave_cols %[[GU]] block 128 : tensor<?x768xbf16> -> tensor<?x384xbf16>
// CHECK: %[[H:.+]] = linalg.generic {{.*}} ins(%[[G]], %[[U]] : tensor<?x384xbf16>, tensor<?x384xbf16>)
// CHECK: fp8.quantize %[[H]] granularity <1x128>
// CHECK-NOT: fp8.epilogue
// CHECK: return
// COMPILE-LABEL: func.func @swiglu_pair
// COMPILE: fp8.interleave_rows {{.*}} {fp8.kernel = {kind = "interleave", name = "fp8_interleave_rows_bf16_
// COMPILE: fp8.scaled_matmul {{.*}} {fp8.epilogue, fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm90a_n768_k256_e4m3t1x128_e4m3t128x128_p128_bf16_qe4m31x128pb128_{{[0-9a-f]+}}_128x256x128
// COMPILE: fp8.deinterleave_cols {{.*}} {fp8.fused_into = "fp8_gemm_sm90a_n768_k256_
// COMPILE: linalg.generic {{.*}}fp8.fused_into = "fp8_gemm_sm90a_n768_k256_
// COMPILE: fp8.quantize {{.*}}fp8.fused_into = "fp8_gemm_sm90a_n768_k256_
// DEFAULT-LABEL: func.func @swiglu_pair
// DEFAULT-NOT: fp8.interleave_rows
// DEFAULT-NOT: fp8.epilogue
// DEFAULT: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @swiglu_pair(%x: tensor<?x256xbf16>,
    %w_gate: tensor<384x256xbf16> {fp8.weight}, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %gate = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%x, %w_gate : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x384xbf16>, tensor<?x384xbf16>) outs(%e1 : tensor<?x384xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %r = arith.truncf %prod : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}

// -----

// The SwiGLU names the up projection first: the pair's first half is still
// the gate's, the program reads the halves the other way round.
// CHECK-LABEL: func.func @up_first
// CHECK: %[[W:.+]] = fp8.interleave_rows %arg1, %arg2 block 128
// CHECK: %[[G:.+]], %[[U:.+]] = fp8.deinterleave_cols
// CHECK: linalg.generic {{.*}} ins(%[[U]], %[[G]] :
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @up_first(%x: tensor<?x256xbf16>,
    %w_gate: tensor<384x256xbf16> {fp8.weight}, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %gate = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%x, %w_gate : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%up, %gate : tensor<?x384xbf16>, tensor<?x384xbf16>) outs(%e1 : tensor<?x384xbf16>) {
  ^bb0(%u: bf16, %g: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %r = arith.truncf %prod : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}

// -----

// One projection, GELU, the next quantize: marked, no interleave.
// CHECK-LABEL: func.func @gelu
// CHECK-NOT: fp8.interleave_rows
// CHECK: fp8.scaled_matmul {{.*}} {fp8.epilogue} : {{.*}} -> tensor<?x384xbf16>
// CHECK-NOT: fp8.deinterleave_cols
// CHECK: linalg.generic
// CHECK: fp8.quantize %{{.+}} granularity <1x128>
// CHECK: fp8.scaled_matmul
// CHECK-NOT: fp8.epilogue
// CHECK: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @gelu(%x: tensor<?x256xbf16>, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
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

// -----

// One projection straight into the next one's quantize: the identity.
// CHECK-LABEL: func.func @identity
// CHECK: fp8.scaled_matmul {{.*}} {fp8.epilogue} : {{.*}} -> tensor<?x384xbf16>
// CHECK-NEXT: fp8.quantize
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @identity(%x: tensor<?x256xbf16>, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%up, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}

// -----

// Whole rows (per_row activations) of 128 columns: one 128-column tile
// holds a row.
// CHECK-LABEL: func.func @per_row_narrow
// CHECK: fp8.scaled_matmul {{.*}} {fp8.epilogue} : {{.*}} -> tensor<?x128xbf16>
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @per_row_narrow(%x: tensor<?x256xbf16>, %w_up: tensor<128x256xbf16> {fp8.weight},
    %w_down: tensor<256x128xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x128xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<128x256xbf16>) outs(%z1 : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%up : tensor<?x128xbf16>) outs(%e1 : tensor<?x128xbf16>) {
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
  } -> tensor<?x128xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x128xbf16>, tensor<256x128xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}

// -----

// Left alone: whole rows of 384 columns, wider than any tile (a tile
// narrower than its scale block cannot quantize it).
// CHECK-LABEL: func.func @per_row_wide
// CHECK-NOT: fp8.epilogue
// CHECK: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @per_row_wide(%x: tensor<?x256xbf16>, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
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

// -----

// Left alone: the gate's result has a second user (it is returned).
// CHECK-LABEL: func.func @second_user
// CHECK-NOT: fp8.interleave_rows
// CHECK-NOT: fp8.epilogue
// CHECK: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @second_user(%x: tensor<?x256xbf16>,
    %w_gate: tensor<384x256xbf16> {fp8.weight}, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>, tensor<?x384xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %gate = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%x, %w_gate : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x384xbf16>, tensor<?x384xbf16>) outs(%e1 : tensor<?x384xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %r = arith.truncf %prod : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down, %gate : tensor<?x256xbf16>, tensor<?x384xbf16>
}

// -----

// Left alone: the elementwise op reads another tensor (a residual).
// CHECK-LABEL: func.func @residual
// CHECK-NOT: fp8.epilogue
// CHECK: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @residual(%x: tensor<?x256xbf16>, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}, %r: tensor<?x384xbf16>) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %h = linalg.add ins(%up, %r : tensor<?x384xbf16>, tensor<?x384xbf16>) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}

// -----

// Left alone: per-tensor weights (two tensors' scales cannot be one), and
// per-tensor delayed scaling of the activations (not row blocks).
// CHECK-LABEL: func.func @per_tensor_weights
// CHECK-NOT: fp8.interleave_rows
// CHECK-NOT: fp8.epilogue
// CHECK: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @per_tensor_weights(%x: tensor<?x256xbf16>,
    %w_gate: tensor<384x256xbf16> {fp8.weight}, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e1 = tensor.empty(%m) : tensor<?x384xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %gate = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%x, %w_gate : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %up = linalg.matmul indexing_maps = [#x, #wT, #y]
          ins(%x, %w_up : tensor<?x256xbf16>, tensor<384x256xbf16>) outs(%z1 : tensor<?x384xbf16>) -> tensor<?x384xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x384xbf16>, tensor<?x384xbf16>) outs(%e1 : tensor<?x384xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %r = arith.truncf %prod : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x384xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %down = linalg.matmul indexing_maps = [#x, #wT, #y]
            ins(%h, %w_down : tensor<?x384xbf16>, tensor<256x384xbf16>) outs(%z2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %down : tensor<?x256xbf16>
}

// -----

// CHECK-LABEL: func.func @delayed
// CHECK-NOT: fp8.epilogue
// CHECK: return
#x  = affine_map<(m, n, k) -> (m, k)>
#wT = affine_map<(m, n, k) -> (n, k)>
#y  = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @delayed(%x: tensor<?x256xbf16>, %w_up: tensor<384x256xbf16> {fp8.weight},
    %w_down: tensor<256x384xbf16> {fp8.weight}) -> (tensor<?x256xbf16>)
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <per_tensor>, <delayed, history = 4>>, b = <f8E4M3FN, <per_tensor>>>} {
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
