// A decode step's experts: 4 experts of [128, 256] weights, each with a slab
// of up to M tokens of which the router's counts are valid (the masked
// form), the DeepSeek-V3 recipe.
func.func @decode(%x: tensor<4x?x256xbf16>, %counts: tensor<4xi32>,
                  %w: tensor<4x128x256xbf16> {fp8.weight})
    -> tensor<4x?x128xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %d = fp8.grouped_matmul masked(%counts : tensor<4xi32>) %x, %w
      : tensor<4x?x256xbf16>, tensor<4x128x256xbf16> -> tensor<4x?x128xbf16>
  return %d : tensor<4x?x128xbf16>
}
