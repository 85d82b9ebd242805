// Every kernel's CUDA, once each, in op order: the key lines of each kind
// (the residual add left a step of its own: fuse-residual=false).
// RUN: fp8-opt %s "--fp8-compile=arch=sm_90a fuse-residual=false" | fp8-translate --fp8-to-cuda | FileCheck %s
// By default (fuse-residual=auto) the second GEMM accumulates into the
// residual, which it loads by TMA into its epilogue's staging buffers.
// RUN: fp8-opt %s --fp8-compile=arch=sm_90a | fp8-translate --fp8-to-cuda | FileCheck %s --check-prefix=RES
// RES: // ===== kernel {{[0-9]+}}: fp8_gemm_sm90a_n256_k512_{{.*}}_bf16acc_{{.*}} (gemm, fp8.scaled_matmul) =====
// RES: static constexpr bool kAccumulate = true;
// RES: const __grid_constant__ fp8k::TmaDesc tmap_c,
// RES-NOT: linalg.add

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// The activations' 1x128 quantize: the one-pass row kernel.
// CHECK: // ===== kernel 0: fp8_quant_e4m3_1x128_{{[0-9a-f]+}} (quantize, fp8.quantize) =====
// CHECK: #include "fp8/elementwise.cuh"
// CHECK: const float in0 = load_elem<kBF16>(p.in[0], i);
// CHECK: static constexpr i64 kBlockCols = 128;
// CHECK: extern "C" __global__ void __launch_bounds__(256)
// CHECK-NEXT: fp8_quant_e4m3_1x128_{{[0-9a-f]+}}(const fp8k::EwParams p) {
// CHECK-NEXT: fp8k::after_prior_grid();
// CHECK-NEXT: fp8k::quantize_rows_body<fp8k::Prog, fp8k::Q>(p);
// The weight's 128x128 quantize: the one-kernel tile path, a CTA per block.
// CHECK: // ===== kernel 1: fp8_quant_e4m3_128x128_{{[0-9a-f]+}} (quantize, fp8.quantize) =====
// CHECK: extern "C" __global__ void __launch_bounds__(256)
// CHECK-NEXT: fp8_quant_e4m3_128x128_{{[0-9a-f]+}}(const fp8k::EwParams p) {
// CHECK-NEXT: fp8k::after_prior_grid();
// CHECK-NEXT: fp8k::quantize_tile_body<fp8k::Prog, fp8k::Q>(p);
// The on-demand transpose of the weight read [K, N].
// CHECK: // ===== kernel 2: fp8_transpose_e4m3_128x128_{{[0-9a-f]+}} (transpose, fp8.transpose) =====
// CHECK: fp8k::transpose_codes_body(p);
// CHECK: fp8k::transpose_scales_body<4>(p);
// The GEMM: wgmma on FP8, both operands K-major.
// CHECK: // ===== kernel 3: fp8_gemm_sm90a_n512_k256_e4m3t1x128_e4m3t128x128_p128_bf16_{{.*}} (gemm, fp8.scaled_matmul) =====
// CHECK: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
// GELU fused into the quantize of its result: the program, rounded to bf16.
// CHECK: // ===== kernel 4: fp8_quant_e4m3_1x128_fused_{{[0-9a-f]+}} (quantize, fp8.quantize) =====
// CHECK: const float v{{[0-9]+}} = tanh(v{{[0-9]+}});
// CHECK: const float v{{[0-9]+}} = round_to(v{{[0-9]+}}, kBF16);
// The residual add: an elementwise kernel storing bf16.
// CHECK: // ===== kernel {{[0-9]+}}: fp8_ew_bf16_{{[0-9a-f]+}} (elementwise, linalg.add) =====
// CHECK: const float v0 = round_to(add(in0, in1), kBF16);
// CHECK: fp8k::elementwise_body<fp8k::Prog, fp8k::kBF16>(p);
// Each kernel once.
// CHECK-NOT: ===== kernel
func.func @block(%x: tensor<?x256xbf16>, %w: tensor<256x512xbf16> {fp8.weight}, %w2: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x256xbf16>
  %e = tensor.empty(%m) : tensor<?x512xbf16>
  %h = linalg.matmul indexing_maps = [#mk, #kn, #mn] ins(%x, %w : tensor<?x256xbf16>, tensor<256x512xbf16>) outs(%e : tensor<?x512xbf16>) -> tensor<?x512xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
         ins(%h : tensor<?x512xbf16>) outs(%e : tensor<?x512xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %f = arith.extf %a : bf16 to f32
    %c = arith.constant 0.797884583 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %t = arith.mulf %c, %f : f32
    %th = math.tanh %t : f32
    %p = arith.addf %one, %th : f32
    %hf = arith.mulf %half, %f : f32
    %r = arith.mulf %hf, %p : f32
    %rb = arith.truncf %r : f32 to bf16
    linalg.yield %rb : bf16
  } -> tensor<?x512xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%g, %w2 : tensor<?x512xbf16>, tensor<256x512xbf16>) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  %out = linalg.add ins(%x, %y : tensor<?x256xbf16>, tensor<?x256xbf16>) outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %out : tensor<?x256xbf16>
}
