//===- PlanTest.cpp - Plans: format, checks, sizes, the CPU oracle --------===//
//
// The CPU parts of fp8-run: the plan's JSON form and its version check,
// every validation and sizing error, the delayed-scaling state, and the
// oracle's steps against numerics/ called directly.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "core/InputFile.h"
#include "numerics/Formats.h"
#include "numerics/Quantize.h"
#include "numerics/Random.h"
#include "numerics/ReferenceGemm.h"
#include "runtime/plan/Base64.h"
#include "runtime/plan/PlanOracle.h"

#include "codegen/kernels/fp8_delayed.h"
#include "codegen/kernels/fp8_functions.h"

#include "test/runtime/plan/DeepSeekPlan.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace fp8;
using namespace fp8::testplans;
namespace nm = fp8::numerics;

namespace {

/// x [M, 256] quantized per 1x128 (run), w [128, 256] per 128x128
/// (prepare), D = x w^T with promotion every 128; its reference.
Plan tinyPlan() { return deepseekPlan("tiny", 128, 256); }

/// The message of parsing `plan` after `edit`.
template <typename Edit> std::string problem(Edit edit) {
  Plan p = tinyPlan();
  edit(p);
  return validatePlan(p).message();
}

} // namespace

TEST(Plan, JSONRoundTrips) {
  Plan p = tinyPlan();
  p.buffers.push_back(buffer("h", DType::F32, {C(20)}, BufferRole::State));
  p.buffers.back().history = 16;
  p.buffers.push_back(
      buffer("k", DType::E5M2, {C(2), C(3)}, BufferRole::Constant));
  p.buffers.back().data = {1, 2, 3, 4, 5, 250};
  ASSERT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
  const std::string json = toJSON(p);
  auto back = parsePlan(json, "'tiny'");
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(toJSON(*back), json);
  EXPECT_EQ(back->buffer("k")->data, p.buffers.back().data);
  EXPECT_EQ(back->steps[2].gemm, p.steps[2].gemm);
  EXPECT_EQ(back->steps[0].aux, p.steps[0].aux);
}

TEST(Plan, TheExamplePlansRoundTrip) {
  // Every committed example plan, the MoE forms among them (a permute
  // step, contiguous grouped GEMMs, the K-grouped weight gradients with
  // their reference form and layouts), reads and writes back unchanged.
  for (const char *name :
       {"mlp", "attention-proj", "grad-projection", "moe", "moe-wgrad",
        "moe-wgrad.transposes", "mlp.fused", "llama-layer.fused"}) {
    const std::string path =
        std::string(FP8_EXAMPLE_PLANS) + "/" + name + ".sm_90a.plan.json";
    auto p = loadPlan(path);
    ASSERT_TRUE(p.isOk()) << name << ": " << p.message();
    auto text = readInputFile(path, kMaxPlanBytes, "plan");
    ASSERT_TRUE(text.isOk()) << text.message();
    EXPECT_EQ(toJSON(*p), *text) << name;
  }
  auto w =
      loadPlan(std::string(FP8_EXAMPLE_PLANS) + "/moe-wgrad.sm_90a.plan.json");
  ASSERT_TRUE(w.isOk());
  int grouped = 0;
  for (const RefOp &r : w->reference) {
    if (r.kind != RefOp::Kind::GroupedMatmul)
      continue;
    ++grouped;
    EXPECT_EQ(r.form, GemmKind::GroupedK) << r.out;
    EXPECT_EQ(r.aLayout, Layout::MNMajor) << r.out;
    EXPECT_EQ(r.bLayout, Layout::MNMajor) << r.out;
    EXPECT_EQ(r.experts, 16) << r.out;
  }
  EXPECT_EQ(grouped, 3);
}

TEST(Plan, StepsOfAPhaseInTheirOrder) {
  // The Llama layer's prepare steps (its weights' quantizes) lie between
  // its run steps: each phase's indices come in plan order, every step in
  // exactly one.
  auto p = loadPlan(std::string(FP8_EXAMPLE_PLANS) +
                    "/llama-layer.sm_90a.plan.json");
  ASSERT_TRUE(p.isOk()) << p.message();
  EXPECT_EQ(p->stepsOf(Phase::Prepare), (std::vector<size_t>{0, 2, 3, 4, 5}));
  EXPECT_EQ(p->stepsOf(Phase::Run),
            (std::vector<size_t>{1, 6, 7, 8, 9, 10, 11, 12, 13}));
  EXPECT_TRUE(Plan().stepsOf(Phase::Run).empty());
}

