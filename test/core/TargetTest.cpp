//===- TargetTest.cpp - The rooflines measurements are held to ------------===//

#include "core/Target.h"

#include <gtest/gtest.h>

#include <string>

using namespace fp8;

TEST(Target, AKnownGpuIsHeldToItsOwnBandwidth) {
  const DramRoofline h200 = dramRoofline("NVIDIA H200", Arch::SM90a);
  EXPECT_EQ(std::string(h200.gpu), "H200 SXM");
  EXPECT_DOUBLE_EQ(h200.dramBytesPerSecond, 4.8e12);
  const DramRoofline h100 = dramRoofline("NVIDIA H100 80GB HBM3", Arch::SM90a);
  EXPECT_EQ(std::string(h100.gpu), "H100 SXM");
  EXPECT_DOUBLE_EQ(h100.dramBytesPerSecond, 3.35e12);
}

TEST(Target, AnUnknownGpuIsHeldToItsArchitecturesDefault) {
  // A name is matched whole: a prefix of a known one, or a longer name
  // beginning with one, is another GPU.
  for (const char *name : {"NVIDIA H20", "NVIDIA H200 NVL", "", "H200"}) {
    const DramRoofline r = dramRoofline(name, Arch::SM90a);
    EXPECT_EQ(std::string(r.gpu), targetInfo(Arch::SM90a).gpu) << name;
    EXPECT_DOUBLE_EQ(r.dramBytesPerSecond,
                     targetInfo(Arch::SM90a).dramBytesPerSecond)
        << name;
  }
  EXPECT_DOUBLE_EQ(dramRoofline("NVIDIA H200", Arch::SM100a).dramBytesPerSecond,
                   4.8e12);
  EXPECT_EQ(std::string(dramRoofline("NVIDIA B200", Arch::SM100a).gpu),
            targetInfo(Arch::SM100a).gpu);
}
