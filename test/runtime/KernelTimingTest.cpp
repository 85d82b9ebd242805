//===- KernelTimingTest.cpp - The timing loop against a scripted driver ---===//
//
// runtime/KernelTiming.h on a driver table whose event, memset and timing
// calls are this test's: the order of flushes, events and launches, the
// warm-up launches, the sorted times, and that the first error of a launch
// or of the driver ends the timing with that error (events destroyed); and
// timeQueued's form: every launch queued, one drain, times in launch order
// between consecutive events.
//
//===----------------------------------------------------------------------===//

#include "runtime/KernelTiming.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace fp8;

namespace {

/// What the scripted driver saw and answers.
struct Script {
  std::string calls;        ///< F flush, R record, S sync, L launch
  std::vector<float> times; ///< cuEventElapsedTime's answers, in order
  size_t next = 0;
  int created = 0, destroyed = 0;
  size_t flushBytes = 0;
  CUresult failElapsedAt = CUDA_SUCCESS; ///< answered at the second timing
  /// The events of each cuEventElapsedTime call (their creation numbers).
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
};
Script gScript;

CudaDriver scriptedDriver() {
  CudaDriver d;
  d.cuEventCreate = [](CUevent *e, unsigned) {
    *e = reinterpret_cast<CUevent>(uintptr_t(++gScript.created));
    return CUDA_SUCCESS;
  };
  d.cuEventDestroy = [](CUevent) {
    ++gScript.destroyed;
    return CUDA_SUCCESS;
  };
  d.cuEventRecord = [](CUevent, CUstream) {
    gScript.calls += 'R';
    return CUDA_SUCCESS;
  };
  d.cuEventSynchronize = [](CUevent) {
    gScript.calls += 'S';
    return CUDA_SUCCESS;
  };
  d.cuMemsetD8Async = [](CUdeviceptr, unsigned char, size_t n, CUstream) {
    gScript.calls += 'F';
    gScript.flushBytes = n;
    return CUDA_SUCCESS;
  };
  d.cuEventElapsedTime = [](float *ms, CUevent a, CUevent b) {
    gScript.spans.emplace_back(reinterpret_cast<uintptr_t>(a),
                               reinterpret_cast<uintptr_t>(b));
    if (gScript.failElapsedAt != CUDA_SUCCESS && gScript.next == 1)
      return gScript.failElapsedAt;
    *ms = gScript.times[gScript.next++];
    return CUDA_SUCCESS;
  };
  return d;
}

Status launchOk() {
  gScript.calls += 'L';
  return Status::ok();
}

} // namespace

TEST(KernelTiming, FlushesRecordsAndSortsEachRun) {
  gScript = {};
  gScript.times = {0.30f, 0.10f, 0.20f};
  const CudaDriver d = scriptedDriver();
  KernelTiming t;
  t.runs = 3;
  t.warmup = 2;
  t.flush = 0x1000;
  t.flushBytes = 256;
  Expected<std::vector<float>> ms = timeKernel(d, nullptr, t, launchOk);
  ASSERT_TRUE(ms.isOk()) << ms.message();
  EXPECT_EQ(*ms, (std::vector<float>{0.10f, 0.20f, 0.30f}));
  // Two warm-up launches, then per run: flush, record, launch, record, wait.
  EXPECT_EQ(gScript.calls, "LLFRLRSFRLRSFRLRS");
  EXPECT_EQ(gScript.flushBytes, 256u);
  EXPECT_EQ(gScript.created, 2);
  EXPECT_EQ(gScript.destroyed, 2);
  EXPECT_DOUBLE_EQ(percentileOf(*ms, 0.5), 0.20f);
}

TEST(KernelTiming, NoFlushWithoutABuffer) {
  gScript = {};
  gScript.times = {1.0f, 2.0f};
  const CudaDriver d = scriptedDriver();
  KernelTiming t;
  t.runs = 2;
  Expected<std::vector<float>> ms = timeKernel(d, nullptr, t, launchOk);
  ASSERT_TRUE(ms.isOk()) << ms.message();
  EXPECT_EQ(gScript.calls, "RLRSRLRS");
}

TEST(KernelTiming, ALaunchErrorEndsTheTiming) {
  gScript = {};
  gScript.times = {1.0f, 2.0f, 3.0f};
  const CudaDriver d = scriptedDriver();
  KernelTiming t;
  t.runs = 3;
  int launches = 0;
  Expected<std::vector<float>> ms = timeKernel(d, nullptr, t, [&] {
    gScript.calls += 'L';
    return ++launches == 2 ? errorf("the kernel refused") : Status::ok();
  });
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "the kernel refused");
  EXPECT_EQ(gScript.calls, "RLRSRL");
  EXPECT_EQ(gScript.destroyed, 2);
}

