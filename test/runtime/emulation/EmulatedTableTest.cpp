//===- EmulatedTableTest.cpp - Looked-up values against the oracle -------===//
//
// The kernels whose program has a tabulated value (SwiGLU's silu, a GELU:
// codegen/ElementwiseTable.cpp, codegen/kernels/elementwise_table.cuh)
// fill a table per CTA and look the value up. Here their input 0 takes
// every bf16 bit pattern, NaNs, infinities, zeros and subnormals included,
// so that every entry of the table is read and every kind of miss is
// computed, and the outputs must equal the CPU oracle's bit for bit. (The
// emulator fills the tables at any size: CudaEmulator.h.)
//
//===----------------------------------------------------------------------===//

#include "test/runtime/emulation/EmulatedKernels.h"

#include "codegen/ElementwiseSource.h"

#include <gtest/gtest.h>

using namespace fp8;
using namespace fp8::emulated;

namespace {

class EmulatedTable : public ::testing::TestWithParam<size_t> {};

TEST_P(EmulatedTable, EveryBf16InputMatchesTheOracle) {
  const size_t index = GetParam();
  auto parsed = elementwiseSpecFromJSON(kernels()[index].spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const int table = tabulatedValue(spec);
  ASSERT_GE(table, 0);
  const int key = tabulatedInput(spec.program, table);
  // 65536 columns' worth of patterns over two rows of different order, so
  // that a vector's eight values mix hits and misses.
  const Shape shape{2, 256, 256};
  Plan plan;
  PlanStep step;
  step.name = "step";
  step.aux = spec;
  HostBuffers emu;
  for (size_t i = 0; i < programTensorInputs(spec); ++i) {
    const std::string name = "in" + std::to_string(i);
    HostTensor t = randomTensor(spec.program.inputs[i], shape, 77 + i);
    if (int(i) == key) {
      ASSERT_EQ(t.dtype, DType::BF16);
      for (int64_t j = 0; j < t.elements(); ++j) {
        // Matrix 0 in order, matrix 1 with the bits' bytes swapped.
        const uint32_t n = uint32_t(j & 0xFFFF);
        const uint32_t bits = j < 65536 ? n : ((n & 0xFF) << 8) | (n >> 8);
        t.data[size_t(2 * j)] = uint8_t(bits & 0xFF);
        t.data[size_t(2 * j + 1)] = uint8_t(bits >> 8);
      }
    }
    emu[name] = t;
    step.inputs.push_back(name);
  }
  if (spec.kind == AuxKind::Elementwise) {
    step.kind = StepKind::Elementwise;
    step.outputs = {"out"};
    emu["out"] = HostTensor::zeros(spec.out, shape);
  } else {
    step.kind = StepKind::Quantize;
    step.outputs = {"codes", "scales"};
    const Granularity &g = spec.quant.granularity;
    emu["codes"] = HostTensor::zeros(spec.quant.format, shape);
    emu["scales"] = HostTensor::zeros(
        g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32,
        scaleShapeFor(shape, g));
  }
  HostBuffers oracle = emu;
  ASSERT_TRUE(runStepOnCpu(plan, step, oracle).isOk());
  std::vector<uint32_t> amax(
      size_t(elementCount(scaleShapeFor(shape, spec.quant.granularity))), 0);
  runEmulated(kernels()[index], step, emu, amax);
  for (const std::string &n : step.outputs)
    expectSameBits(emu[n], oracle[n], spec.kernelName() + ", " + n);
}

std::vector<size_t> tabulatedKernels() {
  return kernelsWhere([](const ElementwiseSpec &s) {
    return (s.kind == AuxKind::Elementwise ||
            (s.kind == AuxKind::Quantize && !s.rowSum &&
             s.quant.mode == ScalingMode::Current)) &&
           tabulatedValue(s) >= 0;
  });
}

INSTANTIATE_TEST_SUITE_P(Tables, EmulatedTable,
                         ::testing::ValuesIn(tabulatedKernels()),
                         [](const ::testing::TestParamInfo<size_t> &i) {
                           return kernelName(i.param);
                         });

// The registry holds the kernels this file is about: SwiGLU's row and
// per-tensor quantizes and elementwise form, and a bf16 GELU.
TEST(EmulatedTable, TheRegistryHasTabulatedKernels) {
  EXPECT_GE(tabulatedKernels().size(), 4u);
}

} // namespace
