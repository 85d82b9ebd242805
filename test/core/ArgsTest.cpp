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

TEST(Args, HelpNamesTheToolAndItsSubcommand) {
  std::vector<OptionSpec> specs = {{"n", "N", "rows", "8"}};
  const std::string sub = Args("quantize", specs).help("fp8-numerics", "S");
  EXPECT_EQ(sub.rfind("usage: fp8-numerics quantize [options]\n\nS\n", 0), 0u)
      << sub;
  // A tool without subcommands is its own command: named once.
  const std::string tool = Args("fp8-tune", specs).help("fp8-tune", "S");
  EXPECT_EQ(tool.rfind("usage: fp8-tune [options]\n\nS\n", 0), 0u) << tool;
  EXPECT_NE(tool.find("  --n N"), std::string::npos) << tool;
}
