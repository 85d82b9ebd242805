//===- Sha256Test.cpp - SHA-256 against FIPS 180-4 test vectors ----------===//

#include "runtime/Sha256.h"

#include <gtest/gtest.h>

#include <random>

using namespace fp8;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  std::mt19937 rng(7);
  std::string data(5000, '\0');
  for (auto &c : data)
    c = char(rng());
  const std::string expected = sha256Hex(data);
  for (int trial = 0; trial < 50; ++trial) {
    Sha256 h;
    size_t pos = 0;
    while (pos < data.size()) {
      size_t n = std::min<size_t>(rng() % 150, data.size() - pos);
      h.update(data.data() + pos, n);
      pos += n;
    }
    EXPECT_EQ(h.hexDigest(), expected) << "trial " << trial;
  }
}

TEST(Sha256, FieldsAreLengthPrefixed) {
  Sha256 a, b;
  a.updateField("ab");
  a.updateField("c");
  b.updateField("a");
  b.updateField("bc");
  EXPECT_NE(a.hexDigest(), b.hexDigest());
}
