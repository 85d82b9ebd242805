//===- TuningDb.cpp - Measured tile configurations, by recipe and shape ---===//

#include "codegen/TuningDb.h"

#include "codegen/GeneratedKernel.h"
#include "core/InputFile.h"
#include "core/JsonFields.h"
#include "core/JsonInput.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8 {

using json = nlohmann::json;

const std::string &tuningGeneratorVersion() {
  static const std::string version = [] {
    uint64_t h = 1469598103934665603ull; // FNV-1a, 64 bits
    auto mix = [&](const std::string &text) {
      for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
      }
      h ^= 0xff; // a separator no text holds
      h *= 1099511628211ull;
    };
    mix(std::to_string(kTuningGeneratorRevision));
    for (const auto &[name, text] : kernelHeaders()) {
      mix(name);
      mix(text);
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)h);
    return std::string(hex);
  }();
  return version;
}

int64_t tuningMBucket(int64_t m) {
  int64_t b = 1;
  while (b < m && b < (int64_t(1) << 62))
    b *= 2;
  return b;
}

std::string TuningDevice::describe() const {
  return name + ", " + std::to_string(smCount) + " SMs, " +
         std::to_string(clockMHz) + " MHz, driver " +
         std::to_string(driverVersion) + ", CUDA " +
         std::to_string(cudaVersion);
}

namespace {
Expected<TuningDevice> deviceFromJSON(const json &d, const std::string &at) {
  if (!d.is_object())
    return errorf("expected 'device' in ", at, " to be an object");
  JsonFields f(d, at + ", device");
  TuningDevice t;
  int64_t sms = 0, clock = 0, driver = 0, cuda = 0;
  FP8_RETURN_IF_ERROR(f.string("name", t.name, Presence::Required));
  FP8_RETURN_IF_ERROR(f.integer("sm_count", sms, IntRange{1, 100000}));
  FP8_RETURN_IF_ERROR(
      f.integer("clock_mhz", clock, IntRange{0, 100000}, Presence::Optional));
  FP8_RETURN_IF_ERROR(
      f.integer("driver", driver, IntRange{0, 1000000}, Presence::Optional));
  FP8_RETURN_IF_ERROR(
      f.integer("cuda", cuda, IntRange{0, 1000000}, Presence::Optional));
  t.smCount = int(sms);
  t.clockMHz = int(clock);
  t.driverVersion = int(driver);
  t.cudaVersion = int(cuda);
  return t;
}
} // namespace

Expected<TuningDb> TuningDb::parse(const std::string &text,
                                   const std::string &where) {
  auto parsed = parseJsonInput(text, "tuning database " + where);
  if (!parsed)
    return parsed.status();
  json j = std::move(*parsed);
  if (!j.is_object() || !j.contains("format"))
    return errorf("expected tuning database ", where,
                  " to be an object with a 'format' key");
  JsonFields top(j, "tuning database " + where);
  int64_t format = 0;
  FP8_RETURN_IF_ERROR(top.integer("format", format, IntRange{}));
  if (format != 1 && format != kTuningDbFormat)
    return errorf("tuning database ", where, " has format ", format,
                  "; this build reads formats 1 and ", kTuningDbFormat);
  if (!j.contains("entries") || !j["entries"].is_array())
    return errorf("expected an 'entries' array in tuning database ", where);
  TuningDb db;
  size_t index = 0;
  for (const json &e : j["entries"]) {
    const std::string at = where + ", entry " + std::to_string(index++);
    if (!e.is_object() || !e.contains("spec"))
      return errorf("expected an object with a 'spec' in ", at);
    auto spec = kernelSpecFromJSON(e["spec"].dump());
    if (!spec)
      return errorf(at, ": ", spec.message());
    if (spec->m <= 0)
      return errorf("expected a static positive shape in ", at, ", found ",
                    spec->m, "x", spec->n, "x", spec->k);
    TuningEntry entry;
    entry.spec = *spec;
    JsonFields f(e, at);
    FP8_RETURN_IF_ERROR(f.number("tflops", entry.tflops, Presence::Optional));
    FP8_RETURN_IF_ERROR(f.string("note", entry.note, Presence::Optional));
    if (format >= 2) {
      FP8_RETURN_IF_ERROR(
          f.string("generator", entry.generator, Presence::Optional));
      int64_t bucket = 0;
      FP8_RETURN_IF_ERROR(
          f.integer("m_bucket", bucket, IntRange{}, Presence::Optional));
      if (e.contains("m_bucket") && bucket != tuningMBucket(spec->m))
        return errorf(at, ": expected m_bucket ", tuningMBucket(spec->m),
                      " for M = ", spec->m, ", found ", bucket);
      if (e.contains("device")) {
        Expected<TuningDevice> d = deviceFromJSON(e["device"], at);
        if (!d)
          return d.status();
        entry.device = *d;
      }
    }
    if (!entry.generator.empty() &&
        entry.generator != tuningGeneratorVersion()) {
      ++db.stale_;
      continue;
    }
    db.entries_.push_back(std::move(entry));
  }
  return db;
}

Expected<TuningDb> TuningDb::load(const std::string &path) {
  Expected<std::string> text =
      readInputFile(path, kMaxTuningDbBytes, "tuning database");
  if (!text)
    return text.status();
  return parse(*text, "'" + path + "'");
}

