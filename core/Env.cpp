//===- Env.cpp - Every environment variable the toolkit reads -------------===//

#include "core/Env.h"

#include "core/ParseNumber.h"

#include <cstdlib>
#include <string_view>

namespace fp8::env {

namespace {
using Kind = Knob::Kind;

std::string get(const char *name) {
  const char *v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

const Knob &knob(std::string_view name) {
  for (const Knob &k : knobs())
    if (name == k.name)
      return k;
  std::abort(); // a name missing from the table is a programming error
}

/// The value of an Integer or Flag knob, or an error naming it.
Expected<long long> parse(const Knob &k) {
  const std::string v = get(k.name);
  if (v.empty() || k.kind == Kind::Path)
    return k.fallback;
  if (k.kind == Kind::Flag) {
    if (v == "0" || v == "1")
      return v == "1" ? 1LL : 0LL;
    return errorf("expected ", k.name, " to be 0 or 1, found '", v, "'");
  }
  auto range = [&] {
    std::string r = "an integer in [" + std::to_string(k.min) + ", " +
                    std::to_string(k.max) + "]";
    if (k.multipleOf > 1)
      r += " that is a multiple of " + std::to_string(k.multipleOf);
    return r;
  };
  const std::optional<int64_t> n = parseInteger(v, k.min, k.max);
  if (!n || *n % k.multipleOf != 0)
    return errorf("expected ", k.name, " to be ", range(), ", found '", v, "'");
  return *n;
}

long long value(std::string_view name) {
  const Knob &k = knob(name);
  auto v = parse(k);
  return v ? *v : k.fallback;
}
} // namespace

const std::vector<Knob> &knobs() {
  // setmaxnreg takes a multiple of 8 in [24, 256] (PTX ISA 9.7.17.1).
  static const std::vector<Knob> table = {
      {"FP8_CACHE_DIR", Kind::Path, 0, 0, 1, 0,
       "kernel cache directory; off or 0 disables the disk cache"},
      {"FP8_JIT_DEBUG", Kind::Flag, 0, 1, 1, 0,
       "print what the JIT does and compile with -lineinfo"},
      {"FP8_DUMP_SOURCE", Kind::Path, 0, 0, 1, 0,
       "write every generated kernel source to this directory"},
      {"FP8_DEVICE", Kind::Integer, 0, 1023, 1, 0, "CUDA device ordinal"},
      {"FP8_TUNING_DB", Kind::Path, 0, 0, 1, 0,
       "the tuning database fp8::gemm takes tiles from (fp8-tune writes it)"},
      {"FP8_SCALE_TMA", Kind::Integer, 0, 3, 1, 3,
       "K scales that may travel by TMA on sm_90a: bit 0 A, bit 1 B"},
      {"FP8_KERNEL_TRACE", Kind::Flag, 0, 1, 1, 0,
       "sm_90a GEMM kernels record a clock timeline of their pipeline"},
      {"FP8_KERNEL_DEBUG", Kind::Flag, 0, 1, 1, 0,
       "kernels trap with a message instead of hanging"},
      {"FP8_SM90_PRODUCER_REGS", Kind::Integer, 24, 256, 8, 0,
       "setmaxnreg budget of the sm_90a producer warpgroup"},
      {"FP8_SM90_CONSUMER_REGS", Kind::Integer, 24, 256, 8, 0,
       "setmaxnreg budget of the sm_90a consumer warpgroups"},
      {"FP8_THREADS", Kind::Integer, 1, 1024, 1, 0,
       "threads of the CPU oracle (default: one per hardware thread)"},
  };
  return table;
}

Status checkEnvironment() {
  for (const Knob &k : knobs())
    if (auto v = parse(k); !v)
      return v.status();
  return Status::ok();
}

std::string cacheDir() {
  std::string dir = get("FP8_CACHE_DIR");
  if (dir == "off" || dir == "0")
    return "";
  if (!dir.empty())
    return dir;
  if (std::string xdg = get("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/fp8-toolkit";
  if (std::string home = get("HOME"); !home.empty())
    return home + "/.cache/fp8-toolkit";
  // No shared default (a directory in /tmp could be another user's): without
  // a home the cache stays in memory.
  return "";
}

bool jitDebug() { return value("FP8_JIT_DEBUG") != 0; }
std::string dumpSourceDir() { return get("FP8_DUMP_SOURCE"); }
int deviceOrdinal() { return int(value("FP8_DEVICE")); }
std::string tuningDb() { return get("FP8_TUNING_DB"); }
int scaleTmaMask() { return int(value("FP8_SCALE_TMA")); }
bool kernelTrace() { return value("FP8_KERNEL_TRACE") != 0; }
bool kernelDebug() { return value("FP8_KERNEL_DEBUG") != 0; }
int sm90ProducerRegs() { return int(value("FP8_SM90_PRODUCER_REGS")); }
int sm90ConsumerRegs() { return int(value("FP8_SM90_CONSUMER_REGS")); }
int oracleThreads() { return int(value("FP8_THREADS")); }

} // namespace fp8::env
