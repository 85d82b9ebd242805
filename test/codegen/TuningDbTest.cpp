//===- TuningDbTest.cpp - The tuning database: format, lookup, errors -----===//

#include "codegen/TuningDb.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace fp8;

namespace {
KernelSpec deepseek(int64_t m, int64_t n, int64_t k, int blockN) {
  KernelSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  s.tile.blockN = blockN;
  return s;
}
} // namespace

TEST(TuningDb, RoundTripsAndFindsTheNearestShape) {
  TuningDb db;
  db.add({deepseek(128, 4096, 7168, 64), 300, "small"});
  db.add({deepseek(4096, 4096, 7168, 192), 700, ""});
  db.add({deepseek(4096, 2048, 7168, 160), 650, ""});
  auto back = TuningDb::parse(db.toJSON(), "test");
  ASSERT_TRUE(back.isOk()) << back.message();
  ASSERT_EQ(back->entries().size(), 3u);
  EXPECT_EQ(back->entries()[0].note, "small");

  auto exact = back->lookup(deepseek(4096, 4096, 7168, 128), 4096);
  ASSERT_TRUE(exact);
  EXPECT_TRUE(exact->exact);
  EXPECT_EQ(exact->tile.blockN, 192);
  // Same N and K beat a closer M with another N.
  auto nearM = back->lookup(deepseek(256, 4096, 7168, 128), 256);
  ASSERT_TRUE(nearM);
  EXPECT_FALSE(nearM->exact);
  EXPECT_EQ(nearM->m, 128);
  // No entry with this N and K: the nearest shape of the recipe.
  auto other = back->lookup(deepseek(4096, 2304, 7168, 128), 4096);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->n, 2048);
  // Another recipe: nothing.
  KernelSpec perTensor = deepseek(4096, 4096, 7168, 128);
  perTensor.a.granularity = Granularity::perTensor();
  perTensor.b.granularity = Granularity::perTensor();
  EXPECT_FALSE(back->lookup(perTensor, 4096));
}

TEST(TuningDb, BadFilesSayWhy) {
  EXPECT_EQ(TuningDb::parse("{", "'x.json'").message(),
            "tuning database 'x.json' is not valid JSON");
  EXPECT_EQ(
      TuningDb::parse("{\"format\": 3, \"entries\": []}", "'x.json'").message(),
      "tuning database 'x.json' has format 3; this build reads formats 1 "
      "and 2");
  EXPECT_EQ(TuningDb::parse("{\"format\": 1}", "'x.json'").message(),
            "expected an 'entries' array in tuning database 'x.json'");
  EXPECT_EQ(TuningDb::parse("{\"format\": 1, \"entries\": [{\"spec\": {}}]}",
                            "'x.json'")
                .message(),
            "'x.json', entry 0: expected key 'arch' in kernel spec");
  EXPECT_EQ(TuningDb::load("/nonexistent/db.json").message(),
            "cannot read tuning database '/nonexistent/db.json': No such "
            "file or directory");
  EXPECT_EQ(TuningDb::load("/dev/zero").message(),
            "expected tuning database '/dev/zero' to be a regular file, found "
            "a character device");
}

TEST(TuningDb, EntriesAreCheckedBeforeAnyTileArithmetic) {
  TuningDb db;
  TuningEntry e;
  e.spec.m = 256;
  e.spec.n = 512;
  e.spec.k = 256;
  db.add(e);
  std::string text = db.toJSON(-1);
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return TuningDb::parse(t, "'db.json'").message();
  };
  // A block of 0 divided by zero in --fp8-select-config's legality check.
  EXPECT_EQ(edited("\"block_n\":128", "\"block_n\":0"),
            "'db.json', entry 0: expected 'block_n' in tile to be an integer "
            "in [1, 256], found 0");
  EXPECT_EQ(edited("\"stages\":4", "\"stages\":4294967300"),
            "'db.json', entry 0: expected 'stages' in tile to be an integer "
            "in [2, 32], found 4294967300");
  EXPECT_EQ(edited("\"format\":2", "\"format\":1.0"),
            "expected 'format' in tuning database 'db.json' to be a 64-bit "
            "integer, found 1.0");
  // Optional fields of the wrong type are errors, not ignored.
  EXPECT_EQ(edited("{\"m_bucket\"", "{\"tflops\":\"fast\",\"m_bucket\""),
            "expected 'tflops' in 'db.json', entry 0 to be a finite number, "
            "found \"fast\"");
  EXPECT_EQ(edited("{\"m_bucket\"", "{\"note\":7,\"m_bucket\""),
            "expected 'note' in 'db.json', entry 0 to be a string, found 7");
}

