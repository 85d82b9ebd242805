//===- ElementwiseTest.cpp - Elementwise specs, programs, emitted source --===//

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace fp8;

namespace {
using A = EwArg;

ElementwiseSpec quantizeSpec(Granularity g,
                             ScalingMode mode = ScalingMode::Current) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = swigluProgram();
  s.quant.granularity = g;
  s.quant.mode = mode;
  return s;
}

/// An RMSNorm over rows of 4096 quantized 1x128, summing its rows itself.
ElementwiseSpec rmsnormQuantizeSpec() {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = rmsnormProgram(1.0f / 4096, 1e-5f);
  s.rowSum = sumOfSquaresProgram();
  s.quant.granularity = Granularity::block(1, 128);
  return s;
}
} // namespace

TEST(Elementwise, ProgramJSONRoundTrips) {
  EwProgram p = swigluProgram();
  p.instrs.push_back({EwOp::Fma,
                      {A::constant(0.1f), A::constant(-2.5e-8f), A::result(6)},
                      DType::F16});
  p.instrs.push_back(
      {EwOp::Maximum, {A::constant(INFINITY), A::result(7)}, DType::F32});
  p.result = A::result(8);
  auto back = ewProgramFromJSON(toJSON(p));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, p);
}

TEST(Elementwise, SpecJSONRoundTripsForEveryKind) {
  ElementwiseSpec q =
      quantizeSpec(Granularity::perTensor(), ScalingMode::Delayed);
  q.quant.delayed.historyLength = 1024;
  q.quant.delayed.margin = 1;
  q.quant.delayed.algo = AmaxAlgo::MostRecent;
  ElementwiseSpec e;
  e.kind = AuxKind::Elementwise;
  e.program = swigluProgram();
  e.out = DType::F32;
  ElementwiseSpec t;
  t.kind = AuxKind::Transpose;
  t.quant.format = DType::E5M2;
  t.quant.granularity = Granularity::block(128, 128, ScaleFormat::UE8M0);
  t.arch = Arch::SM100a;
  for (const ElementwiseSpec &s : {q, e, t}) {
    auto back = elementwiseSpecFromJSON(toJSON(s));
    ASSERT_TRUE(back.isOk()) << back.message();
    EXPECT_EQ(*back, s);
    EXPECT_EQ(back->kernelName(), s.kernelName());
  }
  EXPECT_NE(q.kernelName(), e.kernelName());
  EXPECT_EQ(q.kernelName().rfind("fp8_quant_e4m3_wxw_delayed_fused_", 0), 0u)
      << q.kernelName();
}

TEST(Elementwise, BadProgramsAndSpecsSayWhy) {
  EwProgram p = swigluProgram();
  p.instrs[1].args = {A::result(3)};
  EXPECT_EQ(checkProgram(p).message(),
            "expected instruction %1 to use results of earlier instructions "
            "(%0..%0), found %3");
  p = swigluProgram();
  p.instrs[6].args.pop_back();
  EXPECT_EQ(checkProgram(p).message(),
            "expected 2 operands for 'mul' in instruction %6, found 1");
  p = swigluProgram();
  p.inputs = {DType::BF16, DType::E4M3FN};
  EXPECT_EQ(checkProgram(p).message(),
            "expected program input 1 to be bf16, f16 or f32, found e4m3fn");
  p = swigluProgram();
  p.inputs.assign(5, DType::F32);
  EXPECT_EQ(checkProgram(p).message(),
            "expected 1 to 4 program inputs, found 5");

  ElementwiseSpec s =
      quantizeSpec(Granularity::block(1, 128), ScalingMode::Delayed);
  EXPECT_EQ(checkElementwiseSpec(s).message(),
            "expected per_tensor granularity with delayed scaling (one amax "
            "history per tensor), found 1x128")
      << checkElementwiseSpec(s).message();
  EXPECT_FALSE(elementwiseSpecFromJSON("{\"kind\": \"gemm\"}").isOk());
  EXPECT_EQ(elementwiseSpecFromJSON("{\"kind\": \"gemm\"}").message(),
            "expected 'kind' (elementwise, quantize, transpose, permute, "
            "unpermute, reduce or interleave) in the kernel spec, found "
            "\"gemm\"");
  EXPECT_EQ(ewProgramFromJSON("{\"inputs\": [\"bf16\"], \"ops\": [{\"op\": "
                              "\"log\", \"args\": [\"in0\"]}], \"result\": "
                              "\"%0\"}")
                .message(),
            "unknown program operation 'log'");
}

