//===- EnvTest.cpp - The environment variables: strict, listed ------------===//

#include "core/Env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace fp8::env {
namespace {

/// Sets one variable for a scope, restoring the previous value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::string old_;
  bool had_ = false;
};

TEST(Env, UnsetAndEmptyTakeTheDefaults) {
  for (const Knob &k : knobs()) {
    ScopedEnv unset(k.name, nullptr);
    EXPECT_TRUE(checkEnvironment().isOk()) << k.name;
  }
  ScopedEnv tma("FP8_SCALE_TMA", "");
  EXPECT_TRUE(checkEnvironment().isOk());
  EXPECT_EQ(scaleTmaMask(), 3);
  ScopedEnv device("FP8_DEVICE", nullptr);
  EXPECT_EQ(deviceOrdinal(), 0);
}

TEST(Env, IntegersAreDigitsWithinTheirRange) {
  struct Case {
    const char *name, *value;
    bool ok;
  } cases[] = {
      {"FP8_DEVICE", "1", true},
      {"FP8_DEVICE", "abc", false},
      {"FP8_DEVICE", "1x", false},
      {"FP8_DEVICE", " 1", false},
      {"FP8_DEVICE", "-1", false},
      {"FP8_DEVICE", "+1", false},
      {"FP8_DEVICE", "1024", false},
      {"FP8_DEVICE", "99999999999999999999", false},
      {"FP8_SCALE_TMA", "0", true},
      {"FP8_SCALE_TMA", "4", false},
      {"FP8_SM90_PRODUCER_REGS", "40", true},
      {"FP8_SM90_PRODUCER_REGS", "44", false}, // not a multiple of 8
      {"FP8_SM90_PRODUCER_REGS", "16", false},
      {"FP8_SM90_CONSUMER_REGS", "232", true},
      {"FP8_SM90_CONSUMER_REGS", "99999", false},
      {"FP8_THREADS", "0", false},
      {"FP8_THREADS", "4", true},
      {"FP8_JIT_DEBUG", "1", true},
      {"FP8_JIT_DEBUG", "yes", false},
      {"FP8_KERNEL_TRACE", "2", false},
      {"FP8_KERNEL_DEBUG", "0", true},
  };
  for (const Case &c : cases) {
    ScopedEnv set(c.name, c.value);
    Status s = checkEnvironment();
    EXPECT_EQ(s.isOk(), c.ok) << c.name << "=" << c.value;
    if (!c.ok) {
      EXPECT_NE(s.message().find(std::string("expected ") + c.name),
                std::string::npos)
          << s.message();
      EXPECT_NE(s.message().find(c.value), std::string::npos) << s.message();
    }
  }
}

TEST(Env, TheAccessorsReturnTheParsedValue) {
  ScopedEnv producer("FP8_SM90_PRODUCER_REGS", "48");
  ScopedEnv threads("FP8_THREADS", "3");
  ScopedEnv tma("FP8_SCALE_TMA", "1");
  ScopedEnv trace("FP8_KERNEL_TRACE", "1");
  EXPECT_EQ(sm90ProducerRegs(), 48);
  EXPECT_EQ(sm90ConsumerRegs(), 0);
  EXPECT_EQ(oracleThreads(), 3);
  EXPECT_EQ(scaleTmaMask(), 1);
  EXPECT_TRUE(kernelTrace());
}

TEST(Env, TheCacheHasNoSharedDefault) {
  ScopedEnv dir("FP8_CACHE_DIR", nullptr);
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", nullptr);
  EXPECT_EQ(cacheDir(), "");
  ScopedEnv home2("HOME", "/home/u");
  EXPECT_EQ(cacheDir(), "/home/u/.cache/fp8-toolkit");
  ScopedEnv off("FP8_CACHE_DIR", "off");
  EXPECT_EQ(cacheDir(), "");
}

TEST(Env, TheReadmeListsEveryVariable) {
  std::ifstream in(FP8_README);
  ASSERT_TRUE(in) << FP8_README;
  std::stringstream text;
  text << in.rdbuf();
  for (const Knob &k : knobs())
    EXPECT_NE(text.str().find(std::string("`") + k.name + "`"),
              std::string::npos)
        << k.name << " is not in the README";
}

} // namespace
} // namespace fp8::env