TEST(Plan, RefusesOtherFormatsAndBrokenJSON) {
  std::string json = toJSON(tinyPlan());
  json.replace(json.find("\"format\": 1"), 11, "\"format\": 7");
  EXPECT_EQ(parsePlan(json, "'p.json'").message(),
            "plan 'p.json' has format 7; this build of fp8-run reads format 1 "
            "(recompile the model with the matching fp8-translate)");
  EXPECT_EQ(parsePlan("[1, 2]", "'p.json'").message(),
            "expected plan 'p.json' to be a JSON object, found array");
  EXPECT_EQ(parsePlan("{\"format\": \"1\"}", "'p.json'").message(),
            "expected plan 'p.json' to have an integer 'format' (1 for this "
            "build)");
  EXPECT_EQ(parsePlan("{", "'p.json'").message(),
            "plan 'p.json' is not valid JSON");
  EXPECT_EQ(loadPlan("/nonexistent/p.json").message(),
            "cannot read plan '/nonexistent/p.json': No such file or "
            "directory");
}

/// The message of parsing tinyPlan()'s JSON with the text `from` replaced
/// by `to` (`from` must occur; its first occurrence is replaced).
static std::string parseEdited(const std::string &from, const std::string &to) {
  std::string json = toJSON(tinyPlan());
  const size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos)
    return "";
  json.replace(at, from.size(), to);
  return parsePlan(json, "'p.json'").message();
}

TEST(Plan, FieldsAreExactlyTypedAndInRange) {
  // 2^32 + 128 was read as 32 bits: block_n 128.
  EXPECT_EQ(parseEdited("\"block_n\": 128", "\"block_n\": 4294967424"),
            "step 'gemm': expected 'block_n' in tile to be an integer in "
            "[1, 256], found 4294967424");
  EXPECT_EQ(parseEdited("\"block_n\": 128", "\"block_n\": 128.5"),
            "step 'gemm': expected 'block_n' in tile to be an integer in "
            "[1, 256], found 128.5");
  EXPECT_EQ(parseEdited("\"stages\": 4", "\"stages\": true"),
            "step 'gemm': expected 'stages' in tile to be an integer in "
            "[2, 32], found true");
  EXPECT_EQ(parseEdited("\"batch\": 1", "\"batch\": 1.0"),
            "expected 'batch' in step 'gemm' to be an integer in [1, "
            "2147483647], found 1.0");
  EXPECT_EQ(parseEdited("\"batch\": 1", "\"batch\": 4294967297"),
            "expected 'batch' in step 'gemm' to be an integer in [1, "
            "2147483647], found 4294967297");
  EXPECT_EQ(parseEdited("\"format\": 1", "\"format\": 1.0"),
            "expected plan 'p.json' to have an integer 'format' (1 for this "
            "build)");
}

TEST(Plan, PresentFieldsOfTheWrongTypeAreErrors) {
  EXPECT_EQ(parseEdited("\"runtime_tile\": false", "\"runtime_tile\": \"no\""),
            "expected 'runtime_tile' in step 'gemm' to be a boolean, found "
            "\"no\"");
  EXPECT_EQ(parseEdited("\"runtime_tile\": false", "\"runtime_tile\": 0"),
            "expected 'runtime_tile' in step 'gemm' to be a boolean, found 0");
  EXPECT_EQ(parseEdited("\"tile_source\": \"\"", "\"tile_source\": 7"),
            "expected 'tile_source' in step 'gemm' to be a string, found 7");
  EXPECT_EQ(parseEdited("\"op\": \"\"", "\"op\": {}"),
            "expected 'op' in step 'quantize_x' to be a string, found {}");
  EXPECT_EQ(parseEdited("\"kernel\": \"fp8_quant", "\"kernel\": 1, \"x\": \""),
            "expected 'kernel' in step 'quantize_x' to be a string, found 1");
  EXPECT_EQ(parseEdited("\"batched\": false", "\"batched\": \"false\""),
            "expected 'batched' in reference op 0 to be a boolean, found "
            "\"false\"");
  // Keys of another kind of step or buffer are not silently dropped.
  EXPECT_EQ(parseEdited("\"kernel\": \"fp8_quant",
                        "\"batch\": 2, \"kernel\": \"fp8_quant"),
            "expected no 'batch' in quantize step 'quantize_x' (gemm steps "
            "only)");
  EXPECT_EQ(parseEdited("\"role\": \"output\"",
                        "\"role\": \"output\", \"history\": 3"),
            "expected no 'history' in output buffer 'd' (only states have "
            "one)");
}