/// A quantize whose codes and scales are written transposed (the FP8
/// transpose fused in): its own name and JSON, its output shapes, and
/// refused off the column path.
TEST(Elementwise, TransposedQuantize) {
  ElementwiseSpec s = quantizeSpec(Granularity::block(128, 1));
  const std::string plain = s.kernelName();
  EXPECT_EQ(toJSON(s).find("transposed"), std::string::npos);
  s.transposed = true;
  ASSERT_TRUE(checkElementwiseSpec(s).isOk())
      << checkElementwiseSpec(s).message();
  EXPECT_TRUE(quantizeUsesColumnPath(s));
  EXPECT_EQ(s.kernelName().rfind("fp8_quant_e4m3_128x1_tr_", 0), 0u)
      << s.kernelName();
  EXPECT_NE(s.kernelName().substr(s.kernelName().size() - 8),
            plain.substr(plain.size() - 8));
  auto back = elementwiseSpecFromJSON(toJSON(s));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_TRUE(back->transposed);
  EXPECT_EQ(*back, s);
  const auto [codes, scales] = quantizeOutputShapes(s, Shape{3, 300, 40});
  EXPECT_EQ(codes, (Shape{3, 40, 300}));
  EXPECT_EQ(scales, (Shape{3, 40, 3}));
  s.transposed = false;
  EXPECT_EQ(quantizeOutputShapes(s, Shape{300, 40}).second, (Shape{3, 40}));
  for (Granularity g :
       {Granularity::block(1, 128), Granularity::block(128, 128),
        Granularity::perTensor()}) {
    ElementwiseSpec bad = quantizeSpec(g);
    bad.transposed = true;
    EXPECT_EQ(checkElementwiseSpec(bad).message(),
              "expected a quantize with transposed output to take R x 1 "
              "blocks (128x1) with current scaling, found a quantize of " +
                  toString(g));
  }
  ElementwiseSpec t;
  t.kind = AuxKind::Transpose;
  t.quant.granularity = Granularity::block(128, 1);
  t.transposed = true;
  EXPECT_FALSE(checkElementwiseSpec(t).isOk());
  std::string text = toJSON(quantizeSpec(Granularity::block(128, 1)));
  text.insert(text.size() - 1, ",\"transposed\":1");
  EXPECT_EQ(elementwiseSpecFromJSON(text).message(),
            "expected 'transposed' to be true or false, found 1");
}

