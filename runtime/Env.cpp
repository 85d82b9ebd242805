//===- Env.cpp - Environment knobs of the runtime -------------------------===//

#include "runtime/Env.h"

#include <cstdlib>
#include <string_view>

namespace fp8::env {

static std::string get(const char *name) {
  const char *v = std::getenv(name);
  return v ? std::string(v) : std::string();
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

bool jitDebug() {
  std::string v = get("FP8_JIT_DEBUG");
  return !v.empty() && v != "0";
}

std::string dumpSourceDir() { return get("FP8_DUMP_SOURCE"); }

int deviceOrdinal() {
  std::string v = get("FP8_DEVICE");
  if (v.empty())
    return 0;
  return std::atoi(v.c_str());
}

bool kernelTrace() {
  std::string v = get("FP8_KERNEL_TRACE");
  return !v.empty() && v != "0";
}

int scaleTmaMask() {
  std::string v = get("FP8_SCALE_TMA");
  return v.empty() ? 3 : std::atoi(v.c_str());
}

} // namespace fp8::env