TEST(Plan, ReferenceValuesAgreeWithTheirBuffers) {
  // The reference value 'd' stands for the output buffer 'd': its shape
  // sized the buffer, whose declaration was ignored.
  std::string json = toJSON(tinyPlan());
  const size_t ref = json.find("\"reference\"");
  ASSERT_NE(ref, std::string::npos);
  const size_t n = json.find("128", ref);
  ASSERT_NE(n, std::string::npos);
  json.replace(n, 3, "64");
  EXPECT_EQ(parsePlan(json, "'p.json'").message(),
            "plan 'p.json': reference value 'd': expected shape [M, 128] "
            "(that of buffer 'd'), found [M, 64]");
  Plan p = tinyPlan();
  p.reference[0].dtype = DType::F32;
  EXPECT_EQ(validatePlan(p).message(),
            "reference value 'd': expected element type bf16 (that of buffer "
            "'d'), found f32");
}

TEST(Plan, ValidationChecksKernelSpecsBuiltInMemory) {
  Plan p = tinyPlan();
  p.steps[2].gemm.tile.mathWarpgroups = 0;
  EXPECT_EQ(validatePlan(p).message(),
            "step 'gemm': expected 'math_warpgroups' in tile to be an integer "
            "in [1, 4], found 0");
  p = tinyPlan();
  p.steps[2].batch = 0;
  EXPECT_EQ(validatePlan(p).message(),
            "expected 'batch' in step 'gemm' to be an integer in [1, "
            "2147483647], found 0");
}

TEST(Plan, LoadReadsOnlyRegularFilesUpToTheCap) {
  EXPECT_EQ(loadPlan("/dev/zero").message(),
            "expected plan '/dev/zero' to be a regular file, found a "
            "character device");
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(loadPlan(dir).message(), "expected plan '" + dir +
                                         "' to be a regular file, found a "
                                         "directory");
  const std::string fifo = dir + "/plan-fifo-" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // No writer: opening must not wait for one.
  EXPECT_EQ(loadPlan(fifo).message(),
            "expected plan '" + fifo + "' to be a regular file, found a FIFO");
  std::remove(fifo.c_str());
  // A sparse file one byte over the cap: refused by its size, unread.
  const std::string big = dir + "/plan-big-" + std::to_string(getpid());
  const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, kMaxPlanBytes + 1), 0);
  ::close(fd);
  EXPECT_EQ(loadPlan(big).message(), "expected plan '" + big +
                                         "' to be at most 268435456 bytes, " +
                                         "found 268435457");
  std::remove(big.c_str());
}