/// A per-tensor quantize whose amax is given (a GEMM epilogue's): its own
/// name and JSON, one entry point over the codes pass's grid, no amax
/// scratch, and refused off per-tensor current scaling.
TEST(Elementwise, QuantizeWithAGivenAmax) {
  ElementwiseSpec s = quantizeSpec(Granularity::perTensor());
  s.program = EwProgram::identity(DType::BF16);
  const std::string plain = s.kernelName();
  EXPECT_EQ(toJSON(s).find("amax_in"), std::string::npos);
  s.amaxIn = true;
  ASSERT_TRUE(checkElementwiseSpec(s).isOk())
      << checkElementwiseSpec(s).message();
  EXPECT_TRUE(quantizeReadsAmax(s));
  EXPECT_TRUE(quantizeIsOnePass(s));
  EXPECT_FALSE(quantizeScalesInCodesPass(s));
  EXPECT_FALSE(quantizeHasResidentPath(s));
  EXPECT_EQ(s.kernelName().rfind("fp8_quant_e4m3_wxw_amaxin_", 0), 0u)
      << s.kernelName();
  EXPECT_NE(s.kernelName(), plain);
  EXPECT_EQ(elementwiseEntries(s), std::vector<std::string>{"quantize"});
  auto back = elementwiseSpecFromJSON(toJSON(s));
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_TRUE(back->amaxIn);
  EXPECT_EQ(*back, s);
  // The grid of the two-pass path's codes pass, for any size: the resident
  // path (one matrix that fits on chip) is not taken.
  for (int64_t rows : {int64_t(1), int64_t(512), int64_t(8192)}) {
    const std::vector<ElementwiseEntryLaunch> l =
        elementwiseLaunches(s, 1, rows, 4096, 132);
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0].kernel, s.kernelName());
    EXPECT_EQ(l[0].launch.block[0], 256u);
    EXPECT_EQ(l[0].launch.grid[0], unsigned(std::min<int64_t>(
                                       (rows * 4096 / 8 + 255) / 256, 132 * 8)))
        << rows;
  }
  EXPECT_NE(emitElementwise(s)->front().source.find(
                "quantize_tensor_given_amax_body"),
            std::string::npos);
  const struct {
    Granularity g;
    ScalingMode mode;
    const char *found;
  } bad[] = {
      {Granularity::block(1, 128), ScalingMode::Current, "1x128"},
      {Granularity::perRow(), ScalingMode::Current, "per_row"},
      {Granularity::perTensor(), ScalingMode::Delayed, "per_tensor delayed"}};
  for (const auto &b : bad) {
    ElementwiseSpec q = quantizeSpec(b.g, b.mode);
    q.amaxIn = true;
    EXPECT_EQ(checkElementwiseSpec(q).message(),
              std::string("expected a quantize with a given amax to take "
                          "per-tensor blocks with current scaling, found a "
                          "quantize of ") +
                  b.found);
  }
  ElementwiseSpec e;
  e.kind = AuxKind::Elementwise;
  e.amaxIn = true;
  EXPECT_FALSE(checkElementwiseSpec(e).isOk());
  std::string text = toJSON(quantizeSpec(Granularity::perTensor()));
  text.insert(text.size() - 1, ",\"amax_in\":\"yes\"");
  EXPECT_EQ(elementwiseSpecFromJSON(text).message(),
            "expected 'amax_in' to be true or false, found \"yes\"");
}

/// A norm's programs: broadcast inputs and row sums keep their form through
/// JSON (and with it the kernel name); what they may not be is refused.
TEST(Elementwise, BroadcastsAndRowSums) {
  EwProgram p;
  p.inputs = {DType::BF16, DType::F32, DType::BF16};
  p.broadcast = {EwBroadcast::None, EwBroadcast::Row, EwBroadcast::Col};
  p.instrs = {{EwOp::Rsqrt, {A::input(1)}, DType::F32},
              {EwOp::Mul, {A::input(0), A::result(0)}, DType::BF16},
              {EwOp::Mul, {A::result(1), A::input(2)}, DType::BF16}};
  p.result = A::result(2);
  ASSERT_TRUE(checkProgram(p).isOk()) << checkProgram(p).message();
  const std::string json = toJSON(p);
  EXPECT_NE(json.find("\"broadcast\":[\"none\",\"row\",\"col\"]"),
            std::string::npos)
      << json;
  auto back = ewProgramFromJSON(json);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, p);
  EwProgram unbroadcast = p;
  unbroadcast.broadcast.clear();
  EXPECT_FALSE(unbroadcast == p);
  // Without a broadcast, the JSON (and every existing kernel's name) is
  // as before.
  EXPECT_EQ(toJSON(unbroadcast).find("broadcast"), std::string::npos);

  ElementwiseSpec r;
  r.kind = AuxKind::Reduce;
  r.program = p;
  r.out = DType::F32;
  auto rs = elementwiseSpecFromJSON(toJSON(r));
  ASSERT_TRUE(rs.isOk()) << rs.message();
  EXPECT_EQ(*rs, r);
  EXPECT_EQ(r.kernelName().rfind("fp8_reduce_rows_", 0), 0u);
  EXPECT_EQ(elementwiseEntries(r), std::vector<std::string>{"reduce"});
  const AuxLaunch l = elementwiseLaunch(r, 0, 3, 5, 4096, 132);
  EXPECT_EQ(l.grid[0], 15u); // a CTA per row
  EXPECT_EQ(l.block[0], 256u);

  r.out = DType::BF16;
  EXPECT_EQ(checkElementwiseSpec(r).message(),
            "expected the row sums of a reduce to be f32, found bf16");
  EwProgram bad = p;
  bad.broadcast = {EwBroadcast::Row, EwBroadcast::None, EwBroadcast::Col};
  EXPECT_EQ(checkProgram(bad).message(),
            "expected program input 0 to have the shape the program runs "
            "over, found it broadcast per row");
  bad.broadcast = {EwBroadcast::None, EwBroadcast::Row};
  EXPECT_EQ(checkProgram(bad).message(),
            "expected a broadcast per program input (3), found 2");
  EXPECT_EQ(ewProgramFromJSON(R"({"inputs": ["bf16"], "broadcast": ["diag"],
                                  "result": "in0"})")
                .message(),
            "expected a broadcast (none, row or col) in the program, found "
            "\"diag\"");
  EXPECT_EQ(programIndex(p, 1, 4100, 4096), 1);
  EXPECT_EQ(programIndex(p, 2, 4100, 4096), 4);
  EXPECT_EQ(programIndex(p, 0, 4100, 4096), 4100);
}

