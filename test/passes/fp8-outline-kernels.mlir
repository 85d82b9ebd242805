// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-outline-kernels | FileCheck %s
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-outline-kernels=fuse-elementwise=false | FileCheck %s --check-prefix=NOFUSE
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-outline-kernels=fuse-transpose=false | FileCheck %s --check-prefix=NOTRANS

#id = affine_map<(m, n) -> (m, n)>

// A quantize, a GEMM, SwiGLU fused into the quantize it feeds (its only
// user), and a residual add (arith on tensors) with a kernel of its own.
// CHECK-LABEL: func.func @ffn
// CHECK: fp8.quantize %{{.+}} granularity <1x128> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_1x128_{{[0-9a-f]+}}", spec = {arch = "sm_90a", format = "e4m3fn", granularity = "1x128", kind = "quantize", program = {inputs = ["bf16"], ops = [], result = "in0"}, scaling = {mode = "current"}}}}
// CHECK: fp8.scaled_matmul {{.*}}{fp8.kernel = {kind = "gemm", name = "fp8_gemm_sm90a_n256_k256_e4m3t1x128_e4m3t128x128_p128_bf16_128x128x128s4w2c1x1rn8", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128", layout = "k_major"}, {{.*}}m = -1, n = 256, {{.*}}}>}
// CHECK: linalg.generic {{.*}} attrs =  {fp8.fused_into = "[[FUSED:fp8_quant_e4m3_1x128_fused_[0-9a-f]+]]"}
// CHECK: fp8.quantize %{{.+}} granularity <1x128> {fp8.kernel = {kind = "quantize", name = "[[FUSED]]", spec = {{{.*}}program = {inputs = ["bf16", "bf16"], ops = [{args = ["in0"], op = "convert", type = "f32"}, {args = ["%0"], op = "neg", type = "f32"}, {args = ["%1"], op = "exp", type = "f32"}, {args = ["%2", 1], op = "add", type = "f32"}, {args = ["%0", "%3"], op = "div", type = "f32"}, {args = ["in1"], op = "convert", type = "f32"}, {args = ["%4", "%5"], op = "mul", type = "f32"}, {args = ["%6"], op = "convert", type = "bf16"}], result = "%7"}
// CHECK: arith.addf %{{.+}}, %{{.+}} {fp8.kernel = {kind = "elementwise", name = "fp8_ew_bf16_{{[0-9a-f]+}}", spec = {arch = "sm_90a", kind = "elementwise", out = "bf16", program = {inputs = ["bf16", "bf16"], ops = [{args = ["in0", "in1"], op = "add", type = "bf16"}], result = "%0"}}}}
// NOFUSE-LABEL: func.func @ffn
// NOFUSE: linalg.generic {{.*}} attrs =  {fp8.kernel = {kind = "elementwise", name = "fp8_ew_bf16_{{[0-9a-f]+}}"
// NOFUSE: fp8.quantize %{{.+}} granularity <1x128> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_1x128_{{[0-9a-f]+}}", spec = {{{.*}}program = {inputs = ["bf16"], ops = [], result = "in0"}
module attributes {fp8.target = "sm_90a"} {
  func.func @ffn(%x: tensor<?x256xbf16>, %w: tensor<256x256xf8E4M3FN>, %ws: tensor<2x2xf32>,
                 %u: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<?x256xbf16>) {
    %c0 = arith.constant 0 : index
    %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
    %xq, %xs = fp8.quantize %x granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
    %g = fp8.scaled_matmul %xq scale %xs granularity <1x128>, %w scale %ws granularity <128x128>
           promotion_interval 128 {fp8.gemm = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "128x128"}, k = 256, m = -1, n = 256, out = "bf16", promotion_interval = 128, tile = {block_m = 128, block_n = 128, block_k = 128, stages = 4}}>}
        : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32> -> tensor<?x256xbf16>
    %e = tensor.empty(%m) : tensor<?x256xbf16>
    %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%g, %u : tensor<?x256xbf16>, tensor<?x256xbf16>) outs(%e : tensor<?x256xbf16>) {
    ^bb0(%a: bf16, %b: bf16, %o: bf16):
      %af = arith.extf %a : bf16 to f32
      %one = arith.constant 1.0 : f32
      %n = arith.negf %af : f32
      %ex = math.exp %n : f32
      %d = arith.addf %ex, %one : f32
      %s = arith.divf %af, %d : f32
      %bf = arith.extf %b : bf16 to f32
      %p = arith.mulf %s, %bf : f32
      %r = arith.truncf %p : f32 to bf16
      linalg.yield %r : bf16
    } -> tensor<?x256xbf16>
    %hq, %hs = fp8.quantize %h granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
    %y = arith.addf %x, %g : tensor<?x256xbf16>
    return %hq, %hs, %y : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<?x256xbf16>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>

