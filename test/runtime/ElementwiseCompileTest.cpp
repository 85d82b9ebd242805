//===- ElementwiseCompileTest.cpp - The plan's kernels compile with NVRTC -===//
//
// CI has no GPU: here every kind of quantize (both paths, every scale
// format, delayed scaling, fused programs), transpose and elementwise
// kernel is compiled to a cubin for sm_90a and sm_100a, without spills,
// within the cold-compile budget; the 1x128 and 128x128 quantize, whose
// scales the GPU executor mirrors for the GEMM
// (runtime/plan/PlanScaleMirror.h), store them twice; every entry point
// waits for the grid before it ahead of any access to global memory; the
// row-block quantize keeps its registers to its occupancy.
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "runtime/Nvrtc.h"
#include "test/runtime/EwTestPrograms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <regex>
#include <set>
#include <tuple>

using namespace fp8;

namespace {

struct Case {
  const char *name;
  ElementwiseSpec spec;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  auto quant = [&](const char *name, EwProgram p, Granularity g, DType fmt,
                   ScalingMode mode = ScalingMode::Current) {
    ElementwiseSpec s;
    s.kind = AuxKind::Quantize;
    s.program = std::move(p);
    s.quant.format = fmt;
    s.quant.granularity = g;
    s.quant.mode = mode;
    if (mode == ScalingMode::Delayed) {
      s.quant.delayed.historyLength = 1024;
      s.quant.delayed.margin = 1;
    }
    out.push_back({name, s});
  };
  quant("rows_1x128", EwProgram::identity(DType::BF16),
        Granularity::block(1, 128), DType::E4M3FN);
  quant("rows_per_row_e5m2", EwProgram::identity(DType::F32),
        Granularity::perRow(), DType::E5M2);
  quant("rows_mx", EwProgram::identity(DType::BF16), Granularity::mx(),
        DType::E4M3FN);
  quant("rows_swiglu", swigluProgram(), Granularity::block(1, 128),
        DType::E4M3FN);
  quant("rows_gelu_pow2", test::geluTanh(DType::F32),
        Granularity::block(1, 128, ScaleFormat::F32Pow2), DType::E4M3FN);
  quant("tiles_128x128", EwProgram::identity(DType::BF16),
        Granularity::block(128, 128), DType::E4M3FN);
  quant("tiles_ue8m0", EwProgram::identity(DType::BF16),
        Granularity::block(128, 128, ScaleFormat::UE8M0), DType::E4M3FN);
  quant("cols_128x1", EwProgram::identity(DType::BF16),
        Granularity::block(128, 1), DType::E4M3FN);
  quant("cols_swiglu_128x1", swigluProgram(), Granularity::block(128, 1),
        DType::E4M3FN);
  quant("cols_256x1", EwProgram::identity(DType::BF16),
        Granularity::block(256, 1), DType::E5M2);
  quant("blocks_per_tensor", EwProgram::identity(DType::F16),
        Granularity::perTensor(), DType::E5M2);
  quant("blocks_per_column", test::everyOp(), Granularity::perColumn(),
        DType::E4M3FN);
  quant("blocks_ragged", EwProgram::identity(DType::BF16),
        Granularity::block(37, 5), DType::E5M2);
  quant("delayed", swigluProgram(), Granularity::perTensor(), DType::E4M3FN,
        ScalingMode::Delayed);
  quant("tensor_amax_in", EwProgram::identity(DType::BF16),
        Granularity::perTensor(), DType::E4M3FN);
  out.back().spec.amaxIn = true;
  for (auto [name, out_, p] :
       {std::tuple<const char *, DType, EwProgram>{"ew_swiglu", DType::BF16,
                                                   swigluProgram()},
        {"ew_gelu_f32", DType::F32, test::geluTanh(DType::F32)},
        {"ew_every_op_f16", DType::F16, test::everyOp()}}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Elementwise;
    s.program = p;
    s.out = out_;
    out.push_back({name, s});
  }
  {
    // RMSNorm: the sum of squares, then the normalization with the sums
    // broadcast along the rows and the gain along the columns, fused into
    // a 1x128 quantize (examples/llama-layer.mlir).
    ElementwiseSpec r;
    r.kind = AuxKind::Reduce;
    r.program.inputs = {DType::BF16};
    r.program.instrs = {
        {EwOp::Convert, {EwArg::input(0)}, DType::F32},
        {EwOp::Mul, {EwArg::result(0), EwArg::result(0)}, DType::F32}};
    r.program.result = EwArg::result(1);
    r.out = DType::F32;
    out.push_back({"reduce_sum_of_squares", r});
    EwProgram n;
    n.inputs = {DType::BF16, DType::F32, DType::BF16};
    n.broadcast = {EwBroadcast::None, EwBroadcast::Row, EwBroadcast::Col};
    n.instrs = {
        {EwOp::Convert, {EwArg::input(0)}, DType::F32},
        {EwOp::Mul,
         {EwArg::input(1), EwArg::constant(1.0f / 4096)},
         DType::F32},
        {EwOp::Add, {EwArg::result(1), EwArg::constant(1e-5f)}, DType::F32},
        {EwOp::Rsqrt, {EwArg::result(2)}, DType::F32},
        {EwOp::Mul, {EwArg::result(0), EwArg::result(3)}, DType::BF16},
        {EwOp::Mul, {EwArg::input(2), EwArg::result(4)}, DType::BF16}};
    n.result = EwArg::result(5);
    quant("rows_rmsnorm", n, Granularity::block(1, 128), DType::E4M3FN);
    // The same with the sums computed by the quantize (ElementwiseSpec::
    // rowSum, as --fp8-outline-kernels folds them): the short and long
    // rows' entries, each keeping its chunks in registers.
    quant("rows_rmsnorm_sum", rmsnormProgram(1.0f / 4096, 1e-5f),
          Granularity::block(1, 128), DType::E4M3FN);
    out.back().spec.rowSum = sumOfSquaresProgram();
  }
  {
    // MoE: the permute's three kernels (count, route, gather-quantize),
    // the weighted unpermute (examples/moe.mlir).
    quant("moe_permute_1x128", EwProgram::identity(DType::BF16),
          Granularity::block(1, 128), DType::E4M3FN);
    out.back().spec.kind = AuxKind::Permute;
    ElementwiseSpec u;
    u.kind = AuxKind::Unpermute;
    u.program = EwProgram::identity(DType::BF16);
    u.out = DType::BF16;
    out.push_back({"moe_unpermute", u});
  }
  for (auto [name, g] :
       {std::pair<const char *, Granularity>{"transpose_f32",
                                             Granularity::block(128, 128)},
        {"transpose_ue8m0", Granularity::block(1, 128, ScaleFormat::UE8M0)}}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Transpose;
    s.quant.granularity = g;
    out.push_back({name, s});
  }
  return out;
}

class ElementwiseCompile
    : public ::testing::TestWithParam<std::tuple<size_t, Arch>> {};

TEST_P(ElementwiseCompile, CompilesWithoutSpills) {
  auto [index, arch] = GetParam();
  Case c = cases()[index];
  c.spec.arch = arch;
  auto kernels = emitElementwise(c.spec);
  ASSERT_TRUE(kernels.isOk()) << kernels.message();
  // One translation unit for all entry points: compile it once, with the
  // first name, and check that every entry point is in the cubin.
  auto compiled = compileWithNvrtc((*kernels)[0]);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const std::string cubin(compiled->cubin.begin(), compiled->cubin.end());
  for (const GeneratedKernel &k : *kernels)
    EXPECT_NE(cubin.find(k.name), std::string::npos)
        << k.name << " is not in the cubin";
  // ptxas -v reports every entry point: none may spill.
  static const std::regex spills(
      R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  int reports = 0;
  for (auto it = std::sregex_iterator(compiled->log.begin(),
                                      compiled->log.end(), spills);
       it != std::sregex_iterator(); ++it, ++reports)
    EXPECT_EQ((*it)[1].str() + "+" + (*it)[2].str(), "0+0") << compiled->log;
  EXPECT_EQ(reports, int(kernels->size())) << compiled->log;
  // The compile's CPU time, the lesser of two where the first is over: a
  // loaded machine (the other tests' processes on its cores) slows one
  // compile, not the kernel's cost.
  double cpu = compiled->compileCpuSeconds;
  if (cpu >= 2.0) {
    auto again = compileWithNvrtc((*kernels)[0]);
    ASSERT_TRUE(again.isOk()) << again.message();
    cpu = std::min(cpu, again->compileCpuSeconds);
  }
  EXPECT_LT(cpu, 2.0) << c.name << " (wall " << compiled->compileSeconds
                      << " s)";
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, ElementwiseCompile,
    ::testing::Combine(::testing::Range<size_t>(0, cases().size()),
                       ::testing::Values(Arch::SM90a, Arch::SM100a)),
    [](const auto &info) {
      return std::string(cases()[std::get<0>(info.param)].name) + "_" +
             (std::get<1>(info.param) == Arch::SM90a ? "sm90a" : "sm100a");
    });

/// Occurrences of `needle` in `text`.
int countOf(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// The case of cases() named `name`, built for sm_90a (name "" if none is).
Case sm90Case(const char *name) {
  Case c{"", {}};
  for (const Case &k : cases())
    if (std::string(k.name) == name)
      c = k;
  c.spec.arch = Arch::SM90a;
  return c;
}

/// Entry point `entry`'s part of `ptx`, from its `.entry` line to the next
/// one ("" if there is no such entry).
std::string entryBody(const std::string &ptx, const std::string &entry) {
  const size_t at = ptx.find(".entry " + entry + "(");
  if (at == std::string::npos)
    return "";
  return ptx.substr(at, ptx.find(".entry ", at + 1) - at);
}

/// The byte offsets into the kernel parameter that the PTX loads: directly
/// ([k_param_0+112]) or through a register the compiler pointed into it
/// (mov.b64 %rd1, k_param_0; add.s64 %rd2, %rd1, 104; ld.param [%rd2+8]);
/// a vector load (ld.param.v2.u32) reads each of its elements.
std::set<int64_t> paramOffsetsRead(const std::string &ptx) {
  static const std::regex base(R"(mov\.b64\s+(%rd\d+),\s+\w+_param_0;)");
  static const std::regex add(R"(add\.s64\s+(%rd\d+),\s+(%rd\d+),\s+(-?\d+);)");
  static const std::regex load(
      R"(ld\.param(\.v(\d))?\.[a-z](\d+)\s+[^\[]*\[(\w+_param_0|%rd\d+)(\+(-?\d+))?\])");
  std::map<std::string, int64_t> into; // register -> offset into the param
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), base);
       it != std::sregex_iterator(); ++it)
    into[(*it)[1]] = 0;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), add);
       it != std::sregex_iterator(); ++it)
    if (into.count((*it)[2]))
      into[(*it)[1]] = into[(*it)[2]] + std::stoll((*it)[3]);
  std::set<int64_t> out;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), load);
       it != std::sregex_iterator(); ++it) {
    const int lanes = (*it)[2].matched ? std::stoi((*it)[2]) : 1;
    const int bytes = std::stoi((*it)[3]) / 8;
    const std::string at = (*it)[4];
    int64_t offset = (*it)[6].matched ? std::stoll((*it)[6]) : 0;
    if (at[0] == '%') {
      if (!into.count(at))
        continue;
      offset += into[at];
    }
    for (int l = 0; l < lanes; ++l)
      out.insert(offset + l * bytes);
  }
  return out;
}