/// reduceRow sums in the kernel's order: thread (j / 8) % 256 takes value
/// j, the threads' sums are paired within each warp, the warps' added in
/// order. Values chosen so that other orders give other bits.
TEST(Elementwise, RowSumsFollowTheKernelsOrder) {
  // One value per thread (chunk): a sequential sum of 1 + 255 x 2^-24
  // rounds every small term away; the tree keeps them.
  std::vector<float> v(256 * 8, 0.0f);
  v[0] = 1.0f;
  for (int t = 1; t < 256; ++t)
    v[size_t(t) * 8] = 0x1p-24f;
  float sequential = 0.0f;
  for (float x : v)
    sequential += x;
  EXPECT_EQ(sequential, 1.0f);
  // Warp 0's lanes are paired in a tree (computed here as the kernel
  // does), the other warps' 32 x 2^-24 = 2^-19 each added to its sum in
  // warp order: the small values meet each other before they meet 1.0.
  float warp0 = 0.0f;
  {
    float lane[32];
    for (int l = 0; l < 32; ++l)
      lane[l] = v[size_t(l) * 8];
    for (int k = 16; k >= 1; k /= 2) {
      float next[32];
      for (int l = 0; l < 32; ++l)
        next[l] = lane[l] + lane[l ^ k];
      std::copy(next, next + 32, lane);
    }
    warp0 = lane[0];
  }
  float want = warp0;
  for (int w = 1; w < 8; ++w)
    want += 0x1p-19f;
  EXPECT_EQ(reduceRow(v.data(), int64_t(v.size())), want);
  EXPECT_GT(want, 1.0f);
  // A short row: one thread's chunk, summed in column order.
  const float few[3] = {1.0f, 0x1p-24f, 0x1p-24f};
  EXPECT_EQ(reduceRow(few, 3), 1.0f);
  EXPECT_EQ(reduceRow(few, 0), 0.0f);
}

TEST(Elementwise, ScalingIntegersAreNeverTruncated) {
  ElementwiseSpec s =
      quantizeSpec(Granularity::perTensor(), ScalingMode::Delayed);
  const std::string json = toJSON(s);
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string t = json;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return elementwiseSpecFromJSON(t).message();
  };
  // 2^32 + 16: the kernel's `int kHistory` would have been 16.
  EXPECT_EQ(edited("\"history\":16", "\"history\":4294967312"),
            "expected 'history' in 'scaling' to be an integer in "
            "[-2147483648, 2147483647], found 4294967312");
  EXPECT_EQ(edited("\"interval\":1", "\"interval\":1.5"),
            "expected 'interval' in 'scaling' to be an integer in "
            "[-2147483648, 2147483647], found 1.5");
}

