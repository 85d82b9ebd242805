func.func @decode(%x: tensor<32x?x2048xbf16>, %counts: tensor<32xi32>,
                  %w: tensor<32x4096x2048xbf16> {fp8.weight})
    -> tensor<32x?x4096xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %d = fp8.grouped_matmul masked(%counts : tensor<32xi32>) %x, %w
      : tensor<32x?x2048xbf16>, tensor<32x4096x2048xbf16> -> tensor<32x?x4096xbf16>
  return %d : tensor<32x?x4096xbf16>
}
