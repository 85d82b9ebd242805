// Every error of --fp8-to-plan: what the runtime cannot execute, or what the
// plan cannot describe, named at its op. (Hand-written compiled IR.)
// RUN: fp8-translate %s --fp8-to-plan -split-input-file -verify-diagnostics

// expected-error @+1 {{expected the module's 'fp8.target' (compile it with fp8-opt --fp8-compile{arch=...} first)}}
module {
  func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %x : tensor<8x8xf32>
  }
}

// -----

// expected-error @+1 {{expected one function with a body (the graph), found 2}}
module attributes {fp8.target = "sm_90a"} {
  func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %x : tensor<8x8xf32>
  }
  func.func @g(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %x : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @no_kernel(%q: tensor<8x32xf8E4M3FN>, %s: tensor<1x1xf32>) -> tensor<8x32xbf16> {
    // expected-error @+1 {{the runtime cannot execute 'fp8.dequantize': it has no fp8.kernel (run --fp8-compile, or --fp8-outline-kernels, first)}}
    %d = fp8.dequantize %q scale %s granularity <per_tensor> : tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x32xbf16>
    return %d : tensor<8x32xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @returns_argument(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{the plan cannot return an argument or a constant unchanged (result 0)}}
    return %x : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @unknown_size(%n: index) -> tensor<?x8xf32> {
    // expected-error @+1 {{cannot follow this tensor's dynamic size: expected it to be a tensor.dim of another tensor of the graph}}
    %e = tensor.empty(%n) : tensor<?x8xf32>
    return %e : tensor<?x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @bad_spec(%x: tensor<8x32xbf16>) -> (tensor<8x32xf8E4M3FN>, tensor<1x1xf32>) {
    // expected-error @+1 {{bad fp8.kernel: expected 'arch' (sm_90a or sm_100a) in the kernel spec}}
    %q, %s = fp8.quantize %x granularity <per_tensor> {fp8.kernel = {kind = "quantize", name = "k", spec = {kind = "quantize"}}}
        : tensor<8x32xbf16> -> tensor<8x32xf8E4M3FN>, tensor<1x1xf32>
    return %q, %s : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @bad_gemm_spec(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+2 {{expected key 'arch' in kernel spec}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{n = 8}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}

// -----

#id = affine_map<(m, n) -> (m, n)>
module attributes {fp8.target = "sm_90a"} {
  func.func @stale_fusion(%x: tensor<8x32xbf16>) -> (tensor<8x32xf8E4M3FN>, tensor<1x1xf32>) {
    %e = tensor.empty() : tensor<8x32xbf16>
    // expected-error @+1 {{the elementwise op fused into k no longer matches its program}}
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%x : tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) attrs = {fp8.fused_into = "k"} {
    ^bb0(%a: bf16, %o: bf16):
      %r = arith.negf %a : bf16
      linalg.yield %r : bf16
    } -> tensor<8x32xbf16>
    %q, %s = fp8.quantize %n granularity <per_tensor>
        {fp8.kernel = {kind = "quantize", name = "k", spec = {arch = "sm_90a", format = "e4m3fn", granularity = "per_tensor", kind = "quantize", program = {inputs = ["bf16"], ops = [], result = "in0"}, scaling = {mode = "current"}}}}
        : tensor<8x32xbf16> -> tensor<8x32xf8E4M3FN>, tensor<1x1xf32>
    return %q, %s : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @moe(%offsets: tensor<9xi32>, %a: tensor<16x256xf8E4M3FN>, %as: tensor<1x1xf32>,
                 %b: tensor<8x128x256xf8E4M3FN>, %bs: tensor<8x1x1xf32>) -> tensor<16x128xbf16> {
    // expected-error @+1 {{the runtime cannot execute this GEMM: its fp8.kernel is a dense GEMM, expected a grouped_contiguous one (the op's)}}
    %d = fp8.grouped_scaled_matmul contiguous(%offsets : tensor<9xi32>)
           %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 256, n = 128, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>}}
        : tensor<16x256xf8E4M3FN>, tensor<1x1xf32>, tensor<8x128x256xf8E4M3FN>, tensor<8x1x1xf32> -> tensor<16x128xbf16>
    return %d : tensor<16x128xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @elementwise_mismatch(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{the runtime cannot execute 'math.log': the runtime has no elementwise kernel for 'math.log'}}
    %y = math.log %x {fp8.kernel = {kind = "elementwise", name = "k", spec = {arch = "sm_90a", kind = "elementwise", out = "f32", program = {inputs = ["f32"], ops = [], result = "in0"}}}} : tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @fp8_input(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+1 {{cannot find the high-precision value behind this GEMM's FP8 operand (expected fp8.quantize, fp8.transpose or a constant with fp8.source)}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @splat_input(%f: f32) -> tensor<8x8xf32> {
    %s = tensor.splat %f : tensor<8x8xf32>
    // expected-error @+1 {{the reference graph has no value for an operand of this op}}
    %y = arith.negf %s {fp8.kernel = {kind = "elementwise", name = "k", spec = {arch = "sm_90a", kind = "elementwise", out = "f32", program = {inputs = ["f32"], ops = [{args = ["in0"], op = "neg", type = "f32"}], result = "%0"}}}} : tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  // expected-error @+1 {{the plan is inconsistent: graph output 'result0' is never written by a step}}
  func.func @splat_output(%f: f32) -> tensor<8x8xf32> {
    %s = tensor.splat %f : tensor<8x8xf32>
    return %s : tensor<8x8xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @integer_output(%i: i16) -> tensor<8xi16> {
    %s = tensor.splat %i : tensor<8xi16>
    // expected-error @+1 {{the plan cannot hold a value of type 'tensor<8xi16>'}}
    return %s : tensor<8xi16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @quotient_of_quotient(%x: tensor<?x256xf32>) -> (tensor<?x256xf8E4M3FN>, tensor<?x1xf8E4M3FN>, tensor<?x1xf32>) {
    %q, %s = fp8.quantize %x granularity <128x256> : tensor<?x256xf32> -> tensor<?x256xf8E4M3FN>, tensor<?x1xf32>
    // expected-error @+1 {{cannot describe the scale shape of a tensor whose size is already a quotient}}
    %q2, %s2 = fp8.quantize %s granularity <128x1> : tensor<?x1xf32> -> tensor<?x1xf8E4M3FN>, tensor<?x1xf32>
    return %q, %q2, %s2 : tensor<?x256xf8E4M3FN>, tensor<?x1xf8E4M3FN>, tensor<?x1xf32>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @resource_constant(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @+1 {{expected a dense constant of static shape for the plan}}
    %c = arith.constant dense_resource<blob> : tensor<4x4xf32>
    %y = arith.addf %x, %c {fp8.kernel = {kind = "elementwise", name = "k", spec = {arch = "sm_90a", kind = "elementwise", out = "f32", program = {inputs = ["f32", "f32"], ops = [{args = ["in0", "in1"], op = "add", type = "f32"}], result = "%0"}}}} : tensor<4x4xf32>
    return %y : tensor<4x4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x04000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}

// Kernel specs in the IR are input too: their integers are read as 64 bits
// and checked against the ranges the plan parser uses (99999999999 arrived
// in the plan truncated to 32 bits, as 1215752191).
// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @huge_warpgroups(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+2 {{expected 'math_warpgroups' in tile to be an integer in [1, 4], found 99999999999}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4, math_warpgroups = 99999999999}}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @wide_integer(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+2 {{expected 'block_n' in tile to be an integer in [1, 256], found 1.2676506002282294e+30}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 1267650600228229401496703205376 : i128, stages = 4}}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @float_stages(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+2 {{expected 'stages' in tile to be an integer in [2, 32], found 4.0}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4.0}}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @zero_block(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+2 {{expected 'block_n' in tile to be an integer in [1, 256], found 0}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 0, stages = 4}}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}

// -----

module attributes {fp8.target = "sm_90a"} {
  func.func @bool_persistent(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
    // expected-error @+2 {{expected 'persistent' in tile to be a boolean, found 1}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
           {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4, persistent = 1}}>}}
        : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
    return %d : tensor<8x8xbf16>
  }
}