TEST(Elementwise, EntryPointsFollowTheGranularity) {
  EXPECT_EQ(elementwiseEntries(
                quantizeSpec(Granularity::block(1, 128), ScalingMode::Current)),
            std::vector<std::string>{"quantize"});
  EXPECT_EQ(
      elementwiseEntries(quantizeSpec(Granularity::mx(), ScalingMode::Current)),
      std::vector<std::string>{"quantize"});
  // 128x128: the tile path, a CTA per block; 37x5 (no vector width) and
  // 128x2: the three-kernel block path.
  EXPECT_EQ(elementwiseEntries(quantizeSpec(Granularity::block(128, 128),
                                            ScalingMode::Current)),
            std::vector<std::string>{"quantize"});
  EXPECT_EQ(elementwiseEntries(
                quantizeSpec(Granularity::block(37, 5), ScalingMode::Current)),
            (std::vector<std::string>{"amax", "scales", "quantize"}));
  EXPECT_EQ(elementwiseEntries(
                quantizeSpec(Granularity::block(128, 2), ScalingMode::Current)),
            (std::vector<std::string>{"amax", "scales", "quantize"}));
  // Per tensor: delayed scaling's pass 1 (its last CTA) makes the scale,
  // current scaling's codes pass, or its one-kernel path where the program
  // has no table (SwiGLU's fills one).
  EXPECT_EQ(elementwiseEntries(
                quantizeSpec(Granularity::perTensor(), ScalingMode::Delayed)),
            (std::vector<std::string>{"amax", "quantize"}));
  ElementwiseSpec current =
      quantizeSpec(Granularity::perTensor(), ScalingMode::Current);
  EXPECT_EQ(elementwiseEntries(current),
            (std::vector<std::string>{"amax", "quantize"}));
  current.program = EwProgram::identity(DType::BF16);
  EXPECT_EQ(elementwiseEntries(current),
            (std::vector<std::string>{"amax", "quantize", "resident"}));
}

// The row-sum quantize (an RMSNorm with its sums) has an entry for rows
// its registers hold (kRowSumThreads threads a row), one for longer rows it
// still holds (kReduceThreads) and one for rows it reads again, rows not
// of whole chunks of eight and unaligned tensors included; a shape
// launches exactly one of them (fp8k::row_sum_entry).
TEST(Elementwise, RowSumQuantizeLaunchesTheEntryForItsRowLength) {
  const ElementwiseSpec s = rmsnormQuantizeSpec();
  ASSERT_TRUE(checkElementwiseSpec(s).isOk());
  const std::vector<std::string> roles = {"quantize", "quantize_long_rows",
                                          "quantize_longest_rows"};
  EXPECT_EQ(elementwiseEntries(s), roles);
  const std::string base = s.kernelName();
  struct Case {
    int64_t cols;
    int entry;
  };
  for (Case c : {Case{8, 0}, Case{4096, 0}, Case{1, 2}, Case{31, 2},
                 Case{4092, 2}, Case{4100, 2}, Case{4104, 1}, Case{8192, 1},
                 Case{8188, 2}, Case{8200, 2}, Case{16384, 2}}) {
    SCOPED_TRACE(c.cols);
    EXPECT_EQ(fp8k::row_sum_entry(c.cols, true), c.entry);
    EXPECT_EQ(fp8k::row_sum_entry(c.cols, false), 2); // unaligned tensors
    const std::vector<ElementwiseEntryLaunch> ls =
        elementwiseLaunches(s, 2, 300, c.cols, 132);
    ASSERT_EQ(ls.size(), 1u);
    EXPECT_EQ(ls[0].kernel, base + "_" + roles[size_t(c.entry)]);
    EXPECT_EQ(ls[0].entry, unsigned(c.entry));
    EXPECT_EQ(ls[0].launch.block[0],
              unsigned(c.entry == 0 ? int(fp8k::kRowSumThreads)
                                    : int(fp8k::kReduceThreads)));
    EXPECT_EQ(ls[0].launch.grid[0], 600u); // a CTA per row
    const std::vector<ElementwiseEntryLaunch> u =
        elementwiseLaunches(s, 2, 300, c.cols, 132, /*aligned=*/false);
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].entry, 2u);
  }
  auto k = emitElementwise(s);
  ASSERT_TRUE(k.isOk()) << k.message();
  ASSERT_EQ(k->size(), 3u);
  EXPECT_NE((*k)[0].source.find("__launch_bounds__(128, 5)\n" + (*k)[0].name),
            std::string::npos);
  EXPECT_NE((*k)[0].source.find("__launch_bounds__(256, 2)\n" + (*k)[1].name),
            std::string::npos);
  EXPECT_NE((*k)[0].source.find("__launch_bounds__(256, 4)\n" + (*k)[2].name),
            std::string::npos);
}

