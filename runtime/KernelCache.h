//===- KernelCache.h - Memory + disk cache of compiled kernels --*- C++ -*-===//
//
// Cubins are looked up in memory, then on disk under $FP8_CACHE_DIR, then
// compiled with NVRTC. The key is the SHA-256 of the source, every device
// header, the NVRTC options, the NVRTC version and the arch. A disk entry is
// written to a temporary file in the same directory, fsynced and renamed, so
// concurrent processes on a cold cache never see a partial kernel.
//
// Trust: the cache loads only what this user compiled. Its directory and
// each shard are created 0700 and must be directories owned by this user
// that neither group nor others can write (else the disk cache is not used,
// with a warning, and kernels are compiled in memory); an entry must be a
// regular file of this user (opened without following links or blocking on
// a FIFO, at most 64 MiB) whose checksum covers its key and kernel name,
// both compared with what is looked up. Any other entry is refused with a
// warning and the kernel compiled (and written) again.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_KERNELCACHE_H
#define FP8_RUNTIME_KERNELCACHE_H

#include "codegen/GeneratedKernel.h"
#include "core/Status.h"
#include "runtime/Nvrtc.h"

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fp8 {

/// Where a cubin came from.
enum class CubinOrigin { Memory, Disk, Compiled };
/// "memory", "disk cache", "compiled".
std::string_view toString(CubinOrigin o);

/// A cached cubin.
struct CubinHandle {
  std::shared_ptr<const CompiledKernel> kernel;
  CubinOrigin origin = CubinOrigin::Compiled;
  double seconds = 0; ///< time this lookup took (compile or disk load)
  std::string key;    ///< cache key (hex SHA-256)
  std::string path;   ///< disk entry ("" when the disk cache is off)
};

/// The JIT cache. Thread-safe.
class KernelCache {
public:
  /// A cache backed by `dir` ("" = memory only).
  explicit KernelCache(std::string dir);
  /// The process-wide cache, backed by env::cacheDir().
  static KernelCache &global();

  /// Returns the cubin for `kernel`, compiling it on a miss.
  Expected<CubinHandle> get(const GeneratedKernel &kernel);
  /// The key of `kernel` (hash of everything that determines the cubin).
  static std::string keyOf(const GeneratedKernel &kernel);
  /// The disk path of a key ("" when the disk cache is off).
  std::string pathOf(const std::string &key) const;
  /// Drops the in-memory entries (the disk stays).
  void clearMemory();
  const std::string &dir() const { return dir_; }

private:
  /// Whether the disk cache may be used: its directory exists (created
  /// 0700) and is trusted; checked once, with a warning when it is not.
  bool diskUsable();
  Expected<std::shared_ptr<const CompiledKernel>>
  readEntry(const std::string &path, const std::string &key,
            const std::string &name, bool &corrupt);
  Status writeEntry(const std::string &path, const std::string &key,
                    const CompiledKernel &k);

  std::string dir_;
  bool diskChecked_ = false, diskTrusted_ = false;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const CompiledKernel>> mem_;
};

} // namespace fp8

#endif // FP8_RUNTIME_KERNELCACHE_H