TEST(KernelTiming, AWarmUpErrorIsNamed) {
  gScript = {};
  const CudaDriver d = scriptedDriver();
  KernelTiming t;
  t.warmup = 1;
  Expected<std::vector<float>> ms =
      timeKernel(d, nullptr, t, [] { return errorf("out of memory"); });
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "a warm-up launch: out of memory");
  EXPECT_EQ(gScript.created, 0);
}

TEST(KernelTiming, ADriverErrorEndsTheTiming) {
  gScript = {};
  gScript.times = {1.0f, 2.0f, 3.0f};
  gScript.failElapsedAt = CUDA_ERROR_ILLEGAL_ADDRESS;
  const CudaDriver d = scriptedDriver();
  KernelTiming t;
  t.runs = 3;
  Expected<std::vector<float>> ms = timeKernel(d, nullptr, t, launchOk);
  ASSERT_FALSE(ms.isOk());
  EXPECT_NE(ms.message().find("cuEventElapsedTime"), std::string::npos)
      << ms.message();
  EXPECT_EQ(gScript.destroyed, 2);
}

TEST(KernelTiming, RefusesNoRuns) {
  gScript = {};
  const CudaDriver d = scriptedDriver();
  KernelTiming t;
  t.runs = 0;
  Expected<std::vector<float>> ms = timeKernel(d, nullptr, t, launchOk);
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "expected at least one timed run, found 0");
}

TEST(KernelTiming, PercentilesOfSortedTimes) {
  const std::vector<float> v{1, 2, 3, 4};
  EXPECT_EQ(percentileOf(v, 0.5), 3);
  EXPECT_EQ(percentileOf(v, 0.1), 1);
  EXPECT_EQ(percentileOf(v, 0.9), 4);
  EXPECT_EQ(percentileOf({}, 0.5), 0);
}

namespace {
Status drainOk() {
  gScript.calls += 'D';
  return Status::ok();
}
} // namespace

TEST(KernelTimingQueued, QueuesEveryLaunchAndDrainsOnce) {
  gScript = {};
  gScript.times = {0.30f, 0.10f, 0.20f};
  const CudaDriver d = scriptedDriver();
  Expected<std::vector<double>> ms =
      timeQueued(d, nullptr, 1, 3, launchOk, drainOk);
  ASSERT_TRUE(ms.isOk()) << ms.message();
  // In launch order, not sorted.
  ASSERT_EQ(ms->size(), 3u);
  EXPECT_FLOAT_EQ(float((*ms)[0]), 0.30f);
  EXPECT_FLOAT_EQ(float((*ms)[1]), 0.10f);
  EXPECT_FLOAT_EQ(float((*ms)[2]), 0.20f);
  // The warm-up, then one event before the first launch and one after
  // each, nothing waited on until the drain.
  EXPECT_EQ(gScript.calls, "LRLRLRLRD");
  // Launch i between events i and i + 1 (created 1, 2, 3, 4).
  using Span = std::pair<uintptr_t, uintptr_t>;
  EXPECT_EQ(gScript.spans, (std::vector<Span>{{1, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(gScript.created, 4);
  EXPECT_EQ(gScript.destroyed, 4);
}

TEST(KernelTimingQueued, ALaunchErrorEndsTheTimingBeforeTheDrain) {
  gScript = {};
  gScript.times = {1.0f, 2.0f, 3.0f};
  const CudaDriver d = scriptedDriver();
  int launches = 0;
  Expected<std::vector<double>> ms = timeQueued(
      d, nullptr, 0, 3,
      [&] {
        gScript.calls += 'L';
        return ++launches == 2 ? errorf("the kernel refused") : Status::ok();
      },
      drainOk);
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "the kernel refused");
  EXPECT_EQ(gScript.calls, "RLRL");
  EXPECT_EQ(gScript.destroyed, 4);
}

TEST(KernelTimingQueued, ADrainErrorIsReturned) {
  gScript = {};
  gScript.times = {1.0f, 2.0f};
  const CudaDriver d = scriptedDriver();
  Expected<std::vector<double>> ms = timeQueued(
      d, nullptr, 0, 2, launchOk, [] { return errorf("the GPU hung"); });
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "the GPU hung");
  EXPECT_TRUE(gScript.spans.empty()); // no time read from a failed run
  EXPECT_EQ(gScript.destroyed, 3);
}

TEST(KernelTimingQueued, AWarmUpErrorIsNamedAndNoRunsRefused) {
  gScript = {};
  const CudaDriver d = scriptedDriver();
  Expected<std::vector<double>> ms = timeQueued(
      d, nullptr, 1, 1, [] { return errorf("out of memory"); }, drainOk);
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "a warm-up launch: out of memory");
  EXPECT_EQ(gScript.created, 0);
  ms = timeQueued(d, nullptr, 0, 0, launchOk, drainOk);
  ASSERT_FALSE(ms.isOk());
  EXPECT_EQ(ms.message(), "expected at least one timed run, found 0");
}