// A program's element loads declare the row and column of their element
// only where an input they load broadcasts (no unused variables for nvcc
// to warn of).
TEST(Elementwise, LoadsDeclareTheIndicesTheyUse) {
  auto k = emitElementwise(rmsnormQuantizeSpec());
  ASSERT_TRUE(k.isOk()) << k.message();
  const std::string &src = (*k)[0].source;
  auto body = [&](const std::string &fn) {
    const size_t b = src.find(" " + fn + "(const EwParams &p");
    EXPECT_NE(b, std::string::npos) << fn;
    return src.substr(b, src.find("\n  }\n", b) - b);
  };
  // The sum of squares loads x alone.
  EXPECT_EQ(body("sum_n").find("const i64 row"), std::string::npos);
  EXPECT_EQ(body("sum_n").find("const i64 col"), std::string::npos);
  // The normalization loads the gain by column and is given its row.
  EXPECT_EQ(body("eval_n_rs").find("const i64 row"), std::string::npos);
  EXPECT_NE(body("eval_n_rs").find("const i64 col"), std::string::npos);
  // Without the row given, it finds it.
  EXPECT_NE(body("eval_n").find("const i64 row"), std::string::npos);
}

TEST(Elementwise, EmittedSourceInstantiatesTheHeader) {
  ElementwiseSpec s =
      quantizeSpec(Granularity::block(128, 2), ScalingMode::Current);
  auto k = emitElementwise(s);
  ASSERT_TRUE(k.isOk()) << k.message();
  ASSERT_EQ(k->size(), 3u);
  const std::string &src = (*k)[0].source;
  EXPECT_EQ((*k)[1].source, src);
  EXPECT_EQ((*k)[0].name, s.kernelName() + "_amax");
  EXPECT_NE(src.find("#include \"fp8/elementwise.cuh\""), std::string::npos);
  EXPECT_NE(src.find("const float v3 = exp(v2);"), std::string::npos) << src;
  EXPECT_NE(src.find("add(v3, 0x1p+0f)"), std::string::npos) << src;
  EXPECT_NE(src.find("round_to(v6, kBF16)"), std::string::npos) << src;
  EXPECT_NE(src.find("kBlockRows = 128"), std::string::npos);
  EXPECT_NE(src.find("quantize_scales_body<fp8k::Q>"), std::string::npos);
  // The tile path's one entry point.
  auto tile = emitElementwise(
      quantizeSpec(Granularity::block(128, 128), ScalingMode::Current));
  ASSERT_TRUE(tile.isOk()) << tile.message();
  ASSERT_EQ(tile->size(), 1u);
  EXPECT_NE((*tile)[0].source.find("quantize_tile_body<fp8k::Prog, fp8k::Q>"),
            std::string::npos);
}

