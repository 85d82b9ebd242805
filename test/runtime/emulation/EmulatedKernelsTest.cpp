//===- EmulatedKernelsTest.cpp - The generated kernels, run on the CPU ----===//
//
// CI has no GPU. Here the quantize, transpose and elementwise kernels run
// anyway: the exact translation units codegen emits for NVRTC
// (EmitKernels.cpp writes them at build time) are compiled with g++ against
// a small CUDA emulator (CudaEmulator.h: real threads per CTA, barriers,
// warp shuffles, atomics), launched as the GPU executor launches them (the
// entry points, grids and parameter of runtime/plan/PlanKernels.h, on a 1-SM
// "GPU" so that the grid-stride loops wrap), and their outputs compared
// bit for bit with the CPU oracle's (runStepOnCpu) on ragged shapes and
// stacks of matrices. Delayed scaling runs several steps on one
// amax-history state. Quantize kernels also run with a scale mirror
// (EwParams::scaleMirror, runtime/plan/PlanScaleMirror.h), transposed (A's) or
// with a padded pitch (B's), which must hold the scales bit for bit. The MoE
// and interleave kernels: EmulatedMoeTest.cpp. What this cannot show: the
// GPU's memory model, its speed, NVRTC's code generation (compiled, not run,
// by ElementwiseCompileTest).
//
//===----------------------------------------------------------------------===//

#include "test/runtime/emulation/EmulatedKernels.h"

#include "codegen/Elementwise.h"
#include "codegen/ElementwiseSource.h"
#include "codegen/kernels/elementwise_params.h"
#include "numerics/DelayedScaling.h"
#include "numerics/Random.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanKernels.h"
#include "runtime/plan/PlanOracle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <tuple>

using namespace fp8;
using namespace fp8::emulated;