TEST(Plan, ValidationNamesTheProblem) {
  EXPECT_EQ(problem([](Plan &p) { p.buffers[1].name = "x"; }),
            "expected unique, non-empty buffer names, found 'x' twice");
  // Buffer names become file names: none may reach outside a directory.
  for (const char *bad :
       {"../../escaped_codes", "a/b", "", ".hidden", "1x", "x y"})
    EXPECT_EQ(problem([&](Plan &p) { p.buffers[1].name = bad; }),
              std::string("expected a buffer name of letters, digits and '_' "
                          "(not starting with a digit, at most 128), found '") +
                  bad + "'")
        << bad;
  EXPECT_EQ(problem([](Plan &p) { p.dims.clear(); }),
            "shape [M, 256] of buffer 'x' uses dimension 'M', which 'dims' "
            "does not declare");
  EXPECT_EQ(problem([](Plan &p) { std::swap(p.steps[0], p.steps[2]); }),
            "step 'gemm' reads 'xq' before any step writes it");
  EXPECT_EQ(problem([](Plan &p) { p.steps[0].outputs[0] = "x"; }),
            "step 'quantize_x' writes input 'x' (only temp and output "
            "buffers are written)");
  EXPECT_EQ(problem([](Plan &p) { p.steps[1].outputs = {"xq", "xs"}; }),
            "step 'quantize_w' writes 'xq', which an earlier step wrote");
  EXPECT_EQ(problem([](Plan &p) { p.steps[0].phase = Phase::Prepare; }),
            "prepare step 'quantize_x' reads 'x', which is not a weight, a "
            "constant or a prepare result");
  EXPECT_EQ(problem([](Plan &p) { p.steps[2].inputs.pop_back(); }),
            "step 'gemm': expected 4 inputs (a, a_scale, b, b_scale), found 3");
  EXPECT_EQ(problem([](Plan &p) { p.buffers[3].dtype = DType::UE8M0; }),
            "step 'quantize_x': expected scales 'xs' to be f32, found ue8m0");
  EXPECT_EQ(problem([](Plan &p) { p.steps[2].gemm.a.format = DType::E5M2; }),
            "step 'gemm': expected A 'xq' to be e5m2, found e4m3fn");
  EXPECT_EQ(problem([](Plan &p) { p.steps[0].state = "x"; }),
            "step 'quantize_x': expected no 'state' with current scaling");
  EXPECT_EQ(problem([](Plan &p) { p.steps[2].batch = 2; }),
            "step 'gemm': expected rank-3 operands (batched GEMM), found 'xq' "
            "of shape [M, 256]");
  EXPECT_EQ(problem([](Plan &p) { p.outputs = {"xs"}; }),
            "expected graph output 'xs' to be a buffer of role output");
  EXPECT_EQ(problem([](Plan &p) { p.steps.pop_back(); }),
            "graph output 'd' is never written by a step");
  EXPECT_EQ(problem([](Plan &p) { p.reference[0].inputs = {"x", "wq"}; }),
            "reference op 'd' reads 'wq', which is neither a high-precision "
            "input, weight or constant nor an earlier reference value");
  EXPECT_EQ(problem([](Plan &p) {
              p.buffers.push_back(
                  buffer("k", DType::F32, {C(2)}, BufferRole::Constant));
            }),
            "expected constant 'k' to hold 8 bytes (f32 [2]), found 0");
  EXPECT_EQ(problem([](Plan &p) {
              p.buffers.push_back(
                  buffer("h", DType::F32, {C(16)}, BufferRole::State));
              p.buffers.back().history = 16;
            }),
            "expected state buffer 'h' to be f32 [history + 4] with a "
            "positive history, found f32 [16] with history 16");
}

TEST(Plan, DimensionsAndShapes) {
  Plan p = tinyPlan();
  EXPECT_EQ(resolveDims(p, {}).message(),
            "the plan has a dynamic dimension M: give its size with --dim "
            "M=<size>");
  EXPECT_EQ(resolveDims(p, {{"N", 3}}).message(),
            "the plan has no dynamic dimension 'N' (it has M)");
  EXPECT_EQ(resolveDims(p, {{"M", -1}}).message(),
            "expected the size of M to be non-negative and below 2^40, found "
            "-1");
  auto dims = resolveDims(p, {{"M", 300}});
  ASSERT_TRUE(dims.isOk());
  auto s = resolveShape({M(128), C(7)}, *dims);
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(*s, (Shape{3, 7}));
  auto r = resolvePlan(p, *dims);
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_EQ(r->shapes.at("xs"), (Shape{300, 2}));
  EXPECT_EQ(r->shapes.at("d"), (Shape{300, 128}));

  // Shapes that disagree with a step are named at the step.
  p.buffers[5].shape = {C(2), C(2)};
  EXPECT_EQ(resolvePlan(p, *dims).message(),
            "step 'quantize_w': expected scales 'ws' to have shape [1, 2], "
            "found [2, 2]");
  p = tinyPlan();
  p.steps[2].gemm.k = 512;
  EXPECT_EQ(resolvePlan(p, *dims).message(),
            "step 'gemm': expected A [M, 512] and B [128, 512] for the kernel "
            "spec, found A [300, 256] and B [128, 256]");
  p = tinyPlan();
  p.steps[2].gemm.b.layout = Layout::MNMajor;
  EXPECT_NE(resolvePlan(p, *dims).message().find("expected K-major A and B"),
            std::string::npos);
}

TEST(Plan, Base64) {
  std::vector<uint8_t> d;
  for (int n = 0; n < 10; ++n) {
    auto back = base64Decode(base64Encode(d));
    ASSERT_TRUE(back.isOk());
    EXPECT_EQ(*back, d);
    d.push_back(uint8_t(n * 37 + 200));
  }
  EXPECT_EQ(base64Encode({'M', 'a', 'n'}), "TWFu");
  EXPECT_EQ(base64Decode("TWE").message(),
            "expected base64 data of a length divisible by 4, found 3 "
            "characters");
  EXPECT_EQ(base64Decode("TW!u").message(),
            "invalid base64 character at offset 2");
}