// Per-tensor grids: pass 1 one wave striding (kTensorPassCtasPerSm);
// the codes kernels eight CTAs of 256 an SM: delayed scaling's returns at
// once unless pass 1's guess was wrong, and each of current scaling's
// takes the amax with an atomic on one (amax, count) pair. Current scaling
// of one aligned matrix runs its one kernel instead, at most a CTA an SM.
TEST(Elementwise, PerTensorGrids) {
  ElementwiseSpec delayed =
      quantizeSpec(Granularity::perTensor(), ScalingMode::Delayed);
  delayed.program = EwProgram::identity(DType::BF16);
  ElementwiseSpec current = delayed;
  current.quant.mode = ScalingMode::Current;
  ASSERT_EQ(elementwiseEntries(delayed),
            (std::vector<std::string>{"amax", "quantize"}));
  // 4096 x 4096: 8192 CTAs of 2048 elements, one wave of them striding.
  EXPECT_EQ(elementwiseLaunch(delayed, 0, 1, 4096, 4096, 132).grid[0],
            132u * fp8k::kTensorDelayedPassCtasPerSm);
  EXPECT_EQ(elementwiseLaunch(current, 0, 2, 4096, 4096, 132).grid[0],
            132u * fp8k::kTensorPassCtasPerSm);
  EXPECT_EQ(elementwiseLaunch(current, 0, 2, 4096, 4096, 1).grid[0],
            unsigned(fp8k::kTensorPassCtasPerSm));
  // Fewer chunks than a wave's threads: a CTA per 2048 elements.
  EXPECT_EQ(elementwiseLaunch(delayed, 0, 1, 256, 4096, 132).grid[0], 512u);
  EXPECT_EQ(elementwiseLaunch(current, 0, 1, 16, 64, 132, false).grid[0], 1u);
  // The codes passes.
  EXPECT_EQ(elementwiseLaunch(delayed, 1, 1, 4096, 4096, 132).grid[0],
            132u * 8);
  EXPECT_EQ(elementwiseLaunch(current, 1, 2, 4096, 4096, 132).grid[0],
            132u * 8);
  EXPECT_EQ(elementwiseLaunch(current, 1, 1, 16, 64, 132, false).grid[0], 1u);
  EXPECT_EQ(elementwiseLaunch(delayed, 1, 1, 16, 64, 132).grid[0], 1u);
  // One aligned matrix of current scaling: the one kernel alone, a CTA of
  // 1024 threads per 8192 elements up to one an SM.
  for (size_t e : {0, 1})
    EXPECT_EQ(elementwiseLaunch(current, e, 1, 4096, 4096, 132).grid[0], 0u);
  const AuxLaunch one = elementwiseLaunch(current, 2, 1, 4096, 4096, 132);
  EXPECT_EQ(one.grid[0], 132u);
  EXPECT_EQ(one.block[0], unsigned(fp8k::kTensorResidentThreads));
  EXPECT_EQ(elementwiseLaunch(current, 2, 1, 16, 4096, 132).grid[0], 8u);
  EXPECT_EQ(elementwiseLaunch(current, 2, 1, 16, 4096, 4).grid[0], 4u);
  // Not on two matrices (a scale each), unaligned tensors, or a matrix of
  // elements not a multiple of 8.
  EXPECT_EQ(elementwiseLaunch(current, 2, 2, 4096, 4096, 132).grid[0], 0u);
  EXPECT_EQ(elementwiseLaunch(current, 2, 1, 4096, 4096, 132, false).grid[0],
            0u);
  EXPECT_EQ(elementwiseLaunch(current, 2, 1, 5, 31, 132).grid[0], 0u);
  EXPECT_GT(elementwiseLaunch(current, 0, 1, 5, 31, 132).grid[0], 0u);
  // Its kernel asks for the shared memory it holds the input in, and a
  // cooperative launch.
  auto kernels = emitElementwise(current);
  ASSERT_TRUE(kernels.isOk()) << kernels.status().message();
  ASSERT_EQ(kernels->size(), 3u);
  EXPECT_EQ((*kernels)[2].launch.sharedBytes, fp8k::kTensorResidentBytes);
  EXPECT_TRUE((*kernels)[2].launch.gridSync);
  EXPECT_FALSE((*kernels)[1].launch.gridSync);
  EXPECT_EQ((*kernels)[1].launch.sharedBytes, 0);
  // A program with a table keeps its kTableCtasPerSm (fewer fills).
  ElementwiseSpec swiglu = current;
  swiglu.program = swigluProgram();
  EXPECT_EQ(elementwiseLaunch(swiglu, 0, 1, 4096, 4096, 132).grid[0],
            132u * fp8k::kTableCtasPerSm);
}