namespace {

struct Shape3 {
  int64_t batch, rows, cols;
};

Shape shapeOf(const Shape3 &s) {
  return s.batch == 1 ? Shape{s.rows, s.cols} : Shape{s.batch, s.rows, s.cols};
}

/// A shape without its last dimension (a row broadcast's, a reduce's sums).
Shape rowsOf(const Shape &s) { return Shape(s.begin(), s.end() - 1); }

/// Program input i of `spec` on shape s: random, or for a broadcast input a
/// value per row ([batch, rows]; positive, as a norm's sums are) or per
/// column ([cols]).
HostTensor programInput(const ElementwiseSpec &spec, size_t i, const Shape3 &s,
                        uint64_t seed) {
  const Shape shape = shapeOf(s);
  const EwBroadcast bc = spec.program.broadcastOf(i);
  const Shape inShape = bc == EwBroadcast::Row   ? rowsOf(shape)
                        : bc == EwBroadcast::Col ? Shape{s.cols}
                                                 : shape;
  HostTensor t = randomTensor(spec.program.inputs[i], inShape, seed);
  if (bc == EwBroadcast::Row)
    for (int64_t j = 0; j < t.elements(); ++j)
      t.set(j, std::fabs(t.get(j)) * float(s.cols));
  return t;
}

/// The given amax of a quantize that reads one (ElementwiseSpec::amaxIn),
/// one f32 a matrix of input `x`: the matrix's own amax (of its finite
/// values), 2^-20 of it (values past it saturate, their quotients past the
/// fast division's bound), twice it and half of it, in turn over the
/// matrices. Then x's element 3 becomes +inf, which no amax bounds: it
/// saturates too.
HostTensor givenAmax(HostTensor &x, const Shape3 &s) {
  HostTensor a = HostTensor::zeros(
      DType::F32, scaleShapeFor(shapeOf(s), Granularity::perTensor()));
  const int64_t n = s.rows * s.cols;
  for (int64_t b = 0; b < s.batch; ++b) {
    float m = 0;
    for (int64_t i = 0; i < n; ++i)
      if (std::isfinite(x.get(b * n + i)))
        m = std::max(m, std::fabs(x.get(b * n + i)));
    const float factor[] = {1.0f, 0x1p-20f, 2.0f, 0.5f};
    a.set(b, m * factor[b % 4]);
  }
  x.set(std::min<int64_t>(3, x.elements() - 1), INFINITY);
  return a;
}

class EmulatedKernels
    : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

// {2, 48, 80}: the transpose's 16-byte path. Long rows (normKernels()): 3000
// in a row-sum quantize's registers, a short last block; 4104, the long
// rows' entry with chunks past the row; then past them (8264; 5001, not
// whole 16-byte chunks: the entry that keeps nothing); 4096 and 8192,
// every chunk of each keeping entry. Then a tensor of more 16-byte chunks
// than a grid of one SM's striding CTAs has threads (tensorKernels(); 12288
// chunks: current scaling's codes pass of 32 x 256 threads takes one or two
// a thread, pass 1's one wave of 8 or 5 CTAs and delayed scaling's codes
// pass of 8 six to ten): the per-tensor walks' steps of two with their
// second chunk in and out. Last, over 22 MiB of bf16: walked backward.
const Shape3 kShapes[] = {{1, 70, 300},  {3, 20, 200},    {1, 5, 31},
                          {2, 1, 64},    {2, 48, 80},     {2, 2, 3000},
                          {1, 2, 4104},  {2, 2, 2100},    {1, 3, 8264},
                          {2, 3, 4096},  {2, 2, 8192},    {1, 2, 5001},
                          {1, 96, 1024}, {1, 1409, 8192}, {2, 1409, 8192}};
constexpr int kShortShapes = 5, kLongShapes = 12;

TEST_P(EmulatedKernels, MatchTheOracleBitForBit) {
  auto [index, shapeIndex] = GetParam();
  const EmulatedKernel &k = kernels()[index];
  auto parsed = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const Shape3 s = kShapes[shapeIndex];
  const bool delayed =
      spec.kind == AuxKind::Quantize && spec.quant.mode == ScalingMode::Delayed;
  if (delayed && s.batch != 1)
    GTEST_SKIP() << "delayed scaling keeps one history per tensor";
  const Shape shape = shapeOf(s);
  const Granularity &g = spec.quant.granularity;
  const Shape scaleShape = scaleShapeFor(shape, g);
  const DType scaleType =
      g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32;
  Plan plan; // runStepOnCpu reads the step and the buffers only
  PlanStep step;
  step.name = "step";
  step.aux = spec;
  const int steps = delayed ? 4 : 1;
  HostBuffers oracle;
  HostTensor state;
  if (delayed) {
    state =
        HostTensor::zeros(DType::F32, {spec.quant.delayed.historyLength + 4});
    oracle["state"] = state;
    step.state = "state";
  }
  for (int round = 0; round < steps; ++round) {
    HostBuffers emu;
    std::vector<std::string> inputs;
    if (spec.kind == AuxKind::Transpose) {
      HostTensor codes = HostTensor::zeros(spec.quant.format, shape);
      std::mt19937 rng(unsigned(index * 7 + round));
      for (uint8_t &b : codes.data)
        b = uint8_t(rng());
      HostTensor scales = randomTensor(DType::F32, scaleShape, index + 100);
      if (scaleType == DType::UE8M0) {
        scales = HostTensor::zeros(DType::UE8M0, scaleShape);
        for (uint8_t &b : scales.data)
          b = uint8_t(rng());
      }
      emu["codes"] = codes;
      emu["scales"] = scales;
      inputs = {"codes", "scales"};
      Shape t = shape;
      std::swap(t[t.size() - 1], t[t.size() - 2]);
      Shape ts = scaleShape;
      std::swap(ts[ts.size() - 1], ts[ts.size() - 2]);
      emu["codes_t"] = HostTensor::zeros(spec.quant.format, t);
      emu["scales_t"] = HostTensor::zeros(scaleType, ts);
      step.kind = StepKind::Transpose;
      step.outputs = {"codes_t", "scales_t"};
    } else {
      for (size_t i = 0; i < programTensorInputs(spec); ++i) {
        const std::string name = "in" + std::to_string(i);
        HostTensor t = programInput(spec, i, s, 1000 * index + 10 * round + i);
        // Growing magnitudes across the rounds of delayed scaling, and a
        // NaN in round 2 (a non-finite amax: the step takes no prediction).
        for (int64_t j = 0; j < t.elements(); ++j)
          t.set(j, t.get(j) * float(1 + round));
        if (delayed && round == 2 && i == 0)
          t.set(t.elements() / 2, NAN);
        emu[name] = t;
        inputs.push_back(name);
      }
      if (spec.amaxIn) { // the input after the program's
        emu["amax"] = givenAmax(emu["in0"], s);
        inputs.push_back("amax");
      }
      if (spec.kind == AuxKind::Elementwise) {
        step.kind = StepKind::Elementwise;
        step.outputs = {"out"};
        emu["out"] = HostTensor::zeros(spec.out, shape);
      } else if (spec.kind == AuxKind::Reduce) {
        step.kind = StepKind::Reduce;
        step.outputs = {"sums"};
        emu["sums"] = HostTensor::zeros(DType::F32, rowsOf(shape));
      } else {
        step.kind = StepKind::Quantize;
        step.outputs = {"codes", "scales"};
        const auto [codes, scales] = quantizeOutputShapes(spec, shape);
        emu["codes"] = HostTensor::zeros(spec.quant.format, codes);
        emu["scales"] = HostTensor::zeros(scaleType, scales);
      }
    }
    step.inputs = inputs;
    std::vector<uint32_t> amax(size_t(elementCount(scaleShape)), 0);
    if (delayed)
      emu["state"] = state;

    for (const std::string &n : inputs)
      oracle[n] = emu[n];
    for (const std::string &n : step.outputs)
      oracle[n] = HostTensor::zeros(emu[n].dtype, emu[n].shape);
    ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
    runEmulated(k, step, emu, amax);
    if (delayed)
      state = emu["state"];

    const std::string what = std::string(toString(spec.kind)) + " " +
                             spec.kernelName() + " on " + formatShape(shape) +
                             ", round " + std::to_string(round);
    for (const std::string &n : step.outputs)
      expectSameBits(emu[n], oracle[n], what + ", " + n);
    // The block path leaves its amax scratch zeroed for the next call.
    for (uint32_t a : amax)
      ASSERT_EQ(a, 0u) << what << ": amax scratch not reset";
    if (delayed) {
      const numerics::AmaxHistory got =
          historyFromState(state, spec.quant.delayed);
      const numerics::AmaxHistory want =
          historyFromState(oracle["state"], spec.quant.delayed);
      EXPECT_EQ(got.steps(), want.steps()) << what;
      EXPECT_EQ(got.values(), want.values()) << what;
    }
  }
}

/// A test's name: the kernel's, then the shape.
std::string shapeTestName(size_t kernel, int shape) {
  auto spec = elementwiseSpecFromJSON(kernels()[kernel].spec);
  const Shape3 s = kShapes[shape];
  return spec->kernelName() + "_" + std::to_string(s.batch) + "x" +
         std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

INSTANTIATE_TEST_SUITE_P(
    AllKernels, EmulatedKernels,
    ::testing::Combine(
        ::testing::ValuesIn(kernelsOf({AuxKind::Elementwise, AuxKind::Quantize,
                                       AuxKind::Transpose, AuxKind::Reduce})),
        ::testing::Range(0, kShortShapes)),
    [](const auto &info) {
      return shapeTestName(std::get<0>(info.param), std::get<1>(info.param));
    });

/// Row sums, programs with broadcast inputs, whole-row and R x 1 quantizes.
std::vector<size_t> normKernels() {
  return kernelsWhere([](const ElementwiseSpec &s) {
    return s.kind == AuxKind::Reduce || s.program.broadcasts() ||
           quantizeUsesColumnPath(s) ||
           (quantizeUsesRowPath(s) &&
            s.quant.granularity.cols == Granularity::kWhole);
  });
}

INSTANTIATE_TEST_SUITE_P(LongRows, EmulatedKernels,
                         ::testing::Combine(::testing::ValuesIn(normKernels()),
                                            ::testing::Range(kShortShapes,
                                                             kLongShapes)),
                         [](const auto &info) {
                           return shapeTestName(std::get<0>(info.param),
                                                std::get<1>(info.param));
                         });

/// Per-tensor quantizes (their grids stride over the tensor).
std::vector<size_t> tensorKernels() {
  return kernelsWhere([](const ElementwiseSpec &s) {
    return s.kind == AuxKind::Quantize && s.quant.granularity.isPerTensor();
  });
}

INSTANTIATE_TEST_SUITE_P(
    StridedTensors, EmulatedKernels,
    ::testing::Combine(::testing::ValuesIn(tensorKernels()),
                       ::testing::Range(kLongShapes, int(std::size(kShapes)))),
    [](const auto &info) {
      return shapeTestName(std::get<0>(info.param), std::get<1>(info.param));
    });

//===----------------------------------------------------------------------===//
// Tensors off the 16-byte alignment
//===----------------------------------------------------------------------===//

/// A quantize step of `spec` on shape s: its program inputs (programInput,
/// seeds from `seed`) and zeroed codes and scales, in `emu` and `oracle`.
PlanStep quantizeStep(const ElementwiseSpec &spec, const Shape3 &s,
                      uint64_t seed, HostBuffers &emu, HostBuffers &oracle) {
  PlanStep step;
  step.name = "step";
  step.kind = StepKind::Quantize;
  step.aux = spec;
  step.outputs = {"codes", "scales"};
  for (size_t i = 0; i < programTensorInputs(spec); ++i) {
    const std::string name = "in" + std::to_string(i);
    emu[name] = oracle[name] = programInput(spec, i, s, seed + i);
    step.inputs.push_back(name);
  }
  if (spec.amaxIn) {
    emu["amax"] = oracle["amax"] = givenAmax(emu["in0"], s);
    oracle["in0"] = emu["in0"];
    step.inputs.push_back("amax");
  }
  const auto [codes, scales] = quantizeOutputShapes(spec, shapeOf(s));
  const DType scaleType = spec.quant.granularity.scale == ScaleFormat::UE8M0
                              ? DType::UE8M0
                              : DType::F32;
  for (HostBuffers *b : {&emu, &oracle}) {
    (*b)["codes"] = HostTensor::zeros(spec.quant.format, codes);
    (*b)["scales"] = HostTensor::zeros(scaleType, scales);
  }
  return step;
}

class EmulatedMisaligned
    : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

/// Rows of whole chunks of eight columns that a row-sum quantize's keeping
/// entries would hold if aligned (fp8k::row_sum_entry): 3000 and 4096
/// columns (the short rows' entry), 4104 and 8192 (the long rows'), over
/// stacks; and a stack of 40 rows, several block rows of the column path.
const Shape3 kMisalignedShapes[] = {
    {2, 2, 3000}, {2, 3, 4096}, {1, 2, 4104}, {2, 2, 8192}, {3, 40, 96}};

/// Every tensor one element past a 16-byte boundary: a row-sum quantize
/// launches the entry that keeps nothing, the column path runs its
/// lane-per-column body (with a table, over the tasks of its one wave:
/// ColTasks), loads and stores go element by element, and the bits are
/// the oracle's. (The emulator's 16-byte accesses do not
/// fault when misaligned: AuxParamsAligned checks the choice itself.)
TEST_P(EmulatedMisaligned, MatchesTheOracleBitForBit) {
  auto [index, shapeIndex] = GetParam();
  const EmulatedKernel &k = kernels()[index];
  auto parsed = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const Shape3 s = kMisalignedShapes[shapeIndex];
  const Shape shape = shapeOf(s);
  HostBuffers emu, oracle;
  const PlanStep step = quantizeStep(spec, s, 31 * index, emu, oracle);
  std::vector<uint32_t> amax(
      size_t(elementCount(scaleShapeFor(shape, spec.quant.granularity))), 0);
  Plan plan;
  ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
  runEmulatedMisaligned(k, step, emu, amax);
  const std::string what =
      spec.kernelName() + " on " + formatShape(shape) + ", misaligned";
  expectSameBits(emu["codes"], oracle["codes"], what + ", codes");
  expectSameBits(emu["scales"], oracle["scales"], what + ", scales");
}

std::string
misalignedName(const ::testing::TestParamInfo<std::tuple<size_t, int>> &info) {
  auto spec = elementwiseSpecFromJSON(kernels()[std::get<0>(info.param)].spec);
  const Shape3 s = kMisalignedShapes[std::get<1>(info.param)];
  return spec->kernelName() + "_" + std::to_string(s.batch) + "x" +
         std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

INSTANTIATE_TEST_SUITE_P(
    RowSumKernels, EmulatedMisaligned,
    ::testing::Combine(
        ::testing::ValuesIn(kernelsWhere([](const ElementwiseSpec &s) {
          return quantizeUsesRowSumPath(s);
        })),
        ::testing::Range(0, int(std::size(kMisalignedShapes)))),
    misalignedName);

INSTANTIATE_TEST_SUITE_P(
    TableColumnKernels, EmulatedMisaligned,
    ::testing::Combine(
        ::testing::ValuesIn(kernelsWhere([](const ElementwiseSpec &s) {
          return quantizeUsesColumnPath(s) && tabulatedValue(s) >= 0;
        })),
        ::testing::Range(0, int(std::size(kMisalignedShapes)))),
    misalignedName);

/// Column blocks whose scale is outside [2^-100, 2^100] or not finite (a
/// block of tiny values, an infinity, a NaN, a huge value) take the exact
/// division (ScaleDivisor::fast false): the vector column path tests that
/// once a task over the CTA's columns, here mixed with ordinary columns of
/// one task and of the next block row.
TEST(EmulatedColumnScales, BlocksOfEveryScaleMatchTheOracle) {
  const std::vector<size_t> cols = kernelsWhere([](const ElementwiseSpec &s) {
    return quantizeUsesColumnPath(s) && !s.transposed;
  });
  ASSERT_FALSE(cols.empty());
  for (size_t index : cols) {
    auto parsed = elementwiseSpecFromJSON(kernels()[index].spec);
    ASSERT_TRUE(parsed.isOk()) << parsed.message();
    const ElementwiseSpec spec = *parsed;
    const Shape3 s{1, 200, 96};
    const Shape shape = shapeOf(s);
    HostBuffers emu, oracle;
    const PlanStep step = quantizeStep(spec, s, 7 * index, emu, oracle);
    HostTensor &x = emu["in0"];
    for (int64_t r = 0; r < s.rows; ++r) {
      x.set(r * s.cols + 5, x.get(r * s.cols + 5) * 1e-33f);
      if (r >= int64_t(spec.quant.granularity.rows))
        x.set(r * s.cols + 60, x.get(r * s.cols + 60) * 1e37f);
    }
    x.set(3 * s.cols + 17, INFINITY);
    x.set(150 * s.cols + 40, NAN);
    oracle["in0"] = x;
    std::vector<uint32_t> amax(
        size_t(elementCount(scaleShapeFor(shape, spec.quant.granularity))), 0);
    Plan plan;
    ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
    runEmulated(kernels()[index], step, emu, amax);
    const std::string what = spec.kernelName() + " with special blocks";
    expectSameBits(emu["codes"], oracle["codes"], what + ", codes");
    expectSameBits(emu["scales"], oracle["scales"], what + ", scales");
  }
}

//===----------------------------------------------------------------------===//
// Delayed scaling over a full history
//===----------------------------------------------------------------------===//

/// A full, wrapped history of 1000 values (1137 recorded), its largest
/// `back` values before the newest. Each CTA reduces it together (a thread
/// takes every blockDim-th value, newest first: fp8k::cta_history_amax),
/// so the distances reach the first warp's lanes, later warps and later
/// turns of the threads. Codes, scales and state: the oracle's bits.
TEST(EmulatedDelayedHistory, AFullRingPredictsItsLargestValue) {
  const std::vector<size_t> found = kernelsWhere([](const ElementwiseSpec &s) {
    return s.kind == AuxKind::Quantize &&
           s.quant.mode == ScalingMode::Delayed &&
           s.quant.delayed.historyLength == 1000;
  });
  ASSERT_EQ(found.size(), 1u);
  const EmulatedKernel &k = kernels()[found[0]];
  auto parsed = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const DelayedScaling &d = spec.quant.delayed;
  const Shape3 s{1, 7, 200};
  for (int64_t back : {0, 31, 37, 200, 255, 256, 300, 999}) {
    numerics::AmaxHistory h(d);
    std::mt19937 rng(unsigned(back) + 1);
    std::uniform_real_distribution<float> small(0.25f, 1.0f);
    const int64_t recorded = 1137;
    for (int64_t j = 0; j < recorded; ++j) {
      h.record(recorded - 1 - j == back ? 24.0f : small(rng));
      h.advance();
    }
    HostTensor state = HostTensor::zeros(DType::F32, {d.historyLength + 4});
    stateFromHistory(h, state);

    HostBuffers emu, oracle;
    PlanStep step = quantizeStep(spec, s, 500 + uint64_t(back), emu, oracle);
    step.state = "state";
    emu["state"] = oracle["state"] = state;
    Plan plan;
    ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
    std::vector<uint32_t> amax(1, 0);
    runEmulated(k, step, emu, amax);

    const std::string what = spec.kernelName() + ", the largest amax " +
                             std::to_string(back) + " back";
    ASSERT_EQ(historyFromState(state, d).predict(), std::optional<float>(24))
        << what; // the planted value is the prediction
    expectSameBits(emu["codes"], oracle["codes"], what + ", codes");
    expectSameBits(emu["scales"], oracle["scales"], what + ", scales");
    expectSameBits(emu["state"], oracle["state"], what + ", state");
    for (uint32_t a : amax) // (the amax and pass 1's count of CTAs)
      EXPECT_EQ(a, 0u) << what << ": amax scratch not reset";
  }
}

//===----------------------------------------------------------------------===//
// Quantize with a scale mirror
//===----------------------------------------------------------------------===//

/// The quantize kernels of the registry (of the row-sum ones, 1x128).
std::vector<size_t> quantizeKernels() {
  return kernelsWhere([](const ElementwiseSpec &s) {
    return s.kind == AuxKind::Quantize &&
           s.quant.mode == ScalingMode::Current &&
           (!s.rowSum || s.quant.granularity.cols == 128);
  });
}

/// The two mirror layouts the executor asks for
/// (runtime/plan/PlanScaleMirror.h).
enum class MirrorLayout {
  Transposed, ///< A's: [scaleCols][pad4(rows)], strides (1, pad4(rows))
  PaddedRows, ///< B's: [rows][pad4(scaleCols)], strides (pad4(scaleCols), 1)
};

class EmulatedMirror
    : public ::testing::TestWithParam<std::tuple<size_t, int, MirrorLayout>> {};

/// Ragged M (not multiples of 4: the transposed mirror's pitch pads them)
/// with the K of the GEMMs (multiples of 128; 384, 640 and 768 have 3, 5
/// and 6 K blocks, not a multiple of 4, as 11008's 86: the padded mirror
/// pads them), then a stack and a ragged K.
const Shape3 kMirrorShapes[] = {{1, 7, 256},   {1, 129, 384}, {1, 7, 384},
                                {1, 129, 256}, {1, 129, 640}, {1, 7, 768},
                                {3, 20, 200},  {1, 5, 31}};

/// The scales go to the plan buffer exactly as without a mirror (the
/// oracle's), and to the mirror, over the stacked scale rows, bit for bit;
/// the padding is never written.
TEST_P(EmulatedMirror, HoldsTheScales) {
  auto [index, shapeIndex, layout] = GetParam();
  const EmulatedKernel &k = kernels()[index];
  auto parsed = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const Shape3 s = kMirrorShapes[shapeIndex];
  if (spec.transposed && s.batch != 1)
    GTEST_SKIP() << "the mirror of a transposed quantize serves batch-1 "
                    "GEMMs only (runtime/plan/PlanScaleMirror.h)";
  const Shape shape = shapeOf(s);
  const Granularity &g = spec.quant.granularity;
  const Shape scaleShape = scaleShapeFor(shape, g);
  const size_t es = g.scale == ScaleFormat::UE8M0 ? 1 : 4;
  HostBuffers emu, oracle;
  const PlanStep step = quantizeStep(spec, s, 77 * index, emu, oracle);
  // The grid of the scales as written (transposed: [cols][scale rows]).
  const int64_t rows = spec.transposed ? g.scaleCols(s.cols)
                                       : s.batch * g.scaleRows(s.rows),
                cols =
                    spec.transposed ? g.scaleRows(s.rows) : g.scaleCols(s.cols);
  const bool transposed = layout == MirrorLayout::Transposed;
  // The mirror as [outer][pitch]: outer = the index that is not contiguous.
  const int64_t outer = transposed ? cols : rows;
  const int64_t inner = transposed ? rows : cols;
  const int64_t pitch = (inner + 3) / 4 * 4;
  const int64_t strideRows = transposed ? 1 : pitch;
  const int64_t strideCols = transposed ? pitch : 1;
  // 0xA5 bytes: a pattern no scale has, so that a stray write shows.
  std::vector<uint8_t> mirror(size_t(outer * pitch) * es, 0xA5);
  std::vector<uint32_t> amax(size_t(elementCount(scaleShape)), 0);

  Plan plan;
  ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
  runEmulated(k, step, emu, amax, mirror.data(), strideRows, strideCols);

  const std::string what = spec.kernelName() + " on " + formatShape(shape) +
                           (transposed ? ", transposed" : ", padded rows");
  expectSameBits(emu["codes"], oracle["codes"], what + ", codes");
  expectSameBits(emu["scales"], oracle["scales"], what + ", scales");
  const std::vector<uint8_t> &sc = emu["scales"].data;
  ASSERT_EQ(sc.size(), size_t(rows * cols) * es);
  int64_t mismatches = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < pitch; ++i) {
      const uint8_t *got = &mirror[size_t(o * pitch + i) * es];
      const int64_t r = transposed ? i : o, c = transposed ? o : i;
      if (i < inner) {
        const uint8_t *want = &sc[size_t(r * cols + c) * es];
        if (std::memcmp(got, want, es) != 0 && mismatches++ < 5)
          ADD_FAILURE() << what << ": mirror[" << o << "][" << i
                        << "] differs from scales[" << r << "][" << c << "]";
      } else {
        for (size_t b = 0; b < es; ++b)
          if (got[b] != 0xA5 && mismatches++ < 5)
            ADD_FAILURE() << what << ": padding mirror[" << o << "][" << i
                          << "] was written";
      }
    }
  EXPECT_EQ(mismatches, 0) << what;
}

INSTANTIATE_TEST_SUITE_P(
    QuantizeKernels, EmulatedMirror,
    ::testing::Combine(::testing::ValuesIn(quantizeKernels()),
                       ::testing::Range(0, int(std::size(kMirrorShapes))),
                       ::testing::Values(MirrorLayout::Transposed,
                                         MirrorLayout::PaddedRows)),
    [](const auto &info) {
      auto spec =
          elementwiseSpecFromJSON(kernels()[std::get<0>(info.param)].spec);
      const Shape3 s = kMirrorShapes[std::get<1>(info.param)];
      return spec->kernelName() + "_" + std::to_string(s.batch) + "x" +
             std::to_string(s.rows) + "x" + std::to_string(s.cols) +
             (std::get<2>(info.param) == MirrorLayout::Transposed ? "_t"
                                                                  : "_padded");
    });

} // namespace