TEST(PlanOracle, HistoryStateRoundTripsAndMatchesTheKernels) {
  DelayedScaling d;
  d.historyLength = 3;
  d.updateInterval = 2;
  HostTensor state = HostTensor::zeros(DType::F32, {7});
  // The kernels' update, step by step, read back as an AmaxHistory.
  nm::AmaxHistory want(d);
  auto *st = reinterpret_cast<fp8k::AmaxHistoryState *>(state.data.data());
  auto *values = reinterpret_cast<float *>(st + 1);
  for (int step = 0; step < 9; ++step) {
    const float amax = float(step + 1) * 0.5f;
    uint8_t code;
    fp8k::delayed_scale_step(st, values, 3, 2, 0, 0, fp8k::abs_bits(amax),
                             fp8k::kE4M3, fp8k::kScaleF32, &code);
    want.setRefit(want.empty()); // no prediction on an empty history
    if (want.measuresNextStep())
      want.record(amax);
    want.advance();
    nm::AmaxHistory got = historyFromState(state, d);
    EXPECT_EQ(got.steps(), want.steps());
    EXPECT_EQ(got.values(), want.values()) << "step " << step;
    EXPECT_EQ(got.recorded() % 3, want.recorded() % 3) << "step " << step;
    // The oracle writes the kernels' bytes (the ring's head and order, the
    // refit flag), once the ring has wrapped too.
    HostTensor mine = HostTensor::zeros(DType::F32, {7});
    stateFromHistory(want, mine);
    EXPECT_EQ(mine.data, state.data) << "step " << step;
  }
  HostTensor copy = HostTensor::zeros(DType::F32, {7});
  stateFromHistory(want, copy);
  nm::AmaxHistory again = historyFromState(copy, d);
  EXPECT_EQ(again.values(), want.values());
  EXPECT_EQ(again.steps(), want.steps());
}

TEST(Plan, SizesNeverOverflow) {
  Plan p = tinyPlan();
  // Dimensions of 2^40 or more are refused before any shape is formed.
  EXPECT_EQ(resolveDims(p, {{"M", int64_t(1) << 52}}).message(),
            "expected the size of M to be non-negative and below 2^40, found "
            "4503599627370496");
  EXPECT_TRUE(resolveDims(p, {{"M", kMaxDimSize - 1}}).isOk());

  // Counts saturate instead of wrapping (2^32 * 2^32 wrapped to 0).
  const int64_t big = int64_t(1) << 32;
  EXPECT_EQ(elementCount({big, big}), INT64_MAX);
  EXPECT_EQ(elementCount({big, big, 0}), 0);
  EXPECT_EQ(
      checkBufferSize("buffer 'e'", DType::E4M3FN, {big, big, 0}).message(),
      "expected buffer 'e' (e4m3fn [4294967296, 4294967296, 0]) to hold "
      "at most 2^47 bytes (140737488355328), found more than 2^63 (its "
      "empty dimensions counted as 1)");
  EXPECT_TRUE(checkBufferSize("buffer 'e'", DType::E4M3FN, {0, 1 << 20}));
  EXPECT_EQ(elementCount({-1, 2}), INT64_MAX);
  EXPECT_EQ(elementCount({big, 7}), big * 7);
  EXPECT_EQ(bytesOf(DType::F32, INT64_MAX / 2), INT64_MAX);
  EXPECT_EQ(addBytes(INT64_MAX, 1), INT64_MAX);

  // ceildiv of a size near INT64_MAX does not overflow.
  auto s = resolveShape({M(128)}, {{"M", INT64_MAX}});
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(*s, (Shape{INT64_MAX / 128 + 1}));
  EXPECT_FALSE(resolveShape({M(128)}, {{"M", -5}}).isOk());
  EXPECT_FALSE(resolveShape({C(-5)}, {}).isOk());

  // A static [2^32, 2^32] buffer: refused, naming it, its shape and dims.
  p.buffers[1].shape = {C(big), C(big)};
  EXPECT_EQ(resolvePlan(p, {{"M", 40}}).message(),
            "expected buffer 'w' (bf16 [4294967296, 4294967296]) to hold at "
            "most 2^47 bytes (140737488355328), found more than 2^63 (dims "
            "M=40)");
  // Within int64_t but over 2^47 bytes: 2^39 rows of 256 bf16.
  p = tinyPlan();
  EXPECT_EQ(resolvePlan(p, {{"M", int64_t(1) << 39}}).message(),
            "expected buffer 'x' (bf16 [549755813888, 256]) to hold at most "
            "2^47 bytes (140737488355328), found 281474976710656 (dims "
            "M=549755813888)");
  // Reference values are checked too.
  p = tinyPlan();
  p.reference[0].shape = {C(big), C(big)};
  EXPECT_NE(resolvePlan(p, {{"M", 40}})
                .message()
                .find("expected reference value 'd' (bf16 [4294967296, "
                      "4294967296]) to hold at most 2^47 bytes"),
            std::string::npos);
}

