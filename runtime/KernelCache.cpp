//===- KernelCache.cpp - Memory + disk cache of compiled kernels ----------===//

#include "runtime/KernelCache.h"
#include "core/Env.h"
#include "runtime/Sha256.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8 {

std::string_view toString(CubinOrigin o) {
  switch (o) {
  case CubinOrigin::Memory:
    return "memory";
  case CubinOrigin::Disk:
    return "disk cache";
  case CubinOrigin::Compiled:
    return "compiled";
  }
  return "?";
}

namespace {
constexpr char kMagic[8] = {'F', 'P', '8', 'C', 'U', 'B', 'N', '2'};
constexpr size_t kHeader = 8 + 8 + 32; // magic, payload size, SHA-256
/// No cubin of ours comes near this; a larger file is not read.
constexpr uint64_t kMaxEntryBytes = uint64_t(64) << 20;

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

Status makeDirs(const std::string &path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty())
      continue;
    cur += part + "/";
    if (mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST)
      return errorf("cannot create the kernel cache directory '", cur,
                    "': ", std::strerror(errno),
                    " (set FP8_CACHE_DIR to a writable directory, or to "
                    "'off')");
  }
  return Status::ok();
}

/// Fails unless `dir` is a directory owned by this user that neither its
/// group nor others can write: only such a directory can hold entries
/// nobody else placed. `follow`: the user's own FP8_CACHE_DIR may be a
/// symbolic link; the shards we create may not.
Status checkTrusted(const std::string &dir, bool follow) {
  struct stat st;
  if ((follow ? ::stat(dir.c_str(), &st) : ::lstat(dir.c_str(), &st)) != 0)
    return errorf("cannot inspect '", dir, "': ", std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return errorf("'", dir, "' is not a directory");
  if (st.st_uid != ::geteuid())
    return errorf("'", dir, "' is owned by uid ", st.st_uid,
                  ", not by this user (uid ", ::geteuid(), ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return errorf("'", dir, "' is writable by its group or by others (mode ",
                  std::to_string((st.st_mode >> 6) & 7) +
                      std::to_string((st.st_mode >> 3) & 7) +
                      std::to_string(st.st_mode & 7),
                  ")");
  return Status::ok();
}

/// A non-negative decimal int, all of `s`.
bool parseCount(const std::string &s, int &out) {
  if (s.empty() || s.size() > 9)
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  out = std::stoi(s);
  return true;
}

/// payload = "key=<k>\nname=<n>\nregisters=<r>\nspill=<s>\nstack=<t>\n\n"
///           + cubin: the checksum covers the key and the kernel's name, which
/// a load compares with what it looks for.
std::string serialize(const std::string &key, const CompiledKernel &k) {
  std::ostringstream os;
  os << "key=" << key << "\nname=" << k.name << "\nregisters=" << k.registers
     << "\nspill=" << k.spillBytes << "\nstack=" << k.stackBytes << "\n\n";
  std::string s = os.str();
  s.append(k.cubin.data(), k.cubin.size());
  return s;
}

bool deserialize(const std::string &payload, std::string &entryKey,
                 CompiledKernel &k) {
  size_t end = payload.find("\n\n");
  if (end == std::string::npos)
    return false;
  std::istringstream is(payload.substr(0, end));
  std::string line;
  while (std::getline(is, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      return false;
    std::string key = line.substr(0, eq), val = line.substr(eq + 1);
    bool ok = true;
    if (key == "key")
      entryKey = val;
    else if (key == "name")
      k.name = val;
    else if (key == "registers")
      ok = parseCount(val, k.registers);
    else if (key == "spill")
      ok = parseCount(val, k.spillBytes);
    else if (key == "stack")
      ok = parseCount(val, k.stackBytes);
    else
      ok = false;
    if (!ok)
      return false;
  }
  k.cubin.assign(payload.begin() + end + 2, payload.end());
  return !k.cubin.empty() && !k.name.empty() && !entryKey.empty();
}

/// The whole of a regular file of at most kMaxEntryBytes bytes, owned by
/// this user, opened without following a link or blocking on a FIFO.
Expected<std::string> readRegularFile(const std::string &path, bool &missing) {
  missing = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    missing = errno == ENOENT;
    if (errno == ELOOP)
      return errorf("a symbolic link");
    return errorf(std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return errorf(std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return errorf("not a regular file");
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return errorf("owned by uid ", st.st_uid, ", not by this user (uid ",
                  ::geteuid(), ")");
  }
  if (uint64_t(st.st_size) > kMaxEntryBytes) {
    ::close(fd);
    return errorf(st.st_size, " bytes, more than an entry may hold (",
                  kMaxEntryBytes, ")");
  }
  std::string data(size_t(st.st_size), '\0');
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::read(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    off += size_t(n);
  }
  ::close(fd);
  data.resize(off);
  return data;
}
} // namespace

KernelCache::KernelCache(std::string dir) : dir_(std::move(dir)) {}

bool KernelCache::diskUsable() {
  if (dir_.empty() || diskChecked_)
    return !dir_.empty() && diskTrusted_;
  diskChecked_ = true;
  Status s = makeDirs(dir_);
  if (s.isOk())
    s = checkTrusted(dir_, /*follow=*/true);
  diskTrusted_ = s.isOk();
  if (!diskTrusted_)
    std::fprintf(stderr,
                 "[fp8-jit] warning: the kernel cache directory is not used "
                 "(%s); kernels are compiled in memory. Point FP8_CACHE_DIR "
                 "at a directory of your own (mode 0700), or set it to "
                 "'off'\n",
                 s.message().c_str());
  return diskTrusted_;
}

KernelCache &KernelCache::global() {
  static KernelCache cache(env::cacheDir());
  return cache;
}

std::string KernelCache::keyOf(const GeneratedKernel &k) {
  Sha256 h;
  h.updateField("fp8-jit-cache-v2");
  h.updateField(k.name);
  h.updateField(k.source);
  for (const auto &[name, text] : kernelHeaders()) {
    h.updateField(name);
    h.updateField(text);
  }
  for (const auto &opt : nvrtcOptions(k.arch))
    h.updateField(opt);
  h.updateField(nvrtcVersionString());
  h.updateField(nvrtcArchFlag(k.arch));
  return h.hexDigest();
}

std::string KernelCache::pathOf(const std::string &key) const {
  if (dir_.empty())
    return "";
  return dir_ + "/" + key.substr(0, 2) + "/" + key + ".cubin";
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  mem_.clear();
}

Expected<std::shared_ptr<const CompiledKernel>>
KernelCache::readEntry(const std::string &path, const std::string &key,
                       const std::string &name, bool &corrupt) {
  corrupt = false;
  const std::string shard = path.substr(0, path.rfind('/'));
  struct stat st;
  if (::lstat(shard.c_str(), &st) != 0)
    return errorf("no entry");
  corrupt = true;
  FP8_RETURN_IF_ERROR(checkTrusted(shard, /*follow=*/false));
  bool missing = false;
  Expected<std::string> file = readRegularFile(path, missing);
  if (!file) {
    corrupt = !missing;
    return file.status();
  }
  const std::string &data = *file;
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, 8) != 0)
    return errorf("bad header");
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i)
    size |= uint64_t(uint8_t(data[8 + i])) << (8 * i);
  if (size != data.size() - kHeader)
    return errorf("truncated: header says ", size, " payload bytes, found ",
                  data.size() - kHeader);
  std::string payload = data.substr(kHeader);
  Sha256 h;
  h.update(payload);
  auto digest = h.digest();
  if (std::memcmp(digest.data(), data.data() + 16, 32) != 0)
    return errorf("checksum mismatch");
  auto k = std::make_shared<CompiledKernel>();
  std::string entryKey;
  if (!deserialize(payload, entryKey, *k))
    return errorf("malformed payload");
  if (entryKey != key)
    return errorf("an entry of key ", entryKey, ", not ", key);
  if (k->name != name)
    return errorf("an entry of kernel '", k->name, "', not '", name, "'");
  corrupt = false;
  return std::shared_ptr<const CompiledKernel>(k);
}

