//===- ArgsTest.cpp - The tools' option reader ----------------------------===//

#include "core/Args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace fp8;

TEST(Args, NumbersTakeTheHouseForm) {
  std::vector<OptionSpec> specs = {{"n", "N", "", "8"}, {"x", "X", "", "1"}};
  Args args("tool", specs);
  std::string a0 = "tool", a1 = "--n=12abc", a2 = "--x", a3 = "inf";
  char *argv[] = {a0.data(), a1.data(), a2.data(), a3.data()};
  ASSERT_TRUE(args.parse(4, argv, 1).isOk());
  EXPECT_EQ(args.getInt("n", 1, 64).message(),
            "expected --n to be an integer in [1, 64], found '12abc'");
  EXPECT_EQ(args.getDouble("x").message(),
            "expected --x to be a finite number, found 'inf'");
}