// GELU (tanh form) read more than once is not fused: an elementwise kernel;
// a transpose; a GEMM whose tile the runtime picks.
// CHECK-LABEL: func.func @gelu_transpose
// CHECK: linalg.generic {{.*}}fp8.kernel = {kind = "elementwise", {{.*}}{args = ["%{{[0-9]+}}"], op = "tanh", type = "f32"}
// CHECK: fp8.transpose {{.*}}{fp8.kernel = {kind = "transpose", name = "fp8_transpose_e4m3_wx1_{{[0-9a-f]+}}", spec = {arch = "sm_90a", format = "e4m3fn", granularity = "per_column", kind = "transpose"}}}
// CHECK: fp8.scaled_matmul {{.*}}fp8.kernel = {kind = "gemm", {{.*}}fp8.tile_source = "runtime"
module attributes {fp8.target = "sm_90a"} {
  func.func @gelu_transpose(%x: tensor<64x128xf32>, %w: tensor<128x256xf8E4M3FN>, %ws: tensor<1x256xf32>)
      -> (tensor<64x128xf32>, tensor<64x256xbf16>) {
    %e = tensor.empty() : tensor<64x128xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c0 = arith.constant 0.044715 : f32
      %c1 = arith.constant 0.797884583 : f32
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %a2 = arith.mulf %a, %a : f32
      %a3 = arith.mulf %a2, %a : f32
      %t0 = math.fma %c0, %a3, %a : f32
      %t1 = arith.mulf %c1, %t0 : f32
      %th = math.tanh %t1 : f32
      %t2 = arith.addf %one, %th : f32
      %t3 = arith.mulf %half, %a : f32
      %r = arith.mulf %t3, %t2 : f32
      linalg.yield %r : f32
    } -> tensor<64x128xf32>
    %yq, %ys = fp8.quantize %y granularity <per_row> : tensor<64x128xf32> -> tensor<64x128xf8E4M3FN>, tensor<64x1xf32>
    %wt, %wts = fp8.transpose %w scale %ws granularity <per_column>
        : tensor<128x256xf8E4M3FN>, tensor<1x256xf32> -> tensor<256x128xf8E4M3FN>, tensor<256x1xf32>
    %d = fp8.scaled_matmul %yq scale %ys granularity <per_row>, %wt scale %wts granularity <per_row>
           promotion_interval 128 {fp8.gemm = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_row"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_row"}, k = 128, m = 64, n = 256, out = "bf16", promotion_interval = 128, tile = {block_m = 128, block_n = 128, block_k = 128, stages = 4}}>, fp8.tile_source = "runtime"}
        : tensor<64x128xf8E4M3FN>, tensor<64x1xf32>, tensor<256x128xf8E4M3FN>, tensor<256x1xf32> -> tensor<64x256xbf16>
    return %y, %d : tensor<64x128xf32>, tensor<64x256xbf16>
  }
}

// -----