Status KernelCache::writeEntry(const std::string &path, const std::string &key,
                               const CompiledKernel &k) {
  const std::string dir = path.substr(0, path.rfind('/'));
  FP8_RETURN_IF_ERROR(makeDirs(dir));
  FP8_RETURN_IF_ERROR(checkTrusted(dir, /*follow=*/false)
                          .withContext("the kernel cache shard"));
  std::string payload = serialize(key, k);
  Sha256 h;
  h.update(payload);
  auto digest = h.digest();
  std::string data(kMagic, 8);
  uint64_t size = payload.size();
  for (int i = 0; i < 8; ++i)
    data += char(uint8_t(size >> (8 * i)));
  data.append(reinterpret_cast<const char *>(digest.data()), 32);
  data += payload;

  std::random_device rd;
  std::string tmp = dir + "/." + key + "." + std::to_string(getpid()) + "." +
                    std::to_string(rd()) + ".tmp";
  int fd = ::open(tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return errorf("cannot write the kernel cache entry '", tmp,
                  "': ", std::strerror(errno));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return errorf("cannot write the kernel cache entry '", tmp,
                    "': ", std::strerror(err));
    }
    off += size_t(n);
  }
  // Data first on disk, then the name: a crash never leaves a named partial.
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return errorf("cannot rename the kernel cache entry to '", path,
                  "': ", std::strerror(err));
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

