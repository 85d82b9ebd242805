//===- TunableTest.cpp - Which GEMMs fp8::tuneGemm measures ---------------===//
//
// checkTunable without a GPU: dense sm_90a GEMMs with K-major operands and
// no epilogue, accumulating into C or not (the plans' residual GEMMs); the
// rest refused with a message naming the kernel.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tuner.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

KernelSpec deepseek() {
  KernelSpec s;
  s.arch = Arch::SM90a;
  s.n = 4096;
  s.k = 4096;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  return s;
}

void expectRefused(const KernelSpec &s) {
  const Status st = checkTunable(s);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("fp8-tune times dense sm_90a GEMMs"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find(s.kernelName()), std::string::npos)
      << st.message();
}

TEST(Tunable, DenseSm90GemmsWithOrWithoutC) {
  KernelSpec s = deepseek();
  EXPECT_TRUE(checkTunable(s).isOk());
  s.accumulate = true;
  EXPECT_TRUE(checkTunable(s).isOk());
  s.out = DType::F32;
  EXPECT_TRUE(checkTunable(s).isOk());
}

TEST(Tunable, OtherKindsAndTargetsAreRefused) {
  KernelSpec grouped = deepseek();
  grouped.kind = GemmKind::GroupedContiguous;
  grouped.groups = 8;
  expectRefused(grouped);
  KernelSpec blackwell = deepseek();
  blackwell.arch = Arch::SM100a;
  expectRefused(blackwell);
  KernelSpec mnMajor = deepseek();
  mnMajor.b.layout = Layout::MNMajor;
  expectRefused(mnMajor);
}

} // namespace
