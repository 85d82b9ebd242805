//===- KernelCache.cpp - Memory + disk cache of compiled kernels ----------===//

#include "runtime/KernelCache.h"
#include "runtime/Env.h"
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

namespace {
constexpr char kMagic[8] = {'F', 'P', '8', 'C', 'U', 'B', 'N', '1'};
constexpr size_t kHeader = 8 + 8 + 32; // magic, payload size, SHA-256

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
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return errorf("cannot create the kernel cache directory '", cur,
                    "': ", std::strerror(errno),
                    " (set FP8_CACHE_DIR to a writable directory, or to "
                    "'off')");
  }
  return Status::ok();
}

/// payload = "name=<n>\nregisters=<r>\nspill=<s>\nstack=<t>\n\n" + cubin
std::string serialize(const CompiledKernel &k) {
  std::ostringstream os;
  os << "name=" << k.name << "\nregisters=" << k.registers
     << "\nspill=" << k.spillBytes << "\nstack=" << k.stackBytes << "\n\n";
  std::string s = os.str();
  s.append(k.cubin.data(), k.cubin.size());
  return s;
}

bool deserialize(const std::string &payload, CompiledKernel &k) {
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
    if (key == "name")
      k.name = val;
    else if (key == "registers")
      k.registers = std::atoi(val.c_str());
    else if (key == "spill")
      k.spillBytes = std::atoi(val.c_str());
    else if (key == "stack")
      k.stackBytes = std::atoi(val.c_str());
  }
  k.cubin.assign(payload.begin() + end + 2, payload.end());
  return !k.cubin.empty() && !k.name.empty();
}
} // namespace

KernelCache::KernelCache(std::string dir) : dir_(std::move(dir)) {}

KernelCache &KernelCache::global() {
  static KernelCache cache(env::cacheDir());
  return cache;
}

std::string KernelCache::keyOf(const GeneratedKernel &k) {
  Sha256 h;
  h.updateField("fp8-jit-cache-v1");
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
                       bool &corrupt) {
  corrupt = false;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return errorf("no entry");
  std::string data((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  corrupt = true;
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
  if (!deserialize(payload, *k))
    return errorf("malformed payload");
  (void)key;
  corrupt = false;
  return std::shared_ptr<const CompiledKernel>(k);
}

Status KernelCache::writeEntry(const std::string &path, const std::string &key,
                               const CompiledKernel &k) {
  const std::string dir = path.substr(0, path.rfind('/'));
  FP8_RETURN_IF_ERROR(makeDirs(dir));
  std::string payload = serialize(k);
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
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
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
  auto start = std::chrono::steady_clock::now();
  CubinHandle handle;
  handle.key = keyOf(kernel);
  handle.path = pathOf(handle.key);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = mem_.find(handle.key); it != mem_.end()) {
    handle.kernel = it->second;
    handle.origin = CubinOrigin::Memory;
    handle.seconds = since(start);
    return handle;
  }
  if (!handle.path.empty()) {
    bool corrupt = false;
    auto entry = readEntry(handle.path, handle.key, corrupt);
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
                   "[fp8-jit] warning: corrupt cache entry %s (%s); "
                   "rebuilding it\n",
                   handle.path.c_str(), entry.message().c_str());
  }
  if (auto dir = env::dumpSourceDir(); !dir.empty()) {
    if (makeDirs(dir).isOk()) {
      std::ofstream(dir + "/" + kernel.name + ".cu") << kernel.source;
    }
  }
  auto compiled = compileWithNvrtc(kernel);
  if (!compiled) {
    Status s = compiled.status();
    if (!handle.path.empty())
      s.withContext("cache entry " + handle.path);
    return s;
  }
  auto k = std::make_shared<const CompiledKernel>(std::move(*compiled));
  if (env::jitDebug())
    std::fprintf(stderr,
                 "[fp8-jit] %s: compiled in %.1f ms (%d registers, %d bytes "
                 "spilled, %d bytes stack)\n",
                 kernel.name.c_str(), k->compileSeconds * 1e3, k->registers,
                 k->spillBytes, k->stackBytes);
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