namespace {
TuningDevice gpu(const std::string &name) {
  TuningDevice d;
  d.name = name;
  d.smCount = 132;
  d.clockMHz = 1980;
  d.driverVersion = 13000;
  d.cudaVersion = 13000;
  return d;
}

TuningEntry tuned(int64_t m, int64_t n, int64_t k, int blockN,
                  const std::string &device) {
  TuningEntry e{deepseek(m, n, k, blockN), 500, "fp8-tune"};
  e.device = gpu(device);
  e.generator = tuningGeneratorVersion();
  return e;
}

/// A fresh directory under /tmp, removed with its files at the end of the
/// test; path() is empty when it could not be made.
class TempDir {
public:
  TempDir() {
    char tmpl[] = "/tmp/fp8-tuningdb-XXXXXX";
    if (const char *d = ::mkdtemp(tmpl))
      path_ = d;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// The names of the files in `dir`.
std::set<std::string> filesIn(const std::string &dir) {
  std::set<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

std::string readAll(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
} // namespace

TEST(TuningDb, Format2KeepsTheDeviceAndTheGenerator) {
  TuningDb db;
  db.add(tuned(4096, 4096, 7168, 192, "NVIDIA H200"));
  const std::string text = db.toJSON();
  EXPECT_NE(text.find("\"m_bucket\": 4096"), std::string::npos) << text;
  auto back = TuningDb::parse(text, "test");
  ASSERT_TRUE(back.isOk()) << back.message();
  ASSERT_EQ(back->entries().size(), 1u);
  const TuningEntry &e = back->entries()[0];
  ASSERT_TRUE(e.device);
  EXPECT_EQ(e.device->name, "NVIDIA H200");
  EXPECT_EQ(e.device->smCount, 132);
  EXPECT_EQ(e.device->clockMHz, 1980);
  EXPECT_EQ(e.generator, tuningGeneratorVersion());
  EXPECT_EQ(e.device->describe(),
            "NVIDIA H200, 132 SMs, 1980 MHz, driver 13000, CUDA 13000");
  EXPECT_EQ(tuningGeneratorVersion().size(), 16u);
  // A bucket that does not fit M is refused.
  std::string bad = text;
  const std::string key = "\"m_bucket\": 4096";
  bad.replace(bad.find(key), key.size(), "\"m_bucket\": 2048");
  EXPECT_EQ(TuningDb::parse(bad, "'db.json'").message(),
            "'db.json', entry 0: expected m_bucket 4096 for M = 4096, found "
            "2048");
}

TEST(TuningDb, Format1StillLoads) {
  TuningDb db;
  db.add({deepseek(128, 4096, 7168, 64), 300, "hand-written"});
  std::string text = db.toJSON(-1);
  text.replace(text.find("\"format\":2"), 10, "\"format\":1");
  auto back = TuningDb::parse(text, "test");
  ASSERT_TRUE(back.isOk()) << back.message();
  ASSERT_EQ(back->entries().size(), 1u);
  EXPECT_FALSE(back->entries()[0].device);
  // A hand-written entry matches any GPU.
  const TuningDevice h100 = gpu("NVIDIA H100 80GB HBM3");
  auto m = back->lookup(deepseek(128, 4096, 7168, 128), 128, &h100);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->tuned);
  EXPECT_EQ(m->tile.blockN, 64);
}

TEST(TuningDb, EntriesOfAnotherGeneratorAreDroppedAndCounted) {
  TuningDb db;
  db.add(tuned(4096, 4096, 7168, 192, "NVIDIA H200"));
  TuningEntry old = tuned(128, 4096, 7168, 64, "NVIDIA H200");
  old.generator = "0000000000000000";
  db.add(old);
  auto back = TuningDb::parse(db.toJSON(), "'db.json'");
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(back->entries().size(), 1u);
  EXPECT_EQ(back->staleEntries(), 1u);
  EXPECT_EQ(back->staleMessage("'db.json'"),
            "tuning database 'db.json': 1 entry of another generator version "
            "ignored (they were measured with kernels this build does not "
            "make): run fp8-tune again");
  TuningDb fresh;
  EXPECT_EQ(fresh.staleMessage("'db.json'"), "");

  TuningDb three;
  for (int m : {128, 256, 512}) {
    TuningEntry e = tuned(m, 4096, 7168, 64, "NVIDIA H200");
    e.generator = "0000000000000000";
    three.add(e);
  }
  auto none = TuningDb::parse(three.toJSON(), "'db.json'");
  ASSERT_TRUE(none.isOk()) << none.message();
  EXPECT_TRUE(none->entries().empty());
  EXPECT_EQ(none->staleMessage("'db.json'"),
            "tuning database 'db.json': 3 entries of another generator "
            "version ignored (they were measured with kernels this build does "
            "not make): run fp8-tune again");
}

TEST(TuningDb, ALookupWithADeviceSkipsAnotherGpusEntries) {
  TuningDb db;
  db.add(tuned(4096, 4096, 7168, 192, "NVIDIA H100 80GB HBM3"));
  db.add(tuned(4096, 4096, 7168, 160, "NVIDIA H200"));
  const TuningDevice h200 = gpu("NVIDIA H200"), b200 = gpu("NVIDIA B200");
  auto m = db.lookup(deepseek(4096, 4096, 7168, 128), 4096, &h200);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->tuned);
  EXPECT_EQ(m->tile.blockN, 160);
  EXPECT_FALSE(db.lookup(deepseek(4096, 4096, 7168, 128), 4096, &b200));
  TuningDevice fewerSms = h200;
  fewerSms.smCount = 114;
  EXPECT_FALSE(db.lookup(deepseek(4096, 4096, 7168, 128), 4096, &fewerSms));
  // Clocks and versions are recorded, not matched.
  TuningDevice otherClock = h200;
  otherClock.clockMHz = 1500;
  otherClock.driverVersion = 12080;
  EXPECT_TRUE(db.lookup(deepseek(4096, 4096, 7168, 128), 4096, &otherClock));
}

TEST(TuningDb, TheSameMBucketComesFirstAndAddReplacesByKey) {
  EXPECT_EQ(tuningMBucket(0), 1);
  EXPECT_EQ(tuningMBucket(1), 1);
  EXPECT_EQ(tuningMBucket(7), 8);
  EXPECT_EQ(tuningMBucket(128), 128);
  EXPECT_EQ(tuningMBucket(129), 256);
  TuningDb db;
  db.add(tuned(512, 4096, 7168, 64, "NVIDIA H200"));
  db.add(tuned(1024, 4096, 7168, 96, "NVIDIA H200"));
  // 513 is nearest 512, but in 1024's bucket.
  auto m = db.lookup(deepseek(513, 4096, 7168, 128), 513);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tile.blockN, 96);
  EXPECT_FALSE(m->exact);
  // 600 has 1024's key (its bucket): it replaces that entry.
  db.add(tuned(600, 4096, 7168, 112, "NVIDIA H200"));
  ASSERT_EQ(db.entries().size(), 2u);
  EXPECT_EQ(db.entries()[1].spec.m, 600);
  EXPECT_EQ(db.entries()[1].spec.tile.blockN, 112);
  // Another GPU, or a hand-written entry: a separate key.
  db.add(tuned(600, 4096, 7168, 128, "NVIDIA H100 80GB HBM3"));
  db.add({deepseek(600, 4096, 7168, 64), 0, "hand"});
  EXPECT_EQ(db.entries().size(), 4u);
}

TEST(TuningDb, UpdateCreatesMergesAndNeverOverwritesACorruptFile) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path(), path = dir + "/db.json";
  ASSERT_TRUE(TuningDb::update(path, {tuned(128, 4096, 7168, 64, "A")}));
  // The temporary file was renamed; only the lock is left beside it.
  EXPECT_EQ(filesIn(dir), (std::set<std::string>{"db.json", "db.json.lock"}));
  ASSERT_TRUE(TuningDb::update(path, {tuned(4096, 4096, 7168, 192, "A"),
                                      tuned(128, 4096, 7168, 96, "A")}));
  auto db = TuningDb::load(path);
  ASSERT_TRUE(db.isOk()) << db.message();
  ASSERT_EQ(db->entries().size(), 2u);
  EXPECT_EQ(db->entries()[0].spec.tile.blockN, 96); // replaced in place
  {
    std::ofstream(path) << "{\"format\": 2, \"entries\": [";
  }
  Status s = TuningDb::update(path, {tuned(128, 4096, 7168, 64, "A")});
  EXPECT_EQ(s.message(), "not updating '" + path +
                             "' (left as it is): tuning database '" + path +
                             "' is not valid JSON");
  EXPECT_EQ(readAll(path), "{\"format\": 2, \"entries\": [");
  EXPECT_EQ(TuningDb::update(dir + "/missing/db.json", {}).message(),
            "cannot open the lock file '" + dir +
                "/missing/db.json.lock': No such file or directory");
}

