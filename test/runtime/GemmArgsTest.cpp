//===- GemmArgsTest.cpp - fp8::gemm's checks of C before launch -----------===//
//
// Accumulate-into-C: where D is stored by TMA, C is loaded by TMA into the
// same staging boxes, so it needs D's 16-byte alignment and pitch; where D
// takes predicated stores, C is read per element and needs its element
// alignment only. Checked without a GPU (checkGemmArgs).
//
//===----------------------------------------------------------------------===//

#include "runtime/Gemm.h"
#include "runtime/HostOracle.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {

GemmRecipe accumulating() {
  GemmRecipe r;
  r.a.granularity = Granularity::block(1, 128);
  r.b.granularity = Granularity::block(128, 128);
  r.accumulate = true;
  return r;
}

/// Plausible (never dereferenced) device addresses, 256-byte aligned, plus
/// `offset` bytes.
void *fakePtr(uintptr_t i, uintptr_t offset = 0) {
  return reinterpret_cast<void *>(uintptr_t(0x7f0000000000) + i * (1 << 24) +
                                  offset);
}

GemmTensors tensors() {
  GemmTensors t;
  t.a = fakePtr(1);
  t.scaleA = fakePtr(2);
  t.b = fakePtr(3);
  t.scaleB = fakePtr(4);
  t.c = fakePtr(5);
  t.d = fakePtr(6);
  return t;
}

TEST(GemmArgs, CByTmaNeedsDsAlignment) {
  const GemmRecipe r = accumulating();
  EXPECT_TRUE(checkGemmArgs(r, 129, 264, 512, tensors()).isOk());
  GemmTensors t = tensors();
  t.c = fakePtr(5, 8); // bf16-aligned, not 16-byte
  Status s = checkGemmArgs(r, 129, 264, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected C to be 16-byte aligned"),
            std::string::npos)
      << s.message();
  t = tensors();
  t.ldc = 268; // 536 bytes: not a multiple of 16
  s = checkGemmArgs(r, 129, 264, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("ldc = 268"), std::string::npos) << s.message();
  t.ldc = 272;
  EXPECT_TRUE(checkGemmArgs(r, 129, 264, 512, t).isOk());
  // C may be D (in place).
  t = tensors();
  t.c = t.d;
  EXPECT_TRUE(checkGemmArgs(r, 129, 264, 512, t).isOk());
}

TEST(GemmArgs, CWithPredicatedStoresNeedsItsElementAlignment) {
  const GemmRecipe r = accumulating();
  // N = 260: 520-byte rows, D stored with predicated stores.
  GemmTensors t = tensors();
  t.c = fakePtr(5, 2);
  t.ldc = 261;
  EXPECT_TRUE(checkGemmArgs(r, 7, 260, 512, t).isOk());
  t.c = fakePtr(5, 1);
  Status s = checkGemmArgs(r, 7, 260, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected C to be aligned to its element size"),
            std::string::npos)
      << s.message();
}

} // namespace

TEST(GemmArgs, AGemmOfNoRowsNeedsNoRowOperands) {
  // M = 0 reads and writes nothing: A, D, C and A's scales may be null, as
  // an empty tensor's data pointer is; B and its scales are still needed.
  const GemmRecipe r = accumulating();
  GemmTensors t = tensors();
  t.a = t.c = t.scaleA = nullptr;
  t.d = nullptr;
  EXPECT_TRUE(checkGemmArgs(r, 0, 264, 512, t).isOk());
  // The CPU oracle takes the same GEMM and leaves everything untouched.
  EXPECT_TRUE(gemmOnHost(GemmRecipe(), 0, 264, 512, t).isOk());
  // With rows, each of them is required.
  for (int missing = 0; missing < 4; ++missing) {
    GemmTensors u = tensors();
    if (missing == 0)
      u.a = nullptr;
    else if (missing == 1)
      u.d = nullptr;
    else if (missing == 2)
      u.c = nullptr;
    else
      u.scaleA = nullptr;
    const Status s = checkGemmArgs(r, 1, 264, 512, u);
    ASSERT_FALSE(s.isOk()) << missing;
    EXPECT_NE(s.message().find("expected"), std::string::npos) << s.message();
  }
  t.b = nullptr;
  const Status s = checkGemmArgs(r, 0, 264, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected pointers to A, B and D"),
            std::string::npos)
      << s.message();
}

// D's amax: the recipe asks for it and the tensors give its f32, or
// neither; refused before any GPU work.
TEST(GemmArgs, AnAmaxOutputNeedsItsPointerAndOnlyThen) {
  GemmRecipe r = accumulating();
  r.amaxOut = true;
  GemmTensors t = tensors();
  Status s = checkGemmArgs(r, 129, 264, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected a pointer to D's amax (amaxD)"),
            std::string::npos)
      << s.message();
  t.amaxD = static_cast<float *>(fakePtr(7));
  EXPECT_TRUE(checkGemmArgs(r, 129, 264, 512, t).isOk());
  t.amaxD = static_cast<float *>(fakePtr(7, 2));
  s = checkGemmArgs(r, 129, 264, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected D's amax to be 4-byte aligned"),
            std::string::npos)
      << s.message();
  r.amaxOut = false;
  t.amaxD = static_cast<float *>(fakePtr(7));
  s = checkGemmArgs(r, 129, 264, 512, t);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("expected no amaxD pointer"), std::string::npos)
      << s.message();
}
