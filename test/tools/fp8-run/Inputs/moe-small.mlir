// A small mixture-of-experts block for the CPU tests: hidden 256, expert
// intermediate 128, 4 experts, top-2 routing, every group padded to a
// multiple of 4 rows (Ling 2.0's layout), the DeepSeek-V3 recipe.
#id = affine_map<(m, n) -> (m, n)>
func.func @moe_small(%x: tensor<?x256xbf16>, %ids: tensor<?x2xi32>,
                     %weights: tensor<?x2xf32>,
                     %w_gate: tensor<4x128x256xbf16> {fp8.weight},
                     %w_up: tensor<4x128x256xbf16> {fp8.weight},
                     %w_down: tensor<4x256x128xbf16> {fp8.weight})
    -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %rows, %offsets, %positions = fp8.moe_permute %x, %ids experts 4 align 4
      : tensor<?x256xbf16>, tensor<?x2xi32>
      -> tensor<?x256xbf16>, tensor<5xi32>, tensor<?x2xi32>
  %gate = fp8.grouped_matmul contiguous(%offsets : tensor<5xi32>) %rows, %w_gate
      : tensor<?x256xbf16>, tensor<4x128x256xbf16>
      -> tensor<?x128xbf16>
  %up = fp8.grouped_matmul contiguous(%offsets : tensor<5xi32>) %rows, %w_up
      : tensor<?x256xbf16>, tensor<4x128x256xbf16>
      -> tensor<?x128xbf16>
  %c0 = arith.constant 0 : index
  %r = tensor.dim %gate, %c0 : tensor<?x128xbf16>
  %e = tensor.empty(%r) : tensor<?x128xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
         ins(%gate, %up : tensor<?x128xbf16>, tensor<?x128xbf16>)
         outs(%e : tensor<?x128xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gf : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %ex, %one : f32
    %silu = arith.divf %gf, %den : f32
    %prod = arith.mulf %silu, %uf : f32
    %res = arith.truncf %prod : f32 to bf16
    linalg.yield %res : bf16
  } -> tensor<?x128xbf16>
  %down = fp8.grouped_matmul contiguous(%offsets : tensor<5xi32>) %h, %w_down
      : tensor<?x128xbf16>, tensor<4x256x128xbf16>
      -> tensor<?x256xbf16>
  %y = fp8.moe_unpermute %down, %positions, %weights
      : tensor<?x256xbf16>, tensor<?x2xi32>, tensor<?x2xf32>
      -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