/// The registers ptxas gave entry point `entry`, from a compile log of
/// `ptxas -v` ("Compiling entry function 'e' for 'sm_90a'", then "Used N
/// registers"); -1 if the log does not report it.
int registersOf(const std::string &log, const std::string &entry) {
  const size_t at = log.find("Compiling entry function '" + entry + "'");
  if (at == std::string::npos)
    return -1;
  static const std::regex used(R"(Used (\d+) registers)");
  std::smatch m;
  const std::string rest = log.substr(at);
  return std::regex_search(rest, m, used) ? std::stoi(m[1]) : -1;
}

// The row-block quantize of a plain conversion (1x128 and MX 1x32 scales,
// the examples' activations) keeps its registers few enough for five and
// six CTAs of 256 threads an SM, the loads in flight its bandwidth rests
// on. The walk's loads once sat in a helper that filled the caller's
// arrays through references, the same instructions in 64 and 54 registers:
// four CTAs an SM for both.
TEST(ElementwiseCompile, TheRowBlockQuantizeKeepsItsOccupancy) {
  for (auto [name, ctas] :
       {std::pair<const char *, int>{"rows_1x128", 5}, {"rows_mx", 6}}) {
    const Case c = sm90Case(name);
    ASSERT_STREQ(c.name, name);
    auto kernels = emitElementwise(c.spec);
    ASSERT_TRUE(kernels.isOk()) << kernels.message();
    ASSERT_EQ(kernels->size(), 1u) << name;
    auto compiled = compileWithNvrtc((*kernels)[0]);
    ASSERT_TRUE(compiled.isOk()) << compiled.message();
    const int regs = registersOf(compiled->log, (*kernels)[0].name);
    ASSERT_GT(regs, 0) << name << ": no register count in\n" << compiled->log;
    // sm_90 allocates a warp's registers eight a thread at a time, out of
    // 64 Ki an SM.
    const int perThread = (regs + 7) / 8 * 8;
    EXPECT_GE(65536 / (perThread * 256), ctas)
        << name << ": " << regs << " registers a thread";
  }
}

