// Each chunk is a broken input of its own (robustness.py): fp8-opt must exit
// 1 with a diagnostic.
func.func @truncated(%x: tensor<128x128xbf16>) {
  %q, %s = fp8.quantize %x granularity <1x12
// -----
func.func @unterminated_attr() attributes {fp8.g = #fp8.granularity<1x128
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<0x0>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<-1x128>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<1x-1>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<99999999999999999999x1>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<9223372036854775808x1>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<1x128:>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<1x128:ue8m0:ue8m0>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<x>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<1.5x128>} { return }
// -----
func.func @f() attributes {fp8.g = #fp8.granularity<"1x128">} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<delayed, history = -9223372036854775808>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<delayed, history = 9223372036854775808>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<delayed, margin = -1>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<delayed, interval = 0>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<delayed, algo = min>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<delayed, history = 16, history = 16>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<sometimes>} { return }
// -----
func.func @f() attributes {fp8.s = #fp8.scaling<>} { return }
// -----
func.func @f() attributes {fp8.q = #fp8.quant<f8E4M3FN>} { return }
// -----
func.func @f() attributes {fp8.q = #fp8.quant<i8, <1x128>>} { return }
// -----
func.func @f() attributes {fp8.q = #fp8.quant<f8E4M3FN, #fp8.scaling<current>>} { return }
// -----
func.func @f() attributes {fp8.q = #fp8.quant<f8E4M3FN, <1x128>, <delayed>>} { return }
// -----
func.func @f() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <1x128>>>} { return }
// -----
func.func @f() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <per_row>>, promotion_interval = -32>} { return }
// -----
func.func @f() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <per_row>>, promotion_interval = 9223372036854775807>} { return }
// -----
func.func @f() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <per_row>>, promotion_interval = 9223372036854775776>} { return }
// -----
func.func @f() attributes {fp8.r = #fp8.recipe<a = <f8E4M3FN, <per_row>>, b = <f8E4M3FN, <per_row>>, out = i32>} { return }
// -----
func.func @f() attributes {fp8.r = #fp8.recipe<a = 5, b = <f8E4M3FN, <per_row>>>} { return }
// -----
func.func @f() attributes {fp8.x = #fp8.bogus<1>} { return }
// -----
func.func @f() attributes {fp8.x = #fp8<layout diagonal>} { return }
// -----
func.func @f() attributes {fp8.x = #fp8<group_mode>} { return }
// -----
// A block the size of the tensor: one scale, not two.
func.func @f(%x: tensor<9223372036854775807x1xbf16>) {
  %q, %s = fp8.quantize %x granularity <9223372036854775807x1>
      : tensor<9223372036854775807x1xbf16> -> tensor<9223372036854775807x1xf8E4M3FN>, tensor<2x1xf32>
  return
}
// -----
func.func @f(%x: tensor<9223372036854775807x9223372036854775807xbf16>) {
  %q, %s = fp8.quantize %x granularity <per_tensor>
      : tensor<9223372036854775807x9223372036854775807xbf16>
      -> tensor<9223372036854775807x9223372036854775807xf8E4M3FN>, tensor<0x0xf32>
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>, %h: tensor<16xf32>) {
  %q, %s, %h1 = fp8.quantize %x history %h granularity <per_tensor> scaling <delayed, history = 9223372036854775807>
      : tensor<4x4xbf16>, tensor<16xf32> -> tensor<4x4xf8E4M3FN>, tensor<1x1xf32>, tensor<16xf32>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>, %a scale %s granularity <per_tensor> promotion_interval 0
      : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>, %a scale %s granularity <per_tensor> promotion_interval -32
      : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>, %a scale %s granularity <per_tensor> promotion_interval 99999999999999999999
      : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %as: tensor<128x2xf32>, %bs: tensor<1x1xf32>) {
  %d = fp8.scaled_matmul %a scale %as granularity <1x128>, %a scale %bs granularity <per_tensor> promotion_interval 9223372036854775776
      : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = fp8.scaled_matmul %a scale %s granularity <per_tensor>, %a scale %s granularity <per_tensor> layout diagonal
      : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x128xbf16>
  return
}
// -----
// An absurd group count: "groups + 1" must not overflow.
func.func @f(%off: tensor<9223372036854775807xi32>, %a: tensor<?x64xf8E4M3FN>, %as: tensor<1x1xf32>,
             %b: tensor<9223372036854775807x64x64xf8E4M3FN>, %bs: tensor<9223372036854775807x1x1xf32>) {
  %d = fp8.grouped_scaled_matmul contiguous(%off : tensor<9223372036854775807xi32>)
         %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
      : tensor<?x64xf8E4M3FN>, tensor<1x1xf32>, tensor<9223372036854775807x64x64xf8E4M3FN>,
        tensor<9223372036854775807x1x1xf32> -> tensor<?x64xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>) {
  %d = "fp8.scaled_matmul"(%a) <{a_granularity = #fp8.granularity<per_tensor>, b_granularity = #fp8.granularity<per_tensor>}>
      : (tensor<128x256xf8E4M3FN>) -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = "fp8.scaled_matmul"(%a, %s, %a, %s) <{a_granularity = 5 : i64, b_granularity = #fp8.granularity<per_tensor>}>
      : (tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32>) -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = "fp8.scaled_matmul"(%a, %s, %a, %s) <{a_granularity = #fp8.granularity<per_tensor>, b_granularity = #fp8.granularity<per_tensor>, a_layout = #fp8<group_mode masked>, promotion_interval = "x"}>
      : (tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32>) -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%a: tensor<128x256xf8E4M3FN>, %s: tensor<1x1xf32>) {
  %d = "fp8.scaled_matmul"(%a, %s, %a, %s) <{a_granularity = #fp8.granularity<per_tensor>, b_granularity = #fp8.granularity<per_tensor>, promotion_interval = -64 : i32}>
      : (tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x1xf32>) -> tensor<128x128xbf16>
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>) {
  %q, %s = "fp8.quantize"(%x) <{granularity = #fp8.granularity<per_tensor>, resultSegmentSizes = array<i32: 1, 1, 1, 1>}>
      : (tensor<4x4xbf16>) -> (tensor<4x4xf8E4M3FN>, tensor<1x1xf32>)
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>) {
  %q, %s = "fp8.quantize"(%x) <{granularity = #fp8.granularity<per_tensor>}>
      : (tensor<4x4xbf16>) -> (tensor<4x4xf8E4M3FN>, tensor<1x1xf32>)
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>) {
  %q, %s = "fp8.quantize"(%x) <{granularity = #fp8.granularity<per_tensor>, scaling = #fp8.granularity<per_tensor>, resultSegmentSizes = array<i32: 1, 1, 0, 0>}>
      : (tensor<4x4xbf16>) -> (tensor<4x4xf8E4M3FN>, tensor<1x1xf32>)
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>) {
  %q, %s = "fp8.quantize"(%x) <{granularity = #fp8.granularity<per_tensor>, resultSegmentSizes = array<i32: -1, 3, 0, 0>}>
      : (tensor<4x4xbf16>) -> (tensor<4x4xf8E4M3FN>, tensor<1x1xf32>)
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>) {
  %q = "fp8.quantize"(%x, %x, %x) <{granularity = #fp8.granularity<per_tensor>, resultSegmentSizes = array<i32: 1, 0, 0, 0>}>
      : (tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>) -> (tensor<4x4xf8E4M3FN>)
  return
}
// -----
func.func @f(%x: tensor<*xbf16>) {
  %q, %s = fp8.quantize %x granularity <per_tensor> : tensor<*xbf16> -> tensor<*xf8E4M3FN>, tensor<1x1xf32>
  return
}
// -----
func.func @f(%x: memref<4x4xbf16>) {
  %q, %s = fp8.quantize %x granularity <per_tensor> : memref<4x4xbf16> -> tensor<4x4xf8E4M3FN>, tensor<1x1xf32>
  return
}
// -----
func.func @f(%x: tensor<4x4xbf16>) {
  %q, %s = fp8.unknown %x : tensor<4x4xbf16>
  return
}
// -----
}
