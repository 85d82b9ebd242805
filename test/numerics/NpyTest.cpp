//===- NpyTest.cpp - The .npy reader and writer ---------------------------===//

#include "numerics/Npy.h"

#include "numerics/Formats.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace fp8::numerics;

namespace {
std::vector<uint8_t> bytesOf(const std::string &header,
                             const std::vector<uint8_t> &payload,
                             int major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  uint32_t len = uint32_t(header.size());
  out.push_back(uint8_t(len));
  out.push_back(uint8_t(len >> 8));
  if (major > 1) {
    out.push_back(uint8_t(len >> 16));
    out.push_back(uint8_t(len >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}
} // namespace

TEST(Npy, RoundTripsEveryWrittenType) {
  float f[6] = {1, -2, 3.5f, 0, 1e-30f, 7};
  auto a = parseNpy(serializeNpy(npyFromFloat(f, {2, 3})));
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->descr, "<f4");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(*npyToFloat(*a), std::vector<float>(f, f + 6));

  uint8_t codes[4] = {0x00, 0x7E, 0xFE, 0x7F};
  auto c = parseNpy(serializeNpy(npyFromBytes(codes, {4})));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->descr, "|u1");
  EXPECT_EQ(c->shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(*npyToBytes(*c), std::vector<uint8_t>(codes, codes + 4));

  uint16_t bf[2] = {floatToBF16(1.5f), floatToBF16(-3.0f)};
  auto b = parseNpy(serializeNpy(npyFromBF16(bf, {1, 2})));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->descr, "<u2");
  EXPECT_EQ(*npyToBF16(*b), std::vector<uint16_t>(bf, bf + 2));
  EXPECT_EQ(*npyToFloat(*b, U2As::BF16), (std::vector<float>{1.5f, -3.0f}));

  double d[2] = {0.1, 2.0};
  auto dd = parseNpy(serializeNpy(npyFromDouble(d, {2})));
  EXPECT_EQ(*npyToFloat(*dd), (std::vector<float>{0.1f, 2.0f}));
  int32_t i[3] = {-1, 0, 7};
  auto ii = parseNpy(serializeNpy(npyFromInt32(i, {3})));
  EXPECT_EQ(*npyToFloat(*ii), (std::vector<float>{-1, 0, 7}));
}

TEST(Npy, HeaderIsPaddedToSixtyFourBytes) {
  float f = 1;
  std::vector<uint8_t> bytes = serializeNpy(npyFromFloat(&f, {1}));
  EXPECT_EQ((bytes.size() - 4) % 64, 0u);
  EXPECT_EQ(bytes[bytes.size() - 5], '\n');
}

TEST(Npy, ReadsNumPyStyleFilesIncludingBF16AsV2) {
  // As NumPy writes an ml_dtypes.bfloat16 array (version 1.0 and 3.0).
  uint16_t one = floatToBF16(1.0f), two = floatToBF16(-2.0f);
  std::vector<uint8_t> payload = {uint8_t(one), uint8_t(one >> 8), uint8_t(two),
                                  uint8_t(two >> 8)};
  std::string h = "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }";
  for (int major : {1, 3}) {
    auto a = parseNpy(bytesOf(h + "\n", payload, major));
    ASSERT_TRUE(a) << a.message();
    EXPECT_EQ(*npyToFloat(*a), (std::vector<float>{1.0f, -2.0f}));
  }
  // A 0-d array and f16.
  std::string h0 = "{'descr': '<f2', 'fortran_order': False, 'shape': (), }\n";
  uint16_t half = floatToF16(0.5f);
  auto z = parseNpy(bytesOf(h0, {uint8_t(half), uint8_t(half >> 8)}));
  ASSERT_TRUE(z);
  EXPECT_EQ(z->elements(), 1);
  EXPECT_EQ(*npyToFloat(*z), std::vector<float>{0.5f});
}

TEST(Npy, RejectsWhatItCannotRead) {
  EXPECT_NE(parseNpy({1, 2, 3}).message().find("expected a .npy file"),
            std::string::npos);
  std::string be = "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }";
  EXPECT_NE(parseNpy(bytesOf(be, {0, 0, 0, 0})).message().find("little-endian"),
            std::string::npos);
  std::string fo = "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }";
  EXPECT_NE(parseNpy(bytesOf(fo, {0, 0, 0, 0})).message().find("C-order"),
            std::string::npos);
  std::string sh = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(parseNpy(bytesOf(sh, {0, 0, 0, 0})).message(),
            "expected 12 bytes of data for shape (3,) of '<f4', found 4");
  std::string huge = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(4611686018427387904, 4611686018427387904), }";
  EXPECT_FALSE(parseNpy(bytesOf(huge, {0, 0, 0, 0})));
  std::string u8 = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }";
  EXPECT_NE(npyToBF16(*parseNpy(bytesOf(u8, {1}))).message().find("bf16"),
            std::string::npos);
  EXPECT_NE(
      readNpy("/nonexistent/x.npy").message().find("cannot read the .npy file"),
      std::string::npos);
}