TEST(PlanOracle, HostRunBytesCountsWhatTheRunHolds) {
  Plan p = tinyPlan();
  auto shapes = resolvePlan(p, {{"M", 40}});
  ASSERT_TRUE(shapes.isOk()) << shapes.message();
  int64_t buffers = 0;
  for (const PlanBuffer &b : p.buffers)
    buffers += bytesOf(b.dtype, elementCount(shapes->shapes.at(b.name)));
  const int64_t cpu = hostRunBytes(p, *shapes, RunOn::Cpu, false);
  const int64_t cpuVerify = hostRunBytes(p, *shapes, RunOn::Cpu, true);
  const int64_t gpu = hostRunBytes(p, *shapes, RunOn::Gpu, false);
  const int64_t gpuVerify = hostRunBytes(p, *shapes, RunOn::Gpu, true);
  // The buffers and a copy of them, and some scratch.
  EXPECT_GT(cpu, 2 * buffers);
  EXPECT_GT(cpuVerify, cpu);
  EXPECT_GT(gpu, buffers);
  EXPECT_GT(gpuVerify, gpu);
  // The scratch: at most 8 bytes per element of a step's operands.
  EXPECT_LT(cpu, 2 * buffers + 8 * (40 * 256 * 3 + 128 * 256 * 3));
  // A GPU run without --verify holds the buffers and the outputs' download:
  // no oracle scratch.
  int64_t outputs = 0;
  for (const PlanBuffer &b : p.buffers)
    if (b.role == BufferRole::Output)
      outputs += bytesOf(b.dtype, elementCount(shapes->shapes.at(b.name)));
  EXPECT_EQ(gpu, buffers + outputs);
  // Grows with M: 2^34 rows is terabytes, which no host has.
  auto huge = resolvePlan(p, {{"M", int64_t(1) << 34}});
  ASSERT_TRUE(huge.isOk()) << huge.message();
  EXPECT_GT(hostRunBytes(p, *huge, RunOn::Cpu, true), int64_t(1) << 44);
}

TEST(PlanOracle, StepsMatchTheNumericsCalledDirectly) {
  Plan p = tinyPlan();
  auto dims = resolveDims(p, {{"M", 40}});
  ASSERT_TRUE(dims.isOk());
  auto shapes = resolvePlan(p, *dims);
  ASSERT_TRUE(shapes.isOk());
  HostBuffers b = allocateHostBuffers(p, *shapes);
  ASSERT_TRUE(fillInputs(p, b, {}).isOk());
  for (const PlanStep &s : p.steps)
    ASSERT_TRUE(runStepOnCpu(p, s, b).isOk());

  const std::vector<float> x = b.at("x").toFloat(), w = b.at("w").toFloat();
  QuantRecipe ra, rb;
  ra.granularity = Granularity::block(1, 128);
  rb.granularity = Granularity::block(128, 128);
  auto qa = nm::quantize(x.data(), 40, 256, ra);
  auto qb = nm::quantize(w.data(), 128, 256, rb);
  ASSERT_TRUE(qa.isOk() && qb.isOk());
  EXPECT_EQ(std::vector<uint8_t>(b.at("xq").data), qa->codes);
  EXPECT_EQ(b.at("xs").toFloat(), qa->scales);
  EXPECT_EQ(std::vector<uint8_t>(b.at("wq").data), qb->codes);
  nm::ReferenceGemmOptions opts;
  opts.promotionInterval = 128;
  auto d = nm::referenceGemm(*qa, Layout::KMajor, *qb, Layout::KMajor, nullptr,
                             opts);
  ASSERT_TRUE(d.isOk());
  HostTensor want = HostTensor::zeros(DType::BF16, {40, 128});
  for (int64_t i = 0; i < 40 * 128; ++i)
    want.set(i, (*d)[size_t(i)]);
  EXPECT_EQ(compareBits(b.at("d"), want).mismatches, 0);

  // The reference: the unquantized product, close to the FP8 one.
  auto ref = runReference(p, *shapes, b);
  ASSERT_TRUE(ref.isOk()) << ref.message();
  const TensorComparison c = compareValues(b.at("d"), ref->at("d"));
  EXPECT_GT(c.metrics.similarity, 0.0);
  EXPECT_LT(c.metrics.similarity, 1e-3);
}