// The quantize kernels that feed a GEMM's 1x128 A scales (the row path) or
// its 128x128 B scales (the tile path) write them to the
// plan buffer and, when EwParams::scaleMirror is set, to the mirror: the
// PTX reads the mirror's fields and has a second f32 store.
TEST(ElementwiseCompile, TheQuantizeKernelsStoreTheirScalesToTheMirror) {
  for (const char *name :
       {"rows_1x128", "rows_swiglu", "rows_gelu_pow2", "tiles_128x128"}) {
    const Case c = sm90Case(name);
    ASSERT_STREQ(c.name, name);
    auto kernels = emitElementwise(c.spec);
    ASSERT_TRUE(kernels.isOk()) << kernels.message();
    const bool rows = std::string(name).rfind("rows_", 0) == 0;
    ASSERT_EQ(kernels->size(), 1u) << name;
    EXPECT_NE((*kernels)[0].source.find(rows ? "quantize_rows_body"
                                             : "quantize_tile_body"),
              std::string::npos);
    // One translation unit holds every entry point.
    auto compiled = compileWithNvrtc((*kernels)[0]);
    ASSERT_TRUE(compiled.isOk()) << compiled.message();
    auto ptx = compileToPtx((*kernels)[0]);
    ASSERT_TRUE(ptx.isOk()) << ptx.message();
    // The mirror's pointer and strides are read, and the scale is stored
    // more than once (ptxas may version the loop on the null check: 2 or 3).
    const std::set<int64_t> read = paramOffsetsRead(*ptx);
    // The scale grid's width is read (a control on the parser).
    EXPECT_EQ(read.count(int64_t(offsetof(fp8k::EwParams, scaleCols))), 1u);
    for (size_t offset : {offsetof(fp8k::EwParams, scaleMirror),
                          offsetof(fp8k::EwParams, mirrorStrideRows),
                          offsetof(fp8k::EwParams, mirrorStrideCols)})
      EXPECT_EQ(read.count(int64_t(offset)), 1u)
          << name << ": EwParams at offset " << offset << " is never read";
    EXPECT_GE(countOf(*ptx, "st.global.f32"), 2) << name << "\n" << *ptx;
  }
}

