//===- EmulatedMoeTest.cpp - The MoE and interleave kernels, on the CPU ---===//
//
// EmulatedKernelsTest's method (the generated translation units compiled
// against the CUDA emulator, launched as the executor launches them, bit
// for bit against the oracle) for the MoE permute (route, gather and
// quantize) and unpermute kernels over several routings, and for the
// interleave of a gate and an up projection's weights.
//
//===----------------------------------------------------------------------===//

#include "test/runtime/emulation/EmulatedKernels.h"

#include "numerics/GroupedGemm.h"
#include "runtime/plan/PlanKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>

using namespace fp8;
using namespace fp8::emulated;

namespace {

//===----------------------------------------------------------------------===//
// MoE: permute and unpermute
//===----------------------------------------------------------------------===//

/// One routing: T tokens of H columns, each sent to topK distinct experts of
/// E, groups padded to `align` rows.
struct Routing {
  int64_t tokens, hidden, topK, experts, align;
};
const Routing kRoutings[] = {
    {13, 200, 2, 4, 4},  // partial column block, padding
    {1, 64, 1, 3, 1},    // one token: two empty experts
    {40, 256, 3, 9, 1},  // more experts than CTAs cover at once on 1 SM
    {6, 128, 2, 5, 8},   // padding larger than the groups
    {5, 30, 2, 3, 2},    // rows of 30: the scalar paths
    {700, 16, 3, 5, 8},  // 2100 slots: three routing chunks
    {300, 8, 4, 600, 2}, // 1200 slots, three experts a routing thread
    {9, 24, 10, 12, 1},  // top 10: the unpermute's slots in two batches
};

/// Random distinct experts per token; expert E - 1 left empty when E > topK.
HostTensor routingIds(const Routing &r, uint64_t seed) {
  HostTensor ids = HostTensor::zeros(DType::I32, {r.tokens, r.topK});
  std::mt19937_64 rng(seed);
  const int64_t usable = r.experts > r.topK ? r.experts - 1 : r.experts;
  std::vector<int32_t> v(size_t(r.tokens * r.topK));
  for (int64_t t = 0; t < r.tokens; ++t) {
    std::vector<int32_t> all(static_cast<size_t>(usable));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    std::copy(all.begin(), all.begin() + r.topK, v.begin() + t * r.topK);
  }
  std::memcpy(ids.data.data(), v.data(), v.size() * 4);
  return ids;
}

class EmulatedMoe : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

TEST_P(EmulatedMoe, MatchesTheOracleBitForBit) {
  auto [index, routingIndex] = GetParam();
  const EmulatedKernel &k = kernels()[index];
  auto spec = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(spec.isOk()) << spec.message();
  const Routing r = kRoutings[routingIndex];
  const int64_t rows = r.tokens * r.topK + r.experts * (r.align - 1);
  const DType rowType = spec->program.inputs[0];

  Plan plan;
  PlanStep step;
  step.name = "step";
  step.aux = *spec;
  step.align = r.align;
  HostBuffers emu;
  const HostTensor ids = routingIds(r, index * 31 + uint64_t(routingIndex));
  if (spec->kind == AuxKind::Permute) {
    step.kind = StepKind::Permute;
    emu["x"] = randomTensor(rowType, {r.tokens, r.hidden}, index + 7);
    emu["ids"] = ids;
    const Granularity &g = spec->quant.granularity;
    emu["codes"] = HostTensor::zeros(spec->quant.format, {rows, r.hidden});
    emu["scales"] = HostTensor::zeros(
        g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32,
        scaleShapeFor({rows, r.hidden}, g));
    emu["offsets"] = HostTensor::zeros(DType::I32, {r.experts + 1});
    emu["positions"] = HostTensor::zeros(DType::I32, {r.tokens, r.topK});
    emu["source"] = HostTensor::zeros(DType::I32, {rows});
    // Stale values where the kernels must write.
    for (const char *n : {"codes", "scales", "offsets", "positions", "source"})
      std::fill(emu[n].data.begin(), emu[n].data.end(), uint8_t(0x5A));
    step.inputs = {"x", "ids"};
    step.outputs = {"codes", "scales", "offsets", "positions", "source"};
  } else {
    step.kind = StepKind::Unpermute;
    auto p = numerics::moePermute(
        std::vector<int32_t>(
            reinterpret_cast<const int32_t *>(ids.data.data()),
            reinterpret_cast<const int32_t *>(ids.data.data()) +
                ids.elements()),
        r.tokens, r.topK, r.experts, r.align);
    ASSERT_TRUE(p.isOk()) << p.message();
    HostTensor pos = HostTensor::zeros(DType::I32, {r.tokens, r.topK});
    // Every fifth slot dropped (position -1, as the permute writes for an
    // expert id outside [0, E)).
    std::vector<int32_t> dest = p->destination;
    for (size_t i = 3; i < dest.size(); i += 5)
      dest[i] = -1;
    std::memcpy(pos.data.data(), dest.data(), pos.data.size());
    emu["y"] = randomTensor(rowType, {rows, r.hidden}, index + 11);
    emu["positions"] = pos;
    emu["weights"] = randomTensor(DType::F32, {r.tokens, r.topK}, index + 13);
    emu["out"] = HostTensor::zeros(spec->out, {r.tokens, r.hidden});
    step.inputs = {"y", "positions", "weights"};
    step.outputs = {"out"};
  }
  HostBuffers oracle = emu;
  ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
  StepShapes shapes;
  for (const auto &[name, t] : emu)
    shapes[name] = t.shape;
  // The routing counters: stale too (the count kernel writes them all).
  std::vector<uint32_t> scratch(size_t(auxScratchBytes(step, shapes) / 4),
                                0x5A5A5A5Au);
  EXPECT_EQ(scratch.empty(), spec->kind != AuxKind::Permute);
  runEmulated(k, step, emu, scratch);
  const std::string what =
      spec->kernelName() + " on T=" + std::to_string(r.tokens) +
      ", E=" + std::to_string(r.experts) + ", align " + std::to_string(r.align);
  for (const std::string &n : step.outputs)
    expectSameBits(emu[n], oracle[n], what + ", " + n);
}

INSTANTIATE_TEST_SUITE_P(
    MoeKernels, EmulatedMoe,
    ::testing::Combine(::testing::ValuesIn(kernelsOf({AuxKind::Permute,
                                                      AuxKind::Unpermute})),
                       ::testing::Range(0, int(std::size(kRoutings)))),
    [](const auto &info) {
      auto spec =
          elementwiseSpecFromJSON(kernels()[std::get<0>(info.param)].spec);
      return spec->kernelName() + "_routing" +
             std::to_string(std::get<1>(info.param));
    });

//===----------------------------------------------------------------------===//
// Interleave
//===----------------------------------------------------------------------===//

/// Rows, columns and block of an interleave: 16-byte rows of bf16 and f32,
/// rows that are not (7 columns), blocks of one row and of several.
const std::tuple<int64_t, int64_t, int64_t> kInterleaves[] = {
    {256, 64, 128}, {12, 7, 3}, {5, 24, 1}, {128, 200, 64}};

class EmulatedInterleave
    : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

/// Every row of the result is the oracle's: the two inputs' blocks in
/// turn; stale bytes where the kernel must write.
TEST_P(EmulatedInterleave, MatchesTheOracleBitForBit) {
  auto [index, shapeIndex] = GetParam();
  const EmulatedKernel &k = kernels()[index];
  auto spec = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(spec.isOk()) << spec.message();
  auto [rows, cols, block] = kInterleaves[shapeIndex];
  PlanStep step;
  step.name = "step";
  step.kind = StepKind::Interleave;
  step.aux = *spec;
  step.block = block;
  step.inputs = {"a", "b"};
  step.outputs = {"out"};
  HostBuffers emu;
  emu["a"] = randomTensor(spec->out, {rows, cols}, index + 3);
  emu["b"] = randomTensor(spec->out, {rows, cols}, index + 5);
  emu["out"] = HostTensor::zeros(spec->out, {2 * rows, cols});
  std::fill(emu["out"].data.begin(), emu["out"].data.end(), uint8_t(0x5A));
  HostBuffers oracle = emu;
  Plan plan;
  ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
  std::vector<uint32_t> amax;
  runEmulated(k, step, emu, amax);
  expectSameBits(emu["out"], oracle["out"],
                 spec->kernelName() + " of [" + std::to_string(rows) + ", " +
                     std::to_string(cols) + "] in blocks of " +
                     std::to_string(block));
  // The oracle itself: row 2kB + B + j of the result is row kB + j of b.
  const int64_t rb = bytesOf(spec->out, cols);
  EXPECT_EQ(std::memcmp(oracle["out"].data.data() + block * rb,
                        oracle["b"].data.data(), size_t(rb)),
            0);
}

INSTANTIATE_TEST_SUITE_P(
    InterleaveKernels, EmulatedInterleave,
    ::testing::Combine(::testing::ValuesIn(kernelsOf({AuxKind::Interleave})),
                       ::testing::Range(0, int(std::size(kInterleaves)))),
    [](const auto &info) {
      auto spec =
          elementwiseSpecFromJSON(kernels()[std::get<0>(info.param)].spec);
      return spec->kernelName() + "_shape" +
             std::to_string(std::get<1>(info.param));
    });

} // namespace
