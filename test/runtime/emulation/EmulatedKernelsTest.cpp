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
// with a padded pitch (B's), which must hold the scales bit for bit. What this
// cannot show: the GPU's memory model, its speed, NVRTC's code generation
// (compiled, not run, by ElementwiseCompileTest).
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "numerics/GroupedGemm.h"
#include "numerics/Random.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanKernels.h"
#include "runtime/plan/PlanOracle.h"
#include "test/runtime/emulation/CudaEmulatorRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>

using namespace fp8;

namespace {

struct EmulatedKernel {
  const char *spec;
  std::vector<std::string> names;
  std::vector<void (*)(const fp8k::EwParams)> entries;
};

#include "registry.inc"

struct Shape3 {
  int64_t batch, rows, cols;
};

/// Random values of every kind the kernels must get right: normal values
/// with outliers, zeros, negative zeros, tiny values, and a zero block.
HostTensor randomTensor(DType t, const Shape &shape, uint64_t seed) {
  HostTensor h = HostTensor::zeros(t, shape);
  numerics::RandomSpec spec;
  spec.dist = numerics::Distribution::Outliers;
  spec.seed = seed;
  std::vector<float> v = numerics::randomTensor(h.elements(), spec);
  for (int64_t i = 0; i < h.elements(); ++i) {
    float x = v[size_t(i)];
    if (i % 13 == 0)
      x = 0.0f;
    if (i % 17 == 3)
      x = -0.0f;
    if (i % 11 == 5)
      x *= 1e-5f;
    if (i < 40)
      x = 0.0f;
    h.set(i, x);
  }
  return h;
}

Shape shapeOf(const Shape3 &s) {
  return s.batch == 1 ? Shape{s.rows, s.cols} : Shape{s.batch, s.rows, s.cols};
}

/// A shape without its last dimension (a row broadcast's, a reduce's sums).
Shape rowsOf(const Shape &s) { return Shape(s.begin(), s.end() - 1); }

/// Runs the step's kernels as the executor launches them
/// (runtime/plan/PlanKernels.h: the same entry points, grids and parameter), on
/// a 1-SM "GPU" so that the grid-stride loops wrap.
void runEmulated(const EmulatedKernel &k, const PlanStep &step,
                 HostBuffers &buffers, std::vector<uint32_t> &amax,
                 void *mirror = nullptr, int64_t mirrorStrideRows = 0,
                 int64_t mirrorStrideCols = 0) {
  StepShapes shapes;
  for (const auto &[name, t] : buffers)
    shapes[name] = t.shape;
  const fp8k::EwParams p = auxStepParams(
      step, shapes,
      [&](const std::string &name) -> void * {
        return buffers.at(name).data.data();
      },
      amax.data(), mirror, mirrorStrideRows, mirrorStrideCols);
  const std::vector<ElementwiseEntryLaunch> launches =
      auxStepLaunches(step, shapes, /*smCount=*/1);
  ASSERT_FALSE(launches.empty()); // (the row-sum quantize: one of two)
  for (const ElementwiseEntryLaunch &l : launches)
    ASSERT_EQ(l.kernel, k.names.at(l.entry));
  for (const ElementwiseEntryLaunch &l : launches)
    cudaemu::launch({l.launch.grid[0], l.launch.grid[1], l.launch.grid[2]},
                    {l.launch.block[0], l.launch.block[1], l.launch.block[2]},
                    [&] { k.entries[l.entry](p); });
}

void expectSameBits(const HostTensor &got, const HostTensor &want,
                    const std::string &what) {
  const TensorComparison c = compareBits(got, want);
  EXPECT_EQ(c.mismatches, 0)
      << what << ": first difference at element " << c.firstMismatch
      << ": emulated " << (c.firstMismatch >= 0 ? got.get(c.firstMismatch) : 0)
      << ", oracle " << (c.firstMismatch >= 0 ? want.get(c.firstMismatch) : 0);
}

class EmulatedKernels
    : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

// {2, 48, 80}: the transpose's 16-byte path. Long rows (normKernels()): 3000
// in a row-sum quantize's registers, a short last block; then past them.
const Shape3 kShapes[] = {{1, 70, 300}, {3, 20, 200}, {1, 5, 31},
                          {2, 1, 64},   {2, 48, 80},  {2, 2, 3000},
                          {1, 2, 4104}, {2, 2, 2100}, {1, 3, 8264}};
constexpr int kShortShapes = 5;

TEST_P(EmulatedKernels, MatchTheOracleBitForBit) {
  auto [index, shapeIndex] = GetParam();
  const EmulatedKernel &k = kKernels[index];
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
        // Broadcast inputs: a value per row ([batch, rows]; positive, as a
        // norm's sums are) or per column ([cols]).
        const EwBroadcast bc = spec.program.broadcastOf(i);
        const Shape inShape = bc == EwBroadcast::Row   ? rowsOf(shape)
                              : bc == EwBroadcast::Col ? Shape{s.cols}
                                                       : shape;
        HostTensor t = randomTensor(spec.program.inputs[i], inShape,
                                    1000 * index + 10 * round + i);
        if (bc == EwBroadcast::Row)
          for (int64_t j = 0; j < t.elements(); ++j)
            t.set(j, std::fabs(t.get(j)) * float(s.cols));
        // Growing magnitudes across the rounds of delayed scaling, and a
        // NaN in round 2 (a non-finite amax: the step takes no prediction).
        for (int64_t j = 0; j < t.elements(); ++j)
          t.set(j, t.get(j) * float(1 + round));
        if (delayed && round == 2 && i == 0)
          t.set(t.elements() / 2, NAN);
        emu[name] = t;
        inputs.push_back(name);
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
        emu["codes"] = HostTensor::zeros(spec.quant.format, shape);
        emu["scales"] = HostTensor::zeros(scaleType, scaleShape);
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

/// The registry's kernels whose spec satisfies `pred`.
template <class Pred> std::vector<size_t> kernelsWhere(Pred pred) {
  std::vector<size_t> out;
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    auto spec = elementwiseSpecFromJSON(kKernels[i].spec);
    if (spec.isOk() && pred(*spec))
      out.push_back(i);
  }
  return out;
}

/// The registry's kernels of the given kinds.
std::vector<size_t> kernelsOf(std::initializer_list<AuxKind> kinds) {
  return kernelsWhere([&](const ElementwiseSpec &s) {
    return std::find(kinds.begin(), kinds.end(), s.kind) != kinds.end();
  });
}

/// A test's name: the kernel's, then the shape.
std::string shapeTestName(size_t kernel, int shape) {
  auto spec = elementwiseSpecFromJSON(kKernels[kernel].spec);
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

INSTANTIATE_TEST_SUITE_P(
    LongRows, EmulatedKernels,
    ::testing::Combine(::testing::ValuesIn(normKernels()),
                       ::testing::Range(kShortShapes, int(sizeof(kShapes) /
                                                          sizeof(kShapes[0])))),
    [](const auto &info) {
      return shapeTestName(std::get<0>(info.param), std::get<1>(info.param));
    });

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
  const EmulatedKernel &k = kKernels[index];
  auto parsed = elementwiseSpecFromJSON(k.spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const Shape3 s = kMirrorShapes[shapeIndex];
  const Shape shape = shapeOf(s);
  const Granularity &g = spec.quant.granularity;
  const Shape scaleShape = scaleShapeFor(shape, g);
  const bool ue8m0 = g.scale == ScaleFormat::UE8M0;
  const DType scaleType = ue8m0 ? DType::UE8M0 : DType::F32;
  const size_t es = ue8m0 ? 1 : 4;

  PlanStep step;
  step.name = "step";
  step.kind = StepKind::Quantize;
  step.aux = spec;
  step.outputs = {"codes", "scales"};
  HostBuffers emu, oracle;
  for (size_t i = 0; i < programTensorInputs(spec); ++i) {
    const std::string name = "in" + std::to_string(i);
    emu[name] = oracle[name] =
        randomTensor(spec.program.inputs[i], shape, 77 * index + i);
    step.inputs.push_back(name);
  }
  for (HostBuffers *b : {&emu, &oracle}) {
    (*b)["codes"] = HostTensor::zeros(spec.quant.format, shape);
    (*b)["scales"] = HostTensor::zeros(scaleType, scaleShape);
  }
  const int64_t rows = s.batch * g.scaleRows(s.rows),
                cols = g.scaleCols(s.cols);
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
          elementwiseSpecFromJSON(kKernels[std::get<0>(info.param)].spec);
      const Shape3 s = kMirrorShapes[std::get<1>(info.param)];
      return spec->kernelName() + "_" + std::to_string(s.batch) + "x" +
             std::to_string(s.rows) + "x" + std::to_string(s.cols) +
             (std::get<2>(info.param) == MirrorLayout::Transposed ? "_t"
                                                                  : "_padded");
    });

//===----------------------------------------------------------------------===//
// MoE: permute and unpermute
//===----------------------------------------------------------------------===//

/// One routing: T tokens of H columns, each sent to topK distinct experts of
/// E, groups padded to `align` rows.
struct Routing {
  int64_t tokens, hidden, topK, experts, align;
};
const Routing kRoutings[] = {
    {13, 200, 2, 4, 4}, // partial column block, padding
    {1, 64, 1, 3, 1},   // one token: two empty experts
    {40, 256, 3, 9, 1}, // more experts than CTAs cover at once on 1 SM
    {6, 128, 2, 5, 8},  // padding larger than the groups
    {5, 30, 2, 3, 2},   // rows of 30: the scalar paths
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
  const EmulatedKernel &k = kKernels[index];
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
    std::memcpy(pos.data.data(), p->destination.data(), pos.data.size());
    emu["y"] = randomTensor(rowType, {rows, r.hidden}, index + 11);
    emu["positions"] = pos;
    emu["weights"] = randomTensor(DType::F32, {r.tokens, r.topK}, index + 13);
    emu["out"] = HostTensor::zeros(spec->out, {r.tokens, r.hidden});
    step.inputs = {"y", "positions", "weights"};
    step.outputs = {"out"};
  }
  HostBuffers oracle = emu;
  ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
  std::vector<uint32_t> amax;
  runEmulated(k, step, emu, amax);
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
          elementwiseSpecFromJSON(kKernels[std::get<0>(info.param)].spec);
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
  const EmulatedKernel &k = kKernels[index];
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
          elementwiseSpecFromJSON(kKernels[std::get<0>(info.param)].spec);
      return spec->kernelName() + "_shape" +
             std::to_string(std::get<1>(info.param));
    });

} // namespace
