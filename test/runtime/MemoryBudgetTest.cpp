//===- MemoryBudgetTest.cpp - Will this fit? ------------------------------===//
//
// The comparison of what a run needs with what is available, host and
// device alike (the device's free memory comes from cuMemGetInfo, which
// needs a GPU; the comparison does not), and the host's available memory.
//
//===----------------------------------------------------------------------===//

#include "runtime/MemoryBudget.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace fp8;

TEST(MemoryBudget, FormatsBytesExactly) {
  EXPECT_EQ(formatBytes(0), "0 bytes");
  EXPECT_EQ(formatBytes(1023), "1023 bytes");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB (1536 bytes)");
  EXPECT_EQ(formatBytes(int64_t(3) << 30), "3.0 GiB (3221225472 bytes)");
  EXPECT_EQ(formatBytes(int64_t(1) << 47), "128.0 TiB (140737488355328 bytes)");
}

TEST(MemoryBudget, RefusesWhatDoesNotFitWithTheNumbers) {
  EXPECT_TRUE(checkMemoryFits("x", 100, "host", 100).isOk());
  EXPECT_TRUE(checkMemoryFits("x", 0, "host", 0).isOk());
  EXPECT_EQ(checkMemoryFits("holding the plan's buffers", int64_t(80) << 30,
                            "device 0 (NVIDIA H100 80GB HBM3)",
                            int64_t(79) << 30)
                .message(),
            "holding the plan's buffers needs 80.0 GiB (85899345920 bytes) of "
            "device 0 (NVIDIA H100 80GB HBM3) memory, 79.0 GiB (84825604096 "
            "bytes) available");
  EXPECT_EQ(checkMemoryFits("running it", INT64_MAX, "host", 2048).message(),
            "running it needs more than 2^63 bytes of host memory, 2.0 KiB "
            "(2048 bytes) available");
  EXPECT_EQ(checkMemoryFits("running it", 1, "host", -5).message(),
            "running it needs 1 byte of host memory, 0 bytes available");
}

TEST(MemoryBudget, KnowsTheHostsAvailableMemory) {
  // Linux has /proc/meminfo; what it says is positive and below 2^62.
  std::optional<int64_t> avail = availableHostMemory();
  ASSERT_TRUE(avail.has_value());
  EXPECT_GT(*avail, 0);
  EXPECT_LT(*avail, int64_t(1) << 62);
  EXPECT_TRUE(checkHostMemory("a byte", 1).isOk());
  Status s = checkHostMemory("an exabyte", int64_t(1) << 60);
  EXPECT_NE(s.message().find("an exabyte needs 1.0 EiB (1152921504606846976 "
                             "bytes) of host memory, "),
            std::string::npos)
      << s.message();
}
