// LayerNorm (without bias) in front of a DeepSeek-recipe projection: the
// mean and the variance as two row sums (the second reads the first along
// the rows), the normalization fused into the projection's 1x128 quantize.
#x   = affine_map<(m, n, k) -> (m, k)>
#wT  = affine_map<(m, n, k) -> (n, k)>
#y   = affine_map<(m, n, k) -> (m, n)>
#id  = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
#col = affine_map<(m, n) -> (n)>

func.func @layernorm(%x: tensor<?x512xbf16>, %g: tensor<512xbf16>,
                     %w: tensor<256x512xbf16> {fp8.weight}) -> tensor<?x256xbf16>
    attributes {fp8.recipe = #fp8.recipe<a = <f8E4M3FN, <1x128>>,
                                         b = <f8E4M3FN, <128x128>>,
                                         promotion_interval = 128>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x512xbf16>
  %es = tensor.empty(%m) : tensor<?xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<?x512xbf16>) outs(%zs : tensor<?xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %s = arith.addf %acc, %af : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %var = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
           ins(%x, %sum : tensor<?x512xbf16>, tensor<?xf32>) outs(%zs : tensor<?xf32>) {
  ^bb0(%a: bf16, %s: f32, %acc: f32):
    %inv = arith.constant 1.953125e-03 : f32   // 1 / 512
    %af = arith.extf %a : bf16 to f32
    %mean = arith.mulf %s, %inv : f32
    %d = arith.subf %af, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %d2 : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %e = tensor.empty(%m) : tensor<?x512xbf16>
  %n = linalg.generic {indexing_maps = [#id, #row, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
         ins(%x, %sum, %var, %g : tensor<?x512xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<512xbf16>)
         outs(%e : tensor<?x512xbf16>) {
  ^bb0(%a: bf16, %s: f32, %v: f32, %gg: bf16, %o: bf16):
    %inv = arith.constant 1.953125e-03 : f32
    %eps = arith.constant 1.0e-05 : f32
    %af = arith.extf %a : bf16 to f32
    %mean = arith.mulf %s, %inv : f32
    %d = arith.subf %af, %mean : f32
    %vm = arith.mulf %v, %inv : f32
    %ve = arith.addf %vm, %eps : f32
    %rs = math.rsqrt %ve : f32
    %nf = arith.mulf %d, %rs : f32
    %gf = arith.extf %gg : bf16 to f32
    %p = arith.mulf %nf, %gf : f32
    %pb = arith.truncf %p : f32 to bf16
    linalg.yield %pb : bf16
  } -> tensor<?x512xbf16>
  %e2 = tensor.empty(%m) : tensor<?x256xbf16>
  %y = linalg.matmul indexing_maps = [#x, #wT, #y]
         ins(%n, %w : tensor<?x512xbf16>, tensor<256x512xbf16>)
         outs(%e2 : tensor<?x256xbf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