TEST(Elementwise, LaunchesCoverTheShape) {
  // (A plain quantize: a program with a table strides over fewer CTAs,
  // ElementwiseTableTest.)
  ElementwiseSpec rows =
      quantizeSpec(Granularity::block(1, 128), ScalingMode::Current);
  rows.program = EwProgram::identity(DType::BF16);
  AuxLaunch l = elementwiseLaunch(rows, 0, 1, 4096, 11008, 132);
  EXPECT_EQ(l.block[0], 256u);
  // The vector path of a plain conversion: 4096 x 86 blocks, four lanes a
  // block (four 16-byte chunks a lane), so eight a warp, 8 warps per CTA,
  // at most 256 CTAs per SM (the warps stride over the rest). A program
  // that computes takes two chunks a lane (eight lanes a 1x128 block), and
  // blocks narrower than 128 columns two whatever the program.
  EXPECT_EQ(fp8k::row_vec_block_lanes(128, true), 4);
  EXPECT_EQ(fp8k::row_vec_block_lanes(256, true), 8);
  EXPECT_EQ(fp8k::row_vec_block_lanes(128, false), 8);
  EXPECT_EQ(fp8k::row_vec_block_lanes(64, true), 4);
  EXPECT_EQ(fp8k::row_vec_block_lanes(32, true), 2);
  EXPECT_EQ(fp8k::row_vec_block_lanes(8, false), 1);
  unsigned perWarp = 8;
  EXPECT_EQ(l.grid[0], std::min((4096u * 86 / perWarp + 7) / 8, 132u * 256));
  l = elementwiseLaunch(rows, 0, 1, 128, 7168, 132);
  EXPECT_EQ(l.grid[0], (128u * 56 / perWarp + 7) / 8);
  ElementwiseSpec swiglu = rows;
  swiglu.program = swigluProgram();
  l = elementwiseLaunch(swiglu, 0, 1, 128, 7168, 132);
  perWarp = 4;
  EXPECT_EQ(l.grid[0], (128u * 56 / perWarp + 7) / 8);
  // Rows of a length not a multiple of 8: a warp per block, at most 256
  // CTAs per SM.
  l = elementwiseLaunch(rows, 0, 1, 4096, 11004, 132);
  EXPECT_EQ(l.grid[0], std::min(4096u * 86 / 8, 132u * 256));
  // The tile path: a CTA per 128x128 block (86 x 32 of them).
  l = elementwiseLaunch(
      quantizeSpec(Granularity::block(128, 128), ScalingMode::Current), 0, 1,
      4096, 11008, 132);
  EXPECT_EQ(l.block[0], 256u);
  EXPECT_EQ(l.grid[0], 86u);
  EXPECT_EQ(l.grid[1], 32u);
  // The block path (128x2: no vector width).
  ElementwiseSpec blocks =
      quantizeSpec(Granularity::block(128, 2), ScalingMode::Current);
  l = elementwiseLaunch(blocks, 0, 1, 4096, 11008, 132);
  EXPECT_EQ(l.grid[0], (11008u + 255) / 256);
  EXPECT_EQ(l.grid[1], 4096u / 64);
  l = elementwiseLaunch(blocks, 1, 1, 4096, 11008, 132);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.grid[0], (32u * 5504 + 127) / 128);
  // Empty shapes still launch one CTA (the kernels handle them).
  l = elementwiseLaunch(blocks, 0, 1, 0, 0, 132);
  EXPECT_EQ(l.grid[0], 1u);
  EXPECT_EQ(l.grid[1], 1u);
}