Expected<CubinHandle> KernelCache::get(const GeneratedKernel &kernel) {
  FP8_RETURN_IF_ERROR(env::checkEnvironment());
  auto start = std::chrono::steady_clock::now();
  CubinHandle handle;
  handle.key = keyOf(kernel);
  handle.path = pathOf(handle.key);
  std::unique_lock<std::mutex> lock(mutex_);
  if (auto it = mem_.find(handle.key); it != mem_.end()) {
    handle.kernel = it->second;
    handle.origin = CubinOrigin::Memory;
    handle.seconds = since(start);
    return handle;
  }
  if (!handle.path.empty() && !diskUsable())
    handle.path.clear();
  if (!handle.path.empty()) {
    bool corrupt = false;
    auto entry = readEntry(handle.path, handle.key, kernel.name, corrupt);
    if (entry) {
      handle.kernel = *entry;
      handle.origin = CubinOrigin::Disk;
      handle.seconds = since(start);
      mem_[handle.key] = handle.kernel;
      if (env::jitDebug())
        std::fprintf(stderr, "[fp8-jit] %s: disk cache hit %s (%.2f ms)\n",
                     kernel.name.c_str(), handle.path.c_str(),
                     handle.seconds * 1e3);
      return handle;
    }
    if (corrupt)
      std::fprintf(stderr,
                   "[fp8-jit] warning: refused cache entry %s (%s); "
                   "compiling the kernel instead\n",
                   handle.path.c_str(), entry.message().c_str());
  }
  if (auto dir = env::dumpSourceDir(); !dir.empty()) {
    if (makeDirs(dir).isOk()) {
      std::ofstream(dir + "/" + kernel.name + ".cu") << kernel.source;
    }
  }
  // NVRTC runs unlocked, so that threads compile different kernels at
  // once (fp8-tune's candidates); two threads compiling the same kernel
  // both compile it, and the later one's entry replaces the same bytes.
  lock.unlock();
  auto compiled = compileWithNvrtc(kernel);
  lock.lock();
  if (!compiled) {
    Status s = compiled.status();
    if (!handle.path.empty())
      s.withContext("cache entry " + handle.path);
    return s;
  }
  auto k = std::make_shared<const CompiledKernel>(std::move(*compiled));
  if (env::jitDebug())
    std::fprintf(stderr,
                 "[fp8-jit] %s: compiled in %.1f ms (%.1f ms of CPU; %d "
                 "registers, %d bytes spilled, %d bytes stack)\n",
                 kernel.name.c_str(), k->compileSeconds * 1e3,
                 k->compileCpuSeconds * 1e3, k->registers, k->spillBytes,
                 k->stackBytes);
  if (!handle.path.empty()) {
    Status w = writeEntry(handle.path, handle.key, *k);
    if (!w.isOk())
      std::fprintf(stderr, "[fp8-jit] warning: %s\n", w.message().c_str());
  }
  mem_[handle.key] = k;
  handle.kernel = k;
  handle.origin = CubinOrigin::Compiled;
  handle.seconds = since(start);
  return handle;
}

} // namespace fp8
