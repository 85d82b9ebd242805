// Weight gradients of 5 experts along K (the rows, in expert order, padded
// to 128 per expert): dW[e] = dy_e^T x_e, an E5M2 gradient and an E4M3
// activation in 1x128 blocks along the rows, bf16 results.
func.func @wgrad(%dy: tensor<?x256xbf16>, %x: tensor<?x384xbf16>,
                 %offsets: tensor<6xi32>) -> tensor<5x256x384xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E5M2, <1x128>>,
                                         b = <f8E4M3FN, <1x128>>,
                                         promotion_interval = 128>} {
  %dw = fp8.grouped_matmul along_k(%offsets : tensor<6xi32>) %dy, %x
      : tensor<?x256xbf16>, tensor<?x384xbf16> -> tensor<5x256x384xbf16>
  return %dw : tensor<5x256x384xbf16>
}