namespace {
/// Same recipe: everything but the shape and the tile.
bool sameRecipe(const KernelSpec &a, const KernelSpec &b) {
  return a.arch == b.arch && a.kind == b.kind && a.groups == b.groups &&
         a.a == b.a && a.b == b.b &&
         a.promotionInterval == b.promotionInterval && a.out == b.out &&
         a.accumulate == b.accumulate;
}

double logDist(int64_t x, int64_t y) {
  return std::fabs(std::log2(double(std::max<int64_t>(x, 1))) -
                   std::log2(double(std::max<int64_t>(y, 1))));
}
} // namespace

std::optional<TuningDb::Match>
TuningDb::lookup(const KernelSpec &spec, int64_t m,
                 const TuningDevice *device) const {
  const TuningEntry *best = nullptr;
  double bestCost = std::numeric_limits<double>::infinity();
  for (const TuningEntry &e : entries_) {
    if (!sameRecipe(e.spec, spec))
      continue;
    if (device && e.device && !e.device->sameGpu(*device))
      continue;
    // Same N and K first (the kernel's code depends on them), then the M
    // bucket, then M.
    const bool sameNK = e.spec.n == spec.n && e.spec.k == spec.k;
    const double cost =
        (sameNK
             ? 0.0
             : 1000.0 + logDist(e.spec.n, spec.n) + logDist(e.spec.k, spec.k)) +
        (tuningMBucket(e.spec.m) == tuningMBucket(m) ? 0.0 : 100.0) +
        logDist(e.spec.m, m);
    if (cost < bestCost) {
      bestCost = cost;
      best = &e;
    }
  }
  if (!best)
    return std::nullopt;
  Match match;
  match.tile = best->spec.tile;
  match.m = best->spec.m;
  match.n = best->spec.n;
  match.k = best->spec.k;
  match.exact =
      best->spec.m == m && best->spec.n == spec.n && best->spec.k == spec.k;
  match.tuned = best->device.has_value();
  match.tflops = best->tflops;
  match.note = best->note;
  return match;
}

void TuningDb::add(TuningEntry e) {
  for (TuningEntry &old : entries_) {
    const bool sameDevice = old.device.has_value() == e.device.has_value() &&
                            (!e.device || old.device->sameGpu(*e.device));
    if (sameDevice && old.generator == e.generator &&
        sameRecipe(old.spec, e.spec) && old.spec.n == e.spec.n &&
        old.spec.k == e.spec.k &&
        tuningMBucket(old.spec.m) == tuningMBucket(e.spec.m)) {
      old = std::move(e);
      return;
    }
  }
  entries_.push_back(std::move(e));
}

std::string TuningDb::staleMessage(const std::string &where) const {
  if (stale_ == 0)
    return "";
  return "tuning database " + where + ": " + std::to_string(stale_) +
         (stale_ == 1 ? " entry" : " entries") +
         " of another generator version ignored (they were measured with "
         "kernels this build does not make): run fp8-tune again";
}

std::string TuningDb::toJSON(int indent) const {
  json entries = json::array();
  for (const TuningEntry &e : entries_) {
    json j{{"spec", json::parse(fp8::toJSON(e.spec))},
           {"m_bucket", tuningMBucket(e.spec.m)}};
    if (e.device)
      j["device"] = {{"name", e.device->name},
                     {"sm_count", e.device->smCount},
                     {"clock_mhz", e.device->clockMHz},
                     {"driver", e.device->driverVersion},
                     {"cuda", e.device->cudaVersion}};
    if (!e.generator.empty())
      j["generator"] = e.generator;
    if (e.tflops > 0)
      j["tflops"] = e.tflops;
    if (!e.note.empty())
      j["note"] = e.note;
    entries.push_back(j);
  }
  return json{{"format", kTuningDbFormat}, {"entries", entries}}.dump(indent);
}

namespace {
std::string sysError(const std::string &what, const std::string &path) {
  return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

/// Holds an exclusive flock on a file while alive.
class FileLock {
public:
  explicit FileLock(const std::string &path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      error_ = sysError("open the lock file", path);
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        error_ = sysError("lock", path);
        return;
      }
  }
  ~FileLock() {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  const std::string &error() const { return error_; }

private:
  int fd_ = -1;
  std::string error_;
};
} // namespace

Status TuningDb::update(const std::string &path,
                        const std::vector<TuningEntry> &entries) {
  FileLock lock(path + ".lock");
  if (!lock.error().empty())
    return Status::error(lock.error());
  TuningDb db;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    Expected<TuningDb> old = load(path);
    if (!old)
      return old.status().withContext("not updating '" + path +
                                      "' (left as it is)");
    db = std::move(*old);
  } else if (errno != ENOENT) {
    return Status::error(sysError("read the tuning database", path));
  }
  for (const TuningEntry &e : entries)
    db.add(e);
  const std::string text = db.toJSON() + "\n";
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::error(sysError("write", tmp));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      Status s = Status::error(sysError("write", tmp));
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status s = Status::error(sysError("write", tmp));
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Status::error(sysError("replace", path));
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::ok();
}

} // namespace fp8
