//===- MemoryBudget.cpp - Will this fit? Host and device memory -----------===//

#include "runtime/MemoryBudget.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fp8 {

std::string formatBytes(int64_t bytes) {
  static const char *const kUnits[] = {"bytes", "KiB", "MiB", "GiB",
                                       "TiB",   "PiB", "EiB"};
  double v = double(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 6) {
    v /= 1024;
    ++unit;
  }
  char buf[96];
  if (unit == 0)
    std::snprintf(buf, sizeof(buf), "%lld byte%s", (long long)bytes,
                  bytes == 1 ? "" : "s");
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s (%lld bytes)", v, kUnits[unit],
                  (long long)bytes);
  return buf;
}

Status checkMemoryFits(std::string_view what, int64_t needed,
                       std::string_view where, int64_t available) {
  if (needed <= available)
    return Status::ok();
  return errorf(what, " needs ",
                needed == INT64_MAX ? std::string("more than 2^63 bytes")
                                    : formatBytes(needed),
                " of ", where, " memory, ",
                formatBytes(std::max<int64_t>(available, 0)), " available");
}

namespace {
/// The first integer of a file (cgroup files: a number or "max").
std::optional<int64_t> readNumber(const char *path) {
  std::ifstream in(path);
  std::string text;
  if (!in || !(in >> text))
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end || errno == ERANGE || v < 0)
    return std::nullopt;
  return int64_t(v);
}

std::optional<int64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (in && std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0)
      continue;
    std::istringstream fields(line.substr(13));
    long long kib = -1;
    std::string unit;
    if (fields >> kib >> unit && kib >= 0 && unit == "kB" &&
        kib < (INT64_MAX >> 10))
      return int64_t(kib) << 10;
    return std::nullopt;
  }
  return std::nullopt;
}
} // namespace

std::optional<int64_t> availableHostMemory() {
  std::optional<int64_t> avail = memAvailable();
  std::optional<int64_t> limit = readNumber("/sys/fs/cgroup/memory.max");
  std::optional<int64_t> used = readNumber("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const int64_t left = std::max<int64_t>(*limit - *used, 0);
    avail = avail ? std::min(*avail, left) : left;
  }
  return avail;
}

Status checkHostMemory(std::string_view what, int64_t needed) {
  std::optional<int64_t> avail = availableHostMemory();
  if (!avail)
    return Status::ok();
  return checkMemoryFits(what, needed, "host", *avail);
}

} // namespace fp8
