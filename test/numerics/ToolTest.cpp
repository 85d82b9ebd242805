//===- ToolTest.cpp - fp8-numerics end to end -----------------------------===//
//
// Runs the built fp8-numerics binary: exit codes, error messages, and the
// numbers in its JSON output.
//
//===----------------------------------------------------------------------===//

#include "numerics/Npy.h"
#include "numerics/Quantize.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

using namespace fp8;
using namespace fp8::numerics;
using json = nlohmann::json;

namespace {

struct ToolRun {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `env fp8-numerics args`, capturing stdout, stderr and the exit code.
ToolRun runTool(const std::string &args, const std::string &env = "") {
  static int counter = 0;
  std::string base = testing::TempDir() + "fp8_numerics_tool_" +
                     std::to_string(::getpid()) + "_" +
                     std::to_string(counter++);
  std::string cmd = env + " " FP8_NUMERICS_TOOL " " + args + " > " + base +
                    ".out 2> " + base + ".err";
  int status = std::system(cmd.c_str());
  ToolRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

json parse(const ToolRun &r) {
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

} // namespace

TEST(Fp8NumericsTool, HelpAndUsage) {
  ToolRun help = runTool("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("commands:"), std::string::npos);
  EXPECT_EQ(runTool("").code, 2);
  ToolRun sub = runTool("gemm --help");
  EXPECT_EQ(sub.code, 0);
  EXPECT_NE(sub.out.find("--promotion LIST"), std::string::npos);
}

TEST(Fp8NumericsTool, BadArgumentsExitTwoWithAMessage) {
  ToolRun r = runTool("gemm --m abc");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "fp8-numerics: error: expected --m to be an integer in [1, "
                   "1048576], found 'abc'\n");
  r = runTool("quantize --granularity 1x128 --frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown option '--frobnicate' for 'quantize'"),
            std::string::npos);
  r = runTool(
      "gemm --granularity-a 1x128 --granularity-b 128x128 --promotion 96");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("expected promotion_interval (96) to divide the K "
                       "block of A's scales (128)"),
            std::string::npos);
  r = runTool("explode");
  EXPECT_EQ(r.code, 2);
  r = runTool("quantize --input /nonexistent/x.npy");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot read the .npy file"), std::string::npos);
}

TEST(Fp8NumericsTool, NumbersAreParsedStrictly) {
  // Trailing text, spaces, signs, values beyond int64_t (which strtoll
  // clamped), non-finite numbers and empty list items: exit 2, naming the
  // option and what was found.
  struct Case {
    std::string args, message;
  } cases[] = {
      {"gemm --m 12abc",
       "expected --m to be an integer in [1, 1048576], found '12abc'"},
      {"gemm --m ' 12'",
       "expected --m to be an integer in [1, 1048576], found ' 12'"},
      {"gemm --m +12",
       "expected --m to be an integer in [1, 1048576], found '+12'"},
      {"gemm --m 99999999999999999999",
       "expected --m to be an integer in [1, 1048576], found "
       "'99999999999999999999'"},
      {"gemm --seed -1", "expected --seed to be an integer in [0, "
                         "9223372036854775807], found '-1'"},
      {"gemm --promotion 32,", "expected --promotion to be a comma-separated "
                               "list of integers, found '32,'"},
      {"quantize --magnitude inf",
       "expected --magnitude to be a finite number, found 'inf'"},
      {"quantize --magnitude 1e999",
       "expected --magnitude to be a finite number, found '1e999'"},
      {"quantize --growth ' 2'",
       "expected --growth to be a finite number, found ' 2'"},
      {"quantize --shape 99999999999999999999x4",
       "expected each dimension of --shape to be an integer in [1, "
       "2147483648], found '99999999999999999999'"},
      {"quantize --shape 64x", "expected each dimension of --shape to be an "
                               "integer in [1, 2147483648], found ''"},
      {"quantize --seed", "expected a value (N) after --seed"},
  };
  for (const Case &c : cases) {
    ToolRun r = runTool(c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(r.err, "fp8-numerics: error: " + c.message + "\n") << c.args;
  }
}

TEST(Fp8NumericsTool, SizesAreBoundedBeforeAllocating) {
  // Both aborted on std::bad_alloc: quantize had no size cap, and a block
  // of 2^31 rows made the statistics allocate per block row.
  ToolRun r = runTool("quantize --shape 99999x99999");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "fp8-numerics: error: expected --shape to have at most "
                   "2^31 elements, found 99999x99999 (9999800001)\n");
  r = runTool("quantize --shape 64x256 --granularity 2147483648x1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(parse(r)["stats"]["blocks"], 256);
  // gemm capped M*K and N*K but not the M*N results (three of them).
  r = runTool("gemm --m 1048576 --n 1048576 --k 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "fp8-numerics: error: expected M*N to be at most 2^31 "
                   "elements, found 1099511627776\n");
}

TEST(Fp8NumericsTool, FilesThatAreNotRegularAreRefused) {
  // A directory as --input aborted with std::ios_base::failure.
  const std::string dir = testing::TempDir();
  ToolRun r = runTool("quantize --input " + dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("' to be a regular file, found a directory"),
            std::string::npos)
      << r.err;
  // --save where PREFIX.codes.npy is a directory: refused, not written.
  const std::string prefix = dir + "tool_save_dir";
  ASSERT_EQ(::mkdir((prefix + ".codes.npy").c_str(), 0755), 0);
  r = runTool("quantize --shape 4x4 --save " + prefix);
  ::rmdir((prefix + ".codes.npy").c_str());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "fp8-numerics: error: cannot open '" + prefix +
                       ".codes.npy' for writing: Is a directory\n");
}

TEST(Fp8NumericsTool, QuantizeJsonReportsTheStatistics) {
  ToolRun r =
      runTool("quantize --shape 64x256 --granularity 1x128 --dist outliers "
              "--json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  EXPECT_EQ(j["granularity"], "1x128");
  EXPECT_EQ(j["shape"], json::array({64, 256}));
  EXPECT_EQ(j["stats"]["elements"], 64 * 256);
  EXPECT_EQ(j["stats"]["blocks"], 128);
  EXPECT_GT(j["stats"]["mean_rel_error"].get<double>(), 0.0);
  EXPECT_LT(j["stats"]["mean_rel_error"].get<double>(), 0.1);
}

TEST(Fp8NumericsTool, QuantizeAGivenNpyAndSaveTheResult) {
  std::string dir = testing::TempDir();
  std::string in = dir + "tool_input.npy", prefix = dir + "tool_out";
  float x[4] = {448.0f, 1.0625f, 3.3f, 0.0f};
  ASSERT_TRUE(writeNpy(in, npyFromFloat(x, {2, 2})).isOk());
  ToolRun r = runTool("quantize --input " + in +
                      " --granularity per_tensor --json --save " + prefix);
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  EXPECT_DOUBLE_EQ(j["stats"]["max_abs_error"].get<double>(), 0.0625);
  EXPECT_EQ(j["stats"]["nonzero"], 3);
  auto codes = readNpy(prefix + ".codes.npy");
  ASSERT_TRUE(codes) << codes.message();
  QuantRecipe recipe;
  auto q = quantize(x, 2, 2, recipe);
  EXPECT_EQ(*npyToBytes(*codes), q->codes);
  EXPECT_EQ(codes->shape, (std::vector<int64_t>{2, 2}));
  auto scales = readNpy(prefix + ".scales.npy");
  ASSERT_TRUE(scales);
  EXPECT_EQ(*npyToFloat(*scales), q->scales);
  for (const std::string &f :
       {in, prefix + ".codes.npy", prefix + ".scales.npy"})
    std::remove(f.c_str());
}

TEST(Fp8NumericsTool, DelayedScalingSteps) {
  ToolRun r =
      runTool("quantize --mode delayed --shape 16x16 --steps 3 --growth 2 "
              "--json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_FALSE(j["steps"][0]["used_history"].get<bool>());
  EXPECT_EQ(j["steps"][0]["overflow"], 0);
  EXPECT_TRUE(j["steps"][1]["used_history"].get<bool>());
  EXPECT_GT(j["steps"][1]["overflow"].get<int64_t>(), 0); // 2x growth
}

TEST(Fp8NumericsTool, GemmTableShowsTheCostOfNoPromotion) {
  std::string args = "gemm --m 32 --n 32 --k 2048 --dist positive "
                     "--promotion 0,128 --acc-bits 0,13 --json";
  ToolRun r = runTool(args);
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  ASSERT_EQ(j["results"].size(), 4u);
  for (const json &row : j["results"]) {
    double bias = row["vs_fp64"]["bias"].get<double>();
    double sim = row["vs_unquantized"]["similarity"].get<double>();
    if (row["acc_bits"] == 13 && row["promotion"] == 0) {
      EXPECT_LT(bias, -0.02); // ~3.5% lost at K=2048
    } else {
      EXPECT_GT(bias, -0.001) << row.dump();
      EXPECT_LT(sim, 1e-3) << row.dump();
    }
  }
  // Same numbers whatever the thread count.
  ToolRun one = runTool(args, "FP8_THREADS=1");
  ASSERT_EQ(one.code, 0);
  json k = parse(one);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(j["results"][i]["vs_fp64"], k["results"][i]["vs_fp64"]);
}
