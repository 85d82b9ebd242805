//===- TuneOnFirstUseGpuTest.cpp - GEMMs tuned at their first launch ------===//
//
// Runs on the GPU machine (ctest label "gpu"): with tuning on first use
// (runtime/Tuner.h, tuneOnFirstUse), a GEMM the database lacks is tuned at
// its first launch and its entry merged into the file; another M of the
// same bucket takes that entry, a new bucket is tuned again, two threads
// launching one new problem tune it once, and after stopTuningOnFirstUse a
// new problem takes the heuristic's tile. Every launch is checked against
// the CPU oracle.
//
//===----------------------------------------------------------------------===//

#include "codegen/TuningDb.h"
#include "runtime/CudaDriver.h"
#include "runtime/Gemm.h"
#include "runtime/Tuner.h"
#include "test/runtime/GpuCheck.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>

using namespace fp8;

namespace {

const Granularity kTok = Granularity::block(1, 128);
const Granularity kBlk = Granularity::block(128, 128);

/// Runs M x n x 1024 with the runtime's tile choice; returns where the
/// tile came from ("" after a failure, which the test reports).
std::string runCase(int64_t m, int64_t n) {
  const GpuCase c{caseRecipe(kTok, kBlk, 128), m, n, 1024};
  auto r = runGpuCase(c);
  EXPECT_TRUE(r.isOk()) << describe(c) << ": " << r.message();
  if (!r)
    return "";
  EXPECT_TRUE(r->passed) << describe(c) << ": " << r->summary;
  std::printf("[case] %s %s: %s (tile: %s)\n", r->passed ? "PASS" : "FAIL",
              describe(c).c_str(), r->summary.c_str(), r->tileSource.c_str());
  return r->tileSource;
}

/// The entries of the database file (-1 when it cannot be read).
int entriesIn(const std::string &path) {
  Expected<TuningDb> db = TuningDb::load(path);
  EXPECT_TRUE(db.isOk()) << db.message();
  return db ? int(db->entries().size()) : -1;
}

} // namespace

TEST(TuneOnFirstUseGpu, TunesEachBucketOnceAndMergesIntoTheFile) {
  auto dev = CudaDevice::get();
  ASSERT_TRUE(dev.isOk()) << dev.message();
  const std::string db =
      (std::filesystem::temp_directory_path() /
       ("fp8-first-use-" + std::to_string(::getpid()) + ".json"))
          .string();
  std::filesystem::remove(db);
  TuneOptions o;
  o.iters = 5; // a test of the mechanism, not of the measurement
  o.grid = Sm90TileGrid{};
  ASSERT_TRUE(tuneOnFirstUse(db, o).isOk());

  // M = 200: bucket 256, tuned now, merged into the (new) file.
  EXPECT_EQ(runCase(200, 512), "tuned on first use");
  ASSERT_TRUE(std::filesystem::exists(db));
  EXPECT_EQ(entriesIn(db), 1);
  {
    Expected<TuningDb> d = TuningDb::load(db);
    ASSERT_TRUE(d.isOk()) << d.message();
    const TuningEntry &e = d->entries().front();
    EXPECT_EQ(e.spec.m, 200);
    EXPECT_EQ(e.spec.n, 512);
    EXPECT_EQ(e.spec.k, 1024);
    ASSERT_TRUE(e.device.has_value());
    EXPECT_TRUE(e.device->sameGpu(tuningDevice(**dev)));
    EXPECT_EQ(e.generator, tuningGeneratorVersion());
    EXPECT_GT(e.tflops, 0);
  }
  // M = 129: the same bucket, the entry just measured.
  EXPECT_EQ(runCase(129, 512), "tuning database");
  EXPECT_EQ(entriesIn(db), 1);
  // M = 7: bucket 8, tuned.
  EXPECT_EQ(runCase(7, 512), "tuned on first use");
  EXPECT_EQ(entriesIn(db), 2);

  // Two threads launch one new problem: one tunes it, the other waits and
  // takes its tile.
  std::string sources[2];
  std::thread t0([&] { sources[0] = runCase(1000, 512); });
  std::thread t1([&] { sources[1] = runCase(1000, 512); });
  t0.join();
  t1.join();
  EXPECT_EQ(sources[0], "tuned on first use");
  EXPECT_EQ(sources[1], "tuned on first use");
  EXPECT_EQ(entriesIn(db), 3);

  // Off: a new problem takes the heuristic's tile; tuned ones keep theirs.
  stopTuningOnFirstUse();
  EXPECT_EQ(runCase(200, 384), "heuristic");
  EXPECT_EQ(runCase(150, 512), "tuning database");
  EXPECT_EQ(entriesIn(db), 3);

  // The file, read as the database.
  ASSERT_TRUE(setTuningDatabase(db).isOk());
  EXPECT_EQ(runCase(7, 512), "tuning database");
  ASSERT_TRUE(setTuningDatabase("").isOk());
  std::filesystem::remove(db);
  std::filesystem::remove(db + ".lock");
}