// Every entry point lets the stream's next kernel start and waits for the
// one before (programmatic dependent launch, fp8k::after_prior_grid) before
// its first access to global memory; a table's fill comes before the wait,
// to overlap the kernel before. The launch side is the runtime's
// (ElementwiseLaunch.cpp, a step's later kernels); the GPU tests run the
// multi-kernel steps against the oracle with it.
TEST(ElementwiseCompile, EveryEntryWaitsForThePriorGridBeforeMemory) {
  static const std::regex global(R"(\b(ld|st|atom|red)\.global\b)");
  int entries = 0;
  for (const char *name : {"delayed", "blocks_per_tensor", "moe_permute_1x128",
                           "transpose_f32", "rows_swiglu", "cols_128x1"}) {
    const Case c = sm90Case(name);
    ASSERT_STREQ(c.name, name);
    auto kernels = emitElementwise(c.spec);
    ASSERT_TRUE(kernels.isOk()) << kernels.message();
    auto ptx = compileToPtx((*kernels)[0]);
    ASSERT_TRUE(ptx.isOk()) << ptx.message();
    for (const GeneratedKernel &k : *kernels) {
      const std::string body = entryBody(*ptx, k.name);
      ASSERT_FALSE(body.empty()) << name << ": no entry " << k.name;
      ++entries;
      EXPECT_EQ(countOf(body, "griddepcontrol.launch_dependents;"), 1)
          << k.name;
      ASSERT_EQ(countOf(body, "griddepcontrol.wait;"), 1) << k.name;
      const size_t wait = body.find("griddepcontrol.wait;");
      std::smatch first;
      ASSERT_TRUE(std::regex_search(body, first, global)) << k.name;
      EXPECT_LT(wait, size_t(first.position(0)))
          << k.name << ": global memory accessed before the wait";
      // The SwiGLU table is filled before the wait.
      if (std::string(name) == "rows_swiglu")
        EXPECT_LT(body.find("st.shared"), wait) << k.name;
    }
  }
  // (per tensor: amax and codes; delayed scaling's amax pass makes the
  // scale, current scaling's codes pass or its one-kernel path)
  EXPECT_EQ(entries, 2 + 3 + 3 + 2 + 1 + 1);
}