// expected-error @+1 {{expected the module's 'fp8.target' (run --fp8-verify-target{arch=...} first)}}
module {
  func.func @no_target(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %x : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @unsupported_op(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{the runtime cannot execute 'tensor.extract_slice': a plan runs FP8 GEMMs, quantize, transpose, elementwise, row-sum, interleave and MoE permute and unpermute steps only}}
    %s = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>

module attributes {fp8.target = "sm_90a"} {
  func.func @transposed(%x: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %e = tensor.empty() : tensor<8x8xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': expected identity indexing maps, or inputs broadcast along the rows ((d0, d1) -> (d0)) or the columns ((d0, d1) -> (d1)); the runtime's kernels do not transpose}}
    %y = linalg.generic {indexing_maps = [#id, affine_map<(m, n) -> (n, m)>, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>

module attributes {fp8.target = "sm_90a"} {
  func.func @unsupported_body(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %e = tensor.empty() : tensor<8x8xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': the runtime has no elementwise kernel for 'math.log' (supported: arith add/sub/mul/div/neg/maximum/minimum/maxnum/minnum/extf/truncf and math exp/tanh/erf/absf/sqrt/rsqrt/fma)}}
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.log %a : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>

module attributes {fp8.target = "sm_90a"} {
  func.func @captured(%x: tensor<8x8xf32>, %s: f32) -> tensor<8x8xf32> {
    %e = tensor.empty() : tensor<8x8xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': the body uses a value defined outside the op that is not a float constant}}
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %s : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>

module attributes {fp8.target = "sm_90a"} {
  func.func @five_inputs(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>, %d: tensor<8x8xf32>, %f: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %e = tensor.empty() : tensor<8x8xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': expected at most 4 input tensors}}
    %y = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%a, %b, %c, %d, %f : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32, %a4: f32, %o: f32):
      %r0 = arith.addf %a0, %a1 : f32
      %r1 = arith.addf %r0, %a2 : f32
      %r2 = arith.addf %r1, %a3 : f32
      %r3 = arith.addf %r2, %a4 : f32
      linalg.yield %r3 : f32
    } -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @integer_elementwise(%a: tensor<8x8xi32>, %b: tensor<8x8xi32>) -> tensor<8x8xi32> {
    // expected-error @+1 {{the runtime cannot execute 'arith.addi': the runtime has no elementwise kernel for 'arith.addi'}}
    %y = arith.addi %a, %b : tensor<8x8xi32>
    return %y : tensor<8x8xi32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @stats(%x: tensor<8x32xbf16>) -> tensor<3xf32> {
    // expected-error @+1 {{'fp8.quantize' op cannot run on the runtime: its quantize kernels do not compute the statistics (the 'stats' result)}}
    %q, %s, %st = fp8.quantize %x granularity <per_tensor> : tensor<8x32xbf16> -> tensor<8x32xf8E4M3FN>, tensor<1x1xf32> stats tensor<3xf32>
    return %st : tensor<3xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @delayed_stack(%x: tensor<2x8x32xbf16>, %h: tensor<16xf32>) -> tensor<16xf32> {
    // expected-error @+1 {{'fp8.quantize' op cannot run on the runtime: delayed scaling of a stack of matrices (its kernels keep one amax history per matrix)}}
    %q, %s, %h1 = fp8.quantize %x history %h granularity <per_tensor> scaling <delayed>
        : tensor<2x8x32xbf16>, tensor<16xf32> -> tensor<2x8x32xf8E4M3FN>, tensor<2x1x1xf32>, tensor<16xf32>
    return %h1 : tensor<16xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @no_tile(%a: tensor<128x256xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<256x256xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<128x256xbf16> {
    // expected-error @+1 {{'fp8.scaled_matmul' op expected a tile configuration (run --fp8-select-config first)}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
        : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<256x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
    return %d : tensor<128x256xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @bad_tile(%a: tensor<128x256xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<256x256xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<128x256xbf16> {
    // expected-error @+1 {{'fp8.scaled_matmul' op has no kernel on sm_90a: expected block_m 64, 128 or 192, found 96}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.gemm = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor"}, k = 256, m = 128, n = 256, out = "bf16", promotion_interval = 0, tile = {block_m = 96, block_n = 128, block_k = 128, stages = 4}}>}
        : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<256x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
    return %d : tensor<128x256xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @dynamic_k(%a: tensor<128x?xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<256x?xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<128x256xbf16> {
    // expected-error @+1 {{'fp8.scaled_matmul' op cannot run on the runtime: expected static N and K (the kernels are generated for them), found N = 256, K = ?}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
        : tensor<128x?xf8E4M3FN>, tensor<1x1xf32>, tensor<256x?xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
    return %d : tensor<128x256xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @moe(%valid: tensor<8xi32>, %a: tensor<8x64x256xf8E4M3FN>, %as: tensor<8x64x2xf32>,
                 %b: tensor<8x256x128xf8E4M3FN>, %bs: tensor<8x2x1xf32>) -> tensor<8x64x128xbf16> {
    // expected-error @+1 {{'fp8.grouped_scaled_matmul' op cannot run on the runtime: expected K-major A and B for a grouped GEMM with data-dependent groups}}
    %d = fp8.grouped_scaled_matmul masked(%valid : tensor<8xi32>)
           %a scale %as granularity <1x128>, %b scale %bs granularity <128x128> layout mn_major promotion_interval 128
        : tensor<8x64x256xf8E4M3FN>, tensor<8x64x2xf32>, tensor<8x256x128xf8E4M3FN>, tensor<8x2x1xf32> -> tensor<8x64x128xbf16>
    return %d : tensor<8x64x128xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  // expected-error @+1 {{expected a single-block function, found 2 blocks}}
  func.func @multi_block(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    cf.br ^bb1
  ^bb1:
    return %x : tensor<8x8xf32>
  }
}

// -----

#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
#col = affine_map<(m, n) -> (n)>

// RMSNorm: the row sums of x^2, then the normalization, with the sums
// broadcast along the rows and the gain along the columns, both fused into
// the 1x128 quantize the normalization feeds: its kernel sums each row
// (row_sum, the sums its program's last input) and quantizes it in one
// pass; the zero fill needs no kernel. The other inputs are reordered so
// that the one with the op's shape comes first; a bias read along the
// columns keeps its own elementwise kernel.
// CHECK-LABEL: func.func @rmsnorm
// CHECK: linalg.fill {{.*}}fp8.fused_into = "[[NORM:fp8_quant_e4m3_1x128_fused_rowsum_[0-9a-f]+]]"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}fp8.fused_into = "[[NORM]]"
// CHECK: linalg.generic {{.*}}fp8.fused_into = "[[NORM]]"
// CHECK: fp8.quantize {{.*}}name = "[[NORM]]", spec = {{{.*}}program = {broadcast = ["none", "col", "row"], inputs = ["bf16", "bf16", "f32"], ops = [{args = ["in2", 2.44140625E-4], op = "mul", type = "f32"}, {args = ["%0", 9.9999997473787516E-6], op = "add", type = "f32"}, {args = ["%1"], op = "rsqrt", type = "f32"}, {args = ["in0"], op = "convert", type = "f32"}, {args = ["%3", "%2"], op = "mul", type = "f32"}, {args = ["%4"], op = "convert", type = "bf16"}, {args = ["in1", "%5"], op = "mul", type = "bf16"}], result = "%6"}, row_sum = {broadcast = ["none", "col"], inputs = ["bf16", "bf16"], ops = [{args = ["in0"], op = "convert", type = "f32"}, {args = ["%0", "%0"], op = "mul", type = "f32"}], result = "%1"}
// CHECK: linalg.generic {{.*}}fp8.kernel = {kind = "elementwise", {{.*}}program = {broadcast = ["none", "col"], inputs = ["bf16", "bf16"]
// Without fusion: a reduce kernel, the normalization's elementwise kernel.
// NOFUSE-LABEL: func.func @rmsnorm
// NOFUSE: linalg.fill {{.*}}fp8.fused_into = "[[SUM:fp8_reduce_rows_[0-9a-f]+]]"
// NOFUSE: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}fp8.kernel = {kind = "reduce", name = "[[SUM]]", spec = {arch = "sm_90a", kind = "reduce", out = "f32", program = {inputs = ["bf16"], ops = [{args = ["in0"], op = "convert", type = "f32"}, {args = ["%0", "%0"], op = "mul", type = "f32"}], result = "%1"}}}
// NOFUSE: linalg.generic {{.*}}fp8.kernel = {kind = "elementwise"
// NOFUSE: fp8.quantize {{.*}}program = {inputs = ["bf16"], ops = [], result = "in0"}
module attributes {fp8.target = "sm_90a"} {
  func.func @rmsnorm(%x: tensor<?x4096xbf16>, %g: tensor<4096xbf16>, %bias: tensor<4096xbf16>)
      -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>, tensor<?x4096xbf16>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x4096xbf16>
    %es = tensor.empty(%m) : tensor<?xf32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<?xf32>) -> tensor<?xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
            ins(%x : tensor<?x4096xbf16>) outs(%zs : tensor<?xf32>) {
    ^bb0(%a: bf16, %acc: f32):
      %af = arith.extf %a : bf16 to f32
      %sq = arith.mulf %af, %af : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e = tensor.empty(%m) : tensor<?x4096xbf16>
    %n = linalg.generic {indexing_maps = [#row, #id, #col, #id], iterator_types = ["parallel", "parallel"]}
           ins(%ss, %x, %g : tensor<?xf32>, tensor<?x4096xbf16>, tensor<4096xbf16>) outs(%e : tensor<?x4096xbf16>) {
    ^bb0(%s: f32, %a: bf16, %gg: bf16, %o: bf16):
      %inv = arith.constant 2.44140625e-04 : f32
      %eps = arith.constant 1.0e-05 : f32
      %mean = arith.mulf %s, %inv : f32
      %v = arith.addf %mean, %eps : f32
      %r = math.rsqrt %v : f32
      %af = arith.extf %a : bf16 to f32
      %nf = arith.mulf %af, %r : f32
      %nb = arith.truncf %nf : f32 to bf16
      %p = arith.mulf %gg, %nb : bf16
      linalg.yield %p : bf16
    } -> tensor<?x4096xbf16>
    %q, %qs = fp8.quantize %n granularity <1x128> : tensor<?x4096xbf16> -> tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>
    %b = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x, %bias : tensor<?x4096xbf16>, tensor<4096xbf16>) outs(%e : tensor<?x4096xbf16>) {
    ^bb0(%a: bf16, %c: bf16, %o: bf16):
      %r = arith.addf %a, %c : bf16
      linalg.yield %r : bf16
    } -> tensor<?x4096xbf16>
    return %q, %qs, %b : tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>, tensor<?x4096xbf16>
  }
}

// -----

#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>

// What keeps the row sum a reduce step of its own: the sums have a second
// user (here a result), the quantize takes 128x128 blocks (a CTA's row is
// not a block), the normalization reads another tensor than the one summed.
// The normalization is still fused into its quantize.
// CHECK-LABEL: func.func @sums_returned
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}fp8.kernel = {kind = "reduce"
// CHECK: fp8.quantize {{.*}}name = "fp8_quant_e4m3_1x128_fused_{{[0-9a-f]+}}"
// CHECK-NOT: row_sum
// CHECK-LABEL: func.func @tile_blocks
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}fp8.kernel = {kind = "reduce"
// CHECK: fp8.quantize {{.*}}name = "fp8_quant_e4m3_128x128_fused_{{[0-9a-f]+}}"
// CHECK-NOT: row_sum
// CHECK-LABEL: func.func @other_tensor
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}fp8.kernel = {kind = "reduce"
// CHECK: fp8.quantize {{.*}}name = "fp8_quant_e4m3_1x128_fused_{{[0-9a-f]+}}"
// CHECK-NOT: row_sum
module attributes {fp8.target = "sm_90a"} {
  func.func @sums_returned(%x: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<?xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
    %es = tensor.empty(%m) : tensor<?xf32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<?xf32>) -> tensor<?xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
            ins(%x : tensor<?x256xbf16>) outs(%zs : tensor<?xf32>) {
    ^bb0(%a: bf16, %acc: f32):
      %af = arith.extf %a : bf16 to f32
      %sq = arith.mulf %af, %af : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e = tensor.empty(%m) : tensor<?x256xbf16>
    %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x, %ss : tensor<?x256xbf16>, tensor<?xf32>) outs(%e : tensor<?x256xbf16>) {
    ^bb0(%a: bf16, %s: f32, %o: bf16):
      %r = math.rsqrt %s : f32
      %af = arith.extf %a : bf16 to f32
      %nf = arith.mulf %af, %r : f32
      %nb = arith.truncf %nf : f32 to bf16
      linalg.yield %nb : bf16
    } -> tensor<?x256xbf16>
    %q, %qs = fp8.quantize %n granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
    return %q, %qs, %ss : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<?xf32>
  }

  func.func @tile_blocks(%x: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
    %es = tensor.empty(%m) : tensor<?xf32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<?xf32>) -> tensor<?xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
            ins(%x : tensor<?x256xbf16>) outs(%zs : tensor<?xf32>) {
    ^bb0(%a: bf16, %acc: f32):
      %af = arith.extf %a : bf16 to f32
      %sq = arith.mulf %af, %af : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e = tensor.empty(%m) : tensor<?x256xbf16>
    %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x, %ss : tensor<?x256xbf16>, tensor<?xf32>) outs(%e : tensor<?x256xbf16>) {
    ^bb0(%a: bf16, %s: f32, %o: bf16):
      %r = math.rsqrt %s : f32
      %af = arith.extf %a : bf16 to f32
      %nf = arith.mulf %af, %r : f32
      %nb = arith.truncf %nf : f32 to bf16
      linalg.yield %nb : bf16
    } -> tensor<?x256xbf16>
    %q, %qs = fp8.quantize %n granularity <128x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
    return %q, %qs : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
  }

  func.func @other_tensor(%x: tensor<?x256xbf16>, %y: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
    %es = tensor.empty(%m) : tensor<?xf32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<?xf32>) -> tensor<?xf32>
    %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
            ins(%y : tensor<?x256xbf16>) outs(%zs : tensor<?xf32>) {
    ^bb0(%a: bf16, %acc: f32):
      %af = arith.extf %a : bf16 to f32
      %sq = arith.mulf %af, %af : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e = tensor.empty(%m) : tensor<?x256xbf16>
    %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x, %ss : tensor<?x256xbf16>, tensor<?xf32>) outs(%e : tensor<?x256xbf16>) {
    ^bb0(%a: bf16, %s: f32, %o: bf16):
      %r = math.rsqrt %s : f32
      %af = arith.extf %a : bf16 to f32
      %nf = arith.mulf %af, %r : f32
      %nb = arith.truncf %nf : f32 to bf16
      linalg.yield %nb : bf16
    } -> tensor<?x256xbf16>
    %q, %qs = fp8.quantize %n granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
    return %q, %qs : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
  }
}

// -----

#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>

module attributes {fp8.target = "sm_90a"} {
  func.func @product(%x: tensor<8x64xf32>) -> tensor<8xf32> {
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<8xf32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8xf32>) -> tensor<8xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': expected a sum: the body yields arith.addf of the accumulator and a value computed without it}}
    %p = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<8x64xf32>) outs(%zs : tensor<8xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.mulf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<8xf32>
    return %p : tensor<8xf32>
  }
}

// -----

#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>

module attributes {fp8.target = "sm_90a"} {
  func.func @sum_from_one(%x: tensor<8x64xf32>) -> tensor<8xf32> {
    %one = arith.constant 1.0 : f32
    %es = tensor.empty() : tensor<8xf32>
    %zs = linalg.fill ins(%one : f32) outs(%es : tensor<8xf32>) -> tensor<8xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': expected the sums to start from a fill of 0.0 (the reduce kernel writes them whole)}}
    %p = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<8x64xf32>) outs(%zs : tensor<8xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<8xf32>
    return %p : tensor<8xf32>
  }
}

// -----

#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>

module attributes {fp8.target = "sm_90a"} {
  func.func @bf16_sums(%x: tensor<8x64xbf16>) -> tensor<8xbf16> {
    %zero = arith.constant 0.0 : bf16
    %es = tensor.empty() : tensor<8xbf16>
    %zs = linalg.fill ins(%zero : bf16) outs(%es : tensor<8xbf16>) -> tensor<8xbf16>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': expected f32 row sums, found tensor<8xbf16>}}
    %p = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<8x64xbf16>) outs(%zs : tensor<8xbf16>) {
    ^bb0(%a: bf16, %acc: bf16):
      %r = arith.addf %acc, %a : bf16
      linalg.yield %r : bf16
    } -> tensor<8xbf16>
    return %p : tensor<8xbf16>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>
#cl = affine_map<(m, n) -> (n)>

// A sum down the columns (the reduction first) is not a row sum.
module attributes {fp8.target = "sm_90a"} {
  func.func @column_sums(%x: tensor<8x64xf32>) -> tensor<64xf32> {
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<64xf32>
    %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<64xf32>) -> tensor<64xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.generic': a plan runs FP8 GEMMs, quantize, transpose, elementwise, row-sum, interleave and MoE permute and unpermute steps only}}
    %p = linalg.generic {indexing_maps = [#id, #cl], iterator_types = ["reduction", "parallel"]}
           ins(%x : tensor<8x64xf32>) outs(%zs : tensor<64xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<64xf32>
    return %p : tensor<64xf32>
  }
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A matmul without a recipe reduces along its last loop but is no row sum.
module attributes {fp8.target = "sm_90a"} {
  func.func @bf16_matmul(%a: tensor<64x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64x128xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
    // expected-error @+1 {{the runtime cannot execute 'linalg.matmul': a plan runs FP8 GEMMs, quantize, transpose, elementwise, row-sum, interleave and MoE permute and unpermute steps only}}
    %p = linalg.matmul indexing_maps = [#mk, #nk, #mn]
           ins(%a, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%z : tensor<64x128xf32>) -> tensor<64x128xf32>
    return %p : tensor<64x128xf32>
  }
}

// -----

// A deinterleave that no GEMM's epilogue computes has no kernel.
module attributes {fp8.target = "sm_90a"} {
  func.func @lone_deinterleave(%d: tensor<?x512xbf16>) -> tensor<?x256xbf16> {
    // expected-error @+1 {{the runtime runs 'fp8.deinterleave_cols' only in the epilogue of the GEMM that produces its input (--fp8-fuse-epilogue arranges it), found it on its own}}
    %a, %b = fp8.deinterleave_cols %d block 128 : tensor<?x512xbf16> -> tensor<?x256xbf16>
    return %a : tensor<?x256xbf16>
  }
}

// -----

// A matmul marked fp8.epilogue whose GEMM spec has none: the spec was
// selected before the fusion.
module attributes {fp8.target = "sm_90a"} {
  func.func @stale_spec(%xq: tensor<?x256xf8E4M3FN>, %xs: tensor<?x2xf32>, %w: tensor<256x256xf8E4M3FN>, %ws: tensor<2x2xf32>)
      -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf32>) {
    // expected-error @+1 {{'fp8.scaled_matmul' op is marked fp8.epilogue but its GEMM spec has no epilogue (run --fp8-select-config after --fp8-fuse-epilogue)}}
    %g = fp8.scaled_matmul %xq scale %xs granularity <1x128>, %w scale %ws granularity <128x128>
           promotion_interval 128 {fp8.epilogue, fp8.gemm = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "128x128"}, k = 256, m = -1, n = 256, out = "bf16", promotion_interval = 128, tile = {block_m = 128, block_n = 128, block_k = 128, stages = 4}}>}
        : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32> -> tensor<?x256xbf16>
    %hq, %hs = fp8.quantize %g granularity <1x128> : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
    return %hq, %hs : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>
  }
}

// -----

// The weight gradients' tokens: a 128x1 quantize whose codes and scales a
// transpose alone reads writes them transposed, the transpose fused in (its
// step's outputs are the transpose's). Not fused: a transpose of codes that
// another op reads too, and one of 128x128 blocks (no column path).
// CHECK-LABEL: func.func @fused_transpose
// CHECK: fp8.quantize %arg0 granularity <128x1> {fp8.kernel = {kind = "quantize", name = "[[T:fp8_quant_e4m3_128x1_tr_[0-9a-f]+]]", spec = {arch = "sm_90a", format = "e4m3fn", granularity = "128x1", kind = "quantize", program = {inputs = ["bf16"], ops = [], result = "in0"}, scaling = {mode = "current"}, transposed = true}}}
// CHECK-NEXT: fp8.transpose {{.*}} {fp8.fused_into = "[[T]]"}
// CHECK-NEXT: fp8.quantize %arg1 granularity <128x1> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_128x1_{{[0-9a-f]+}}", spec = {arch = "sm_90a", format = "e4m3fn", granularity = "128x1", kind = "quantize", program = {inputs = ["bf16"], ops = [], result = "in0"}, scaling = {mode = "current"}}}}
// CHECK-NEXT: fp8.transpose {{.*}} {fp8.kernel = {kind = "transpose", name = "fp8_transpose_e4m3_128x1_{{[0-9a-f]+}}"
// CHECK-NEXT: fp8.quantize %arg2 granularity <128x128> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_128x128_{{[0-9a-f]+}}"
// CHECK-NEXT: fp8.transpose {{.*}} {fp8.kernel = {kind = "transpose", name = "fp8_transpose_e4m3_128x128_{{[0-9a-f]+}}"
// NOTRANS-LABEL: func.func @fused_transpose
// NOTRANS: fp8.quantize %arg0 granularity <128x1> {fp8.kernel = {kind = "quantize", name = "fp8_quant_e4m3_128x1_{{[0-9a-f]+}}", spec = {arch = "sm_90a", format = "e4m3fn", granularity = "128x1", kind = "quantize", program = {inputs = ["bf16"], ops = [], result = "in0"}, scaling = {mode = "current"}}}}
// NOTRANS-NEXT: fp8.transpose {{.*}} {fp8.kernel = {kind = "transpose", name = "fp8_transpose_e4m3_128x1_{{[0-9a-f]+}}"
module attributes {fp8.target = "sm_90a"} {
  func.func @fused_transpose(%x: tensor<256x64xbf16>, %y: tensor<256x64xbf16>, %w: tensor<256x256xbf16>)
      -> (tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<64x256xf8E4M3FN>, tensor<64x2xf32>,
          tensor<256x64xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>) {
    %xq, %xs = fp8.quantize %x granularity <128x1> : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<2x64xf32>
    %xt, %xts = fp8.transpose %xq scale %xs granularity <128x1>
        : tensor<256x64xf8E4M3FN>, tensor<2x64xf32> -> tensor<64x256xf8E4M3FN>, tensor<64x2xf32>
    %yq, %ys = fp8.quantize %y granularity <128x1> : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<2x64xf32>
    %yt, %yts = fp8.transpose %yq scale %ys granularity <128x1>
        : tensor<256x64xf8E4M3FN>, tensor<2x64xf32> -> tensor<64x256xf8E4M3FN>, tensor<64x2xf32>
    %wq, %ws = fp8.quantize %w granularity <128x128> : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<2x2xf32>
    %wt, %wts = fp8.transpose %wq scale %ws granularity <128x128>
        : tensor<256x256xf8E4M3FN>, tensor<2x2xf32> -> tensor<256x256xf8E4M3FN>, tensor<2x2xf32>
    return %xt, %xts, %yt, %yts, %yq, %wt, %wts
        : tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<64x256xf8E4M3FN>, tensor<64x2xf32>,
          tensor<256x64xf8E4M3FN>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>
  }
}
