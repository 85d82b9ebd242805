//===- TuningDbTest.cpp - The tuning database: format, lookup, errors -----===//

#include "codegen/TuningDb.h"

#include <gtest/gtest.h>

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
      TuningDb::parse("{\"format\": 2, \"entries\": []}", "'x.json'").message(),
      "tuning database 'x.json' has format 2; this build reads format 1");
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
  EXPECT_EQ(edited("\"format\":1", "\"format\":1.0"),
            "expected 'format' in tuning database 'db.json' to be a 64-bit "
            "integer, found 1.0");
  // Optional fields of the wrong type are errors, not ignored.
  EXPECT_EQ(edited("{\"spec\"", "{\"tflops\":\"fast\",\"spec\""),
            "expected 'tflops' in 'db.json', entry 0 to be a finite number, "
            "found \"fast\"");
  EXPECT_EQ(edited("{\"spec\"", "{\"note\":7,\"spec\""),
            "expected 'note' in 'db.json', entry 0 to be a string, found 7");
}