// Per-tensor scaling's codes pass reads the input the amax pass read before it
// (current scaling every run, delayed scaling when the scale its history
// predicted was not the step's): it marks its loads and its code stores
// evict-first (ld/st.global.cs), so the part of the input the amax pass left in
// the L2 outlasts what the codes pass is done with; the amax pass's loads carry
// no such mark. Current scaling's one-kernel path marks the loads of what it
// holds on chip and of its second walk, and its code stores; its first walk
// of the rest keeps plain loads.
TEST(ElementwiseCompile, ThePerTensorCodesPassReadsForTheLastTime) {
  for (const char *name : {"blocks_per_tensor", "delayed"}) {
    const Case c = sm90Case(name);
    ASSERT_STREQ(c.name, name);
    auto kernels = emitElementwise(c.spec);
    ASSERT_TRUE(kernels.isOk()) << kernels.message();
    auto ptx = compileToPtx((*kernels)[0]);
    ASSERT_TRUE(ptx.isOk()) << ptx.message();
    int marked = 0;
    for (const GeneratedKernel &k : *kernels) {
      const std::string body = entryBody(*ptx, k.name);
      ASSERT_FALSE(body.empty()) << name << ": no entry " << k.name;
      const int loads = countOf(body, "ld.global.cs.v4");
      const int stores = countOf(body, "st.global.cs.v2");
      EXPECT_EQ(loads > 0, stores > 0) << name << " " << k.name;
      marked += loads > 0;
      // The plain loads of the other pass are there (a control).
      if (loads == 0)
        EXPECT_GT(countOf(body, "ld.global.v4"), 0) << name << " " << k.name;
    }
    const bool oneKernel = quantizeHasResidentPath(c.spec);
    EXPECT_EQ(oneKernel, std::string(name) == "blocks_per_tensor");
    EXPECT_EQ(marked, oneKernel ? 2 : 1)
        << name << ": the codes pass (and the one-kernel path) alone";
  }
}

// The quantize with a given amax (a GEMM epilogue's) is the codes pass
// alone: one entry, its loads the input's last and its code stores marked
// evict-first, the amax read once a CTA and no atomic anywhere (nothing to
// reduce, nothing to reset).
TEST(ElementwiseCompile, TheGivenAmaxQuantizeIsOnePassWithoutAtomics) {
  const Case c = sm90Case("tensor_amax_in");
  ASSERT_STREQ(c.name, "tensor_amax_in");
  auto kernels = emitElementwise(c.spec);
  ASSERT_TRUE(kernels.isOk()) << kernels.message();
  ASSERT_EQ(kernels->size(), 1u);
  auto ptx = compileToPtx((*kernels)[0]);
  ASSERT_TRUE(ptx.isOk()) << ptx.message();
  const std::string body = entryBody(*ptx, (*kernels)[0].name);
  ASSERT_FALSE(body.empty());
  EXPECT_GT(countOf(body, "ld.global.cs.v4"), 0);
  EXPECT_GT(countOf(body, "st.global.cs.v2"), 0);
  EXPECT_EQ(countOf(body, "atom."), 0);
  EXPECT_EQ(countOf(body, "red.global"), 0);
  // The control: the two-pass path's codes pass takes its amax by atomic.
  const Case two = sm90Case("blocks_per_tensor");
  auto twoKernels = emitElementwise(two.spec);
  ASSERT_TRUE(twoKernels.isOk()) << twoKernels.message();
  auto twoPtx = compileToPtx((*twoKernels)[0]);
  ASSERT_TRUE(twoPtx.isOk()) << twoPtx.message();
  EXPECT_GT(countOf(entryBody(*twoPtx, (*twoKernels)[1].name), "atom."), 0);
}

} // namespace
