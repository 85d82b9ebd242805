// Every error of --fp8-to-cuda, named at its op.
// RUN: fp8-translate %s --fp8-to-cuda -split-input-file -verify-diagnostics

// expected-error @+1 {{no fp8.kernel in the module (compile it with fp8-opt --fp8-compile{arch=...} first)}}
module {
  func.func @f(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %x : tensor<8x8xf32>
  }
}

// -----

func.func @bad_gemm_spec(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
  // expected-error @+2 {{expected key 'arch' in kernel spec}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
         {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{n = 8}>}}
      : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
  return %d : tensor<8x8xbf16>
}

// -----

func.func @illegal_gemm(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
  // expected-error @+1 {{cannot generate kernel k: expected K (40) to be a multiple of 16: TMA needs 16-byte aligned row strides for the FP8 operands}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
         {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 40, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4}}>}}
      : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
  return %d : tensor<8x8xbf16>
}

// -----

func.func @bad_aux_spec(%x: tensor<8x32xbf16>) -> (tensor<8x32xf8E4M3FN>, tensor<1x1xf32>) {
  // expected-error @+1 {{bad fp8.kernel: expected 'kind' (elementwise, quantize, transpose, permute, unpermute, reduce or interleave) in the kernel spec, found none}}
  %q, %s = fp8.quantize %x granularity <per_tensor> {fp8.kernel = {kind = "quantize", name = "k", spec = {arch = "sm_90a"}}}
      : tensor<8x32xbf16> -> tensor<8x32xf8E4M3FN>, tensor<1x1xf32>
  return %q, %s : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>
}

// -----

func.func @huge_warpgroups(%a: tensor<8x32xf8E4M3FN>, %as: tensor<1x1xf32>, %b: tensor<8x32xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<8x8xbf16> {
  // expected-error @+2 {{expected 'math_warpgroups' in tile to be an integer in [1, 4], found 99999999999}}
  %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
         {fp8.kernel = {kind = "gemm", name = "k", spec = #fp8.gemm<{a = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, arch = "sm_90a", b = {format = "e4m3fn", granularity = "per_tensor", layout = "k_major"}, k = 32, n = 8, out = "bf16", promotion_interval = 0, tile = {block_k = 128, block_m = 128, block_n = 128, stages = 4, math_warpgroups = 99999999999}}>}}
      : tensor<8x32xf8E4M3FN>, tensor<1x1xf32>, tensor<8x32xf8E4M3FN>, tensor<1x1xf32> -> tensor<8x8xbf16>
  return %d : tensor<8x8xbf16>
}
