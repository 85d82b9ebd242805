//===- AuxParamsAlignedTest.cpp - The alignment an aux launch reads -------===//
//
// The emulated registry's row-sum quantize: which tensors' alignment picks
// its entry (auxParamsAligned, auxStepLaunches).
//
//===----------------------------------------------------------------------===//

#include "test/runtime/emulation/EmulatedKernels.h"

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace fp8;
using namespace fp8::emulated;

/// The alignment a launch reads: the tensors the program reads in vectors
/// (16 bytes) and the output (8), not a per-row input; a row-sum quantize
/// on unaligned tensors launches the entry that keeps nothing.
TEST(AuxParamsAligned, ReadsTheTensorsTheVectorPathsRead) {
  const std::vector<size_t> rowSum = kernelsWhere(
      [](const ElementwiseSpec &s) { return quantizeUsesRowSumPath(s); });
  ASSERT_FALSE(rowSum.empty());
  auto parsed = elementwiseSpecFromJSON(kernels()[rowSum[0]].spec);
  ASSERT_TRUE(parsed.isOk()) << parsed.message();
  const ElementwiseSpec spec = *parsed;
  const std::vector<bool> vectors = vectorInputs(spec);
  ASSERT_GE(std::count(vectors.begin(), vectors.end(), true), 1);
  auto at = [](uintptr_t a) { return reinterpret_cast<void *>(a); };
  fp8k::EwParams p{};
  for (int i = 0; i < fp8k::kMaxEwInputs; ++i)
    p.in[i] = at(0x10000 + 0x1000 * uintptr_t(i));
  p.out = at(0x20008);
  EXPECT_TRUE(auxParamsAligned(spec, p));
  for (size_t i = 0; i < size_t(fp8k::kMaxEwInputs); ++i) {
    fp8k::EwParams q = p;
    q.in[i] = at(0x10002 + 0x1000 * uintptr_t(i));
    const bool read = i < vectors.size() && vectors[i];
    EXPECT_EQ(auxParamsAligned(spec, q), !read) << "input " << i;
  }
  fp8k::EwParams q = p;
  q.out = at(0x20004);
  EXPECT_FALSE(auxParamsAligned(spec, q));

  PlanStep step;
  step.kind = StepKind::Quantize;
  step.aux = spec;
  step.inputs = {"in0"};
  const StepShapes shapes = {{"in0", Shape{2, 4096}}};
  const auto aligned = auxStepLaunches(step, shapes, 132, p);
  ASSERT_EQ(aligned.size(), 1u);
  EXPECT_EQ(aligned[0].entry, 0u);
  const auto unaligned = auxStepLaunches(step, shapes, 132, q);
  ASSERT_EQ(unaligned.size(), 1u);
  EXPECT_EQ(unaligned[0].entry, 2u);
}