TEST(TuningDb, UpdateDropsEntriesOfAnotherGenerator) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string path = tmp.path() + "/db.json";
  TuningDb db;
  db.add(tuned(128, 4096, 7168, 64, "A"));
  TuningEntry old = tuned(256, 4096, 7168, 96, "A");
  old.generator = "0000000000000000";
  db.add(old);
  {
    std::ofstream(path) << db.toJSON();
  }
  ASSERT_TRUE(TuningDb::update(path, {tuned(4096, 4096, 7168, 192, "A")}));
  const std::string text = readAll(path);
  EXPECT_EQ(text.find("0000000000000000"), std::string::npos) << text;
  auto back = TuningDb::load(path);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(back->staleEntries(), 0u);
  ASSERT_EQ(back->entries().size(), 2u);
  EXPECT_EQ(back->entries()[0].spec.m, 128);
  EXPECT_EQ(back->entries()[1].spec.m, 4096);
}

TEST(TuningDb, ConcurrentUpdatesKeepEveryEntry) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path(), path = dir + "/db.json";
  constexpr int kProcs = 8, kRounds = 20;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      for (int r = 0; r < kRounds; ++r)
        ok = ok && TuningDb::update(path, {tuned(128, 1024 * (p + 1), 7168,
                                                 64 + 16 * (r % 4), "A")})
                       .isOk();
      ::_exit(ok ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto db = TuningDb::load(path);
  ASSERT_TRUE(db.isOk()) << db.message();
  ASSERT_EQ(db->entries().size(), size_t(kProcs));
  for (int p = 0; p < kProcs; ++p) {
    auto m = db->lookup(deepseek(128, 1024 * (p + 1), 7168, 128), 128);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->n, 1024 * (p + 1));
    EXPECT_EQ(m->tile.blockN, 64 + 16 * ((kRounds - 1) % 4)); // the last
  }
  EXPECT_EQ(filesIn(dir), (std::set<std::string>{"db.json", "db.json.lock"}));
}