TEST(PlanOracle, TransposeAndElementwiseSteps) {
  // Codes and scales transposed together; an elementwise program stored as
  // bf16.
  Plan p;
  p.function = "t";
  p.buffers = {buffer("w", DType::BF16, {C(4), C(256)}, BufferRole::Weight),
               buffer("q", DType::E4M3FN, {C(4), C(256)}, BufferRole::Temp),
               buffer("s", DType::F32, {C(1), C(2)}, BufferRole::Temp),
               buffer("qt", DType::E4M3FN, {C(256), C(4)}, BufferRole::Temp),
               buffer("st", DType::F32, {C(2), C(1)}, BufferRole::Temp),
               buffer("y", DType::BF16, {C(4), C(256)}, BufferRole::Output)};
  PlanStep q;
  q.name = "q";
  q.kind = StepKind::Quantize;
  q.phase = Phase::Prepare;
  q.inputs = {"w"};
  q.outputs = {"q", "s"};
  q.aux = quantizeSpec(Granularity::block(128, 128));
  PlanStep t = q;
  t.name = "t";
  t.kind = StepKind::Transpose;
  t.inputs = {"q", "s"};
  t.outputs = {"qt", "st"};
  t.aux.kind = AuxKind::Transpose;
  PlanStep e;
  e.name = "e";
  e.kind = StepKind::Elementwise;
  e.phase = Phase::Prepare;
  e.inputs = {"w", "w"};
  e.outputs = {"y"};
  e.aux.kind = AuxKind::Elementwise;
  e.aux.program.inputs = {DType::BF16, DType::BF16};
  e.aux.program.instrs = {
      {EwOp::Mul, {EwArg::input(0), EwArg::input(1)}, DType::F32},
      {EwOp::Exp, {EwArg::result(0)}, DType::F32}};
  e.aux.program.result = EwArg::result(1);
  p.steps = {q, t, e};
  p.outputs = {"y"};
  ASSERT_TRUE(validatePlan(p).isOk()) << validatePlan(p).message();
  auto shapes = resolvePlan(p, {});
  ASSERT_TRUE(shapes.isOk()) << shapes.message();
  HostBuffers b = allocateHostBuffers(p, *shapes);
  ASSERT_TRUE(fillInputs(p, b, {}).isOk());
  for (const PlanStep &s : p.steps)
    ASSERT_TRUE(runStepOnCpu(p, s, b).isOk());
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 256; ++c)
      ASSERT_EQ(b.at("q").data[size_t(r * 256 + c)],
                b.at("qt").data[size_t(c * 4 + r)]);
  EXPECT_EQ(b.at("st").toFloat(), b.at("s").toFloat()); // [1, 2] -> [2, 1]
  for (int64_t i = 0; i < 4 * 256; ++i) {
    const float w = b.at("w").get(i);
    const float want = nm::bf16ToFloat(nm::floatToBF16(fp8k::exp(w * w)));
    ASSERT_EQ(b.at("y").get(i), want);
  }
}

TEST(PlanOracle, Comparisons) {
  HostTensor a = HostTensor::zeros(DType::BF16, {2, 3});
  HostTensor b = a;
  a.set(4, 1.0f);
  TensorComparison c = compareBits(a, b);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.firstMismatch, 4);
  b.set(4, 1.0f);
  EXPECT_EQ(compareBits(a, b).mismatches, 0);
  EXPECT_EQ(compareValues(a, b).metrics.similarity, 0.0);
  HostTensor f = HostTensor::zeros(DType::F32, {6});
  EXPECT_EQ(compareBits(a, f).mismatches, 6); // other type and shape
}