TEST(Npy, TheHeaderIsTheDictionaryTheFormatDefines) {
  auto problem = [](const std::string &header) {
    return parseNpy(bytesOf(header, {0, 0, 0, 0})).message();
  };
  // Accepted: the forms NumPy writes, in either quote style, and a 0-d
  // array.
  for (const char *ok :
       {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}",
        "{'shape': (1, 1,), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ( ), }"}) {
    auto a = parseNpy(bytesOf(ok, {0, 0, 0, 0}));
    EXPECT_TRUE(a) << ok << ": " << a.message();
  }
  const std::string good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  // Refused: anything else, each naming what was expected.
  EXPECT_EQ(problem("['descr': '<f4', 'fortran_order': False, 'shape': (1,)]"),
            "expected a dictionary ({'descr': ..., 'fortran_order': ..., "
            "'shape': (...)}) in the .npy header, found "
            "'['descr': '<f4', 'fortran_order': False, 'shape': (1,)]'");
  EXPECT_NE(problem("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ")
                .find("expected a quoted key or '}'"),
            std::string::npos);
  EXPECT_NE(problem("{'descr': '<f4', 'shape': (1,), }")
                .find("expected the key 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(problem("{'descr': '<f4', 'fortran_order': None, 'shape': (1,)}")
                .find("expected fortran_order False or True"),
            std::string::npos);
  EXPECT_NE(problem("{'descr': '<f4', 'descr': '<f4', 'fortran_order': "
                    "False, 'shape': (1,)}")
                .find("expected the key 'descr' once"),
            std::string::npos);
  EXPECT_NE(problem("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                    "'dtype': 'x'}")
                .find("expected only the keys 'descr', 'fortran_order' and "
                      "'shape' (not 'dtype')"),
            std::string::npos);
  EXPECT_NE(problem("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}")
                .find("expected ',' or '}' after the value of 'descr'"),
            std::string::npos);
  EXPECT_NE(problem(good + " x").find("expected nothing but spaces after"),
            std::string::npos);
  EXPECT_NE(problem("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}")
                .find("expected a 'shape' tuple"),
            std::string::npos);
  for (const char *shape : {"(1,,)", "(,1)", "(1)", "(,)", "(1, , 1)"})
    EXPECT_EQ(problem(std::string("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': ") +
                      shape + "}"),
              std::string("expected a shape tuple such as (2,) or (2, 3), "
                          "found '") +
                  shape + "'");
}

TEST(Npy, WritesAndReadsFiles) {
  std::string path = testing::TempDir() + "npy_test.npy";
  float f[2] = {3, 4};
  ASSERT_TRUE(writeNpy(path, npyFromFloat(f, {2})).isOk());
  auto a = readNpy(path);
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(*npyToFloat(*a), (std::vector<float>{3, 4}));
  std::remove(path.c_str());
}

TEST(Npy, ShapesAreCheckedBeforeAnythingIsAllocated) {
  // A count that overflows int64_t is refused even next to a 0 dimension
  // (its product with 0 would otherwise pass the data-size check).
  std::string zero = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(4611686018427387904, 4611686018427387904, 0), }";
  EXPECT_EQ(parseNpy(bytesOf(zero, {})).message(),
            "expected a shape of fewer than 2^63 elements, found "
            "'(4611686018427387904, 4611686018427387904, 0)'");
  // Dimensions beyond int64_t are refused, not clamped.
  std::string range = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(99999999999999999999,), }";
  EXPECT_EQ(parseNpy(bytesOf(range, {})).message(),
            "expected non-negative integer dimensions below 2^63, found "
            "'(99999999999999999999,)'");
  std::string neg = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(-1,), }";
  EXPECT_FALSE(parseNpy(bytesOf(neg, {})));
  // A header longer than kMaxNpyHeader is refused without reading it.
  std::vector<uint8_t> longHeader = {0x93, 'N', 'U', 'M', 'P', 'Y',
                                     2,    0,   0,   0,   0,   1};
  EXPECT_EQ(parseNpy(longHeader).message(),
            "expected a .npy header of at most 65536 bytes, found one of "
            "16777216");

  // From a file: a shape of 2^40 floats in a file of a few bytes is
  // refused by its size, before the data is allocated.
  const std::string path = testing::TempDir() + "npy_huge_shape.npy";
  std::vector<uint8_t> bytes = bytesOf(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }",
      {0, 0, 0, 0});
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()),
              std::streamsize(bytes.size()));
  }
  EXPECT_EQ(readNpy(path).message(),
            "reading '" + path +
                "': expected 4398046511104 bytes of data for shape "
                "(1099511627776,) of '<f4', found 4");
  std::remove(path.c_str());
}

TEST(Npy, OnlyRegularFilesAreReadOrWritten) {
  const std::string dir =
      testing::TempDir() + "npy_dir_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  // A directory (reading one threw std::ios_base::failure from the stream).
  EXPECT_EQ(readNpy(dir).message(),
            "expected the .npy file '" + dir +
                "' to be a regular file, found a directory");
  float f = 1;
  EXPECT_EQ(writeNpy(dir, npyFromFloat(&f, {1})).message(),
            "cannot open '" + dir + "' for writing: Is a directory");
  // A FIFO: refused at once, never waited on (no writer, no reader).
  const std::string fifo = dir + "/fifo.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(readNpy(fifo).message(),
            "expected the .npy file '" + fifo +
                "' to be a regular file, found a FIFO");
  EXPECT_EQ(writeNpy(fifo, npyFromFloat(&f, {1})).message(),
            "cannot open '" + fifo +
                "' for writing: No such device or address");
  // A link to a regular file is followed.
  const std::string file = dir + "/x.npy", link = dir + "/link.npy";
  ASSERT_TRUE(writeNpy(file, npyFromFloat(&f, {1})).isOk());
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);
  auto a = readNpy(link);
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(*npyToFloat(*a), std::vector<float>{1.0f});
  // Writing over a longer file leaves only the new array.
  float many[4] = {1, 2, 3, 4};
  ASSERT_TRUE(writeNpy(file, npyFromFloat(many, {4})).isOk());
  ASSERT_TRUE(writeNpy(file, npyFromFloat(&f, {1})).isOk());
  auto back = readNpy(file);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->shape, (std::vector<int64_t>{1}));
  std::remove(link.c_str());
  std::remove(file.c_str());
  std::remove(fifo.c_str());
  ::rmdir(dir.c_str());
}
