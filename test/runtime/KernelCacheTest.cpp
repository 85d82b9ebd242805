//===- KernelCacheTest.cpp - The JIT cache on disk and in memory ----------===//
//
// Needs NVRTC only (no GPU): keys, disk entries, atomic writes under
// concurrent cold-cache compiles, corrupt-entry detection and rebuild.
//
//===----------------------------------------------------------------------===//

#include "runtime/KernelCache.h"
#include "codegen/Sm90Gemm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fp8;

namespace {
GeneratedKernel smallKernel(int blockN = 64) {
  KernelSpec s;
  s.n = 256;
  s.k = 512;
  s.a.granularity = Granularity::block(1, 128);
  s.b.granularity = Granularity::block(128, 128);
  s.tile.blockN = blockN;
  s.tile.stages = 3;
  auto g = emitSm90Gemm(s);
  EXPECT_TRUE(g.isOk()) << g.message();
  return *g;
}

std::string freshDir(const char *tag) {
  std::string tmpl = std::string("/tmp/fp8-cache-test-") + tag + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char *dir = mkdtemp(buf.data());
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "/tmp";
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}
} // namespace

TEST(KernelCache, KeyDependsOnSourceAndIsStable) {
  GeneratedKernel a = smallKernel(64), b = smallKernel(64),
                  c = smallKernel(128);
  EXPECT_EQ(KernelCache::keyOf(a), KernelCache::keyOf(b));
  EXPECT_NE(KernelCache::keyOf(a), KernelCache::keyOf(c));
  EXPECT_EQ(KernelCache::keyOf(a).size(), 64u);
}

TEST(KernelCache, CompilesThenHitsMemoryThenDisk) {
  std::string dir = freshDir("hits");
  KernelCache cache(dir);
  GeneratedKernel k = smallKernel();
  auto first = cache.get(k);
  ASSERT_TRUE(first.isOk()) << first.message();
  EXPECT_EQ(first->origin, CubinOrigin::Compiled);
  EXPECT_FALSE(first->kernel->cubin.empty());
  struct stat st;
  ASSERT_EQ(stat(first->path.c_str(), &st), 0) << first->path;
  auto second = cache.get(k);
  ASSERT_TRUE(second.isOk());
  EXPECT_EQ(second->origin, CubinOrigin::Memory);
  cache.clearMemory();
  auto third = cache.get(k);
  ASSERT_TRUE(third.isOk()) << third.message();
  EXPECT_EQ(third->origin, CubinOrigin::Disk);
  EXPECT_EQ(third->kernel->cubin, first->kernel->cubin);
  EXPECT_EQ(third->kernel->registers, first->kernel->registers);
  // (How fast a disk hit is, against the 5 ms bar, is measured by
  // fp8-bench, not here: under a parallel test load a timed assertion
  // reads 23 ms where fp8-bench reads 1.3 ms on the same GPU host;
  // docs/results/h100-2026-11-22k/README.md.)
}

TEST(KernelCache, TruncatedOrCorruptEntryIsRebuilt) {
  std::string dir = freshDir("corrupt");
  GeneratedKernel k = smallKernel();
  std::string path;
  std::string good;
  {
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    path = h->path;
    good = readFile(path);
  }
  // Truncated file.
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << good.substr(0, good.size() / 2);
  {
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled);
  }
  // The rebuilt entry is whole again: a fresh cache loads it from disk. (Not
  // compared byte for byte with the first: some NVRTC builds do not produce
  // identical cubins twice.)
  {
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Disk);
    EXPECT_GE(readFile(path).size(), good.size() / 2 + 1);
  }
  // Same length, one flipped byte in the payload: the checksum catches it.
  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 0x5A;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << flipped;
  {
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled);
  }
  // Garbage.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not a cubin";
  KernelCache cache(dir);
  auto h = cache.get(k);
  ASSERT_TRUE(h.isOk()) << h.message();
  EXPECT_EQ(h->origin, CubinOrigin::Compiled);
}

TEST(KernelCache, EightProcessesOnOneColdCache) {
  std::string dir = freshDir("procs");
  GeneratedKernel k = smallKernel(96);
  std::vector<pid_t> kids;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      KernelCache cache(dir);
      auto h = cache.get(k);
      // Every process must end with a valid cubin, whoever wrote the entry.
      _exit(h.isOk() && !h->kernel->cubin.empty() ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  // The entry on disk is complete and valid: a fresh cache loads it.
  KernelCache cache(dir);
  auto h = cache.get(k);
  ASSERT_TRUE(h.isOk()) << h.message();
  EXPECT_EQ(h->origin, CubinOrigin::Disk);
  // No temporary files are left behind.
  std::string key = KernelCache::keyOf(k);
  std::string sub = dir + "/" + key.substr(0, 2);
  int leftovers =
      std::system(("ls -A '" + sub + "' | grep -q '\\.tmp$'").c_str());
  EXPECT_NE(leftovers, 0) << "temporary files left in " << sub;
}

TEST(KernelCache, CompileErrorCarriesNameLogAndPath) {
  GeneratedKernel bad = smallKernel();
  bad.source += "\nthis is not C++;\n";
  KernelCache cache(freshDir("err"));
  auto h = cache.get(bad);
  ASSERT_FALSE(h.isOk());
  EXPECT_NE(h.message().find(bad.name), std::string::npos) << h.message();
  EXPECT_NE(h.message().find("error"), std::string::npos) << h.message();
  EXPECT_NE(h.message().find("cache entry"), std::string::npos) << h.message();
}

namespace {
/// Compiles `k` into a cache in `dir` and returns its entry's path.
std::string compiledEntry(const std::string &dir, const GeneratedKernel &k) {
  KernelCache cache(dir);
  auto h = cache.get(k);
  EXPECT_TRUE(h.isOk()) << h.message();
  return h ? h->path : "";
}

/// Copies a file, creating the destination's directory.
void copyFile(const std::string &from, const std::string &to) {
  ::mkdir(to.substr(0, to.rfind('/')).c_str(), 0700);
  std::ofstream(to, std::ios::binary | std::ios::trunc) << readFile(from);
}

/// Another user's uid for chown (the tests that need it run as root, as CI
/// does).
constexpr uid_t kOtherUid = 4242;
} // namespace

// A valid entry of another kernel copied over an entry: its checksum is
// right, but the key and the kernel name it records are not the ones looked
// up, so it is refused and the kernel compiled.
TEST(KernelCache, AValidEntryOfAnotherKernelIsRefused) {
  std::string dir = freshDir("swap");
  GeneratedKernel a = smallKernel(64), b = smallKernel(128);
  const std::string pathA = compiledEntry(dir, a);
  const std::string pathB = KernelCache(dir).pathOf(KernelCache::keyOf(b));
  copyFile(pathA, pathB);
  KernelCache cache(dir);
  auto h = cache.get(b);
  ASSERT_TRUE(h.isOk()) << h.message();
  EXPECT_EQ(h->origin, CubinOrigin::Compiled);
  EXPECT_EQ(h->kernel->name, b.name);
  // The refused entry was replaced by b's own.
  KernelCache again(dir);
  auto h2 = again.get(b);
  ASSERT_TRUE(h2.isOk()) << h2.message();
  EXPECT_EQ(h2->origin, CubinOrigin::Disk);
  EXPECT_EQ(h2->kernel->name, b.name);
}

// The planted-cubin attack: another user prepares the cache directory with
// a well-formed entry (right key, name and checksum: all can be computed)
// holding bytes of their choosing. A directory owned by someone else, or
// one that others may write to, is not used at all; an entry file of
// another user in our own directory is refused.
TEST(KernelCache, APlantedEntryIsNeverLoaded) {
  GeneratedKernel k = smallKernel(64);
  // The "attacker's" entry: a genuine one, so that only trust can refuse it.
  const std::string source = freshDir("plant-src");
  const std::string planted = compiledEntry(source, k);

  // A cache directory that others can write to.
  {
    std::string dir = freshDir("plant-mode");
    copyFile(planted, KernelCache(dir).pathOf(KernelCache::keyOf(k)));
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled);
    EXPECT_EQ(h->path, "") << "the disk cache should be off";
  }
  // A shard that others can write to.
  {
    std::string dir = freshDir("plant-shard");
    const std::string path = KernelCache(dir).pathOf(KernelCache::keyOf(k));
    copyFile(planted, path);
    ASSERT_EQ(::chmod(path.substr(0, path.rfind('/')).c_str(), 0777), 0);
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled);
  }
  if (::geteuid() != 0)
    GTEST_SKIP() << "the ownership cases need root (chown to another uid); "
                    "CI runs as root";
  // A cache directory owned by another user.
  {
    std::string dir = freshDir("plant-owner");
    copyFile(planted, KernelCache(dir).pathOf(KernelCache::keyOf(k)));
    ASSERT_EQ(::chown(dir.c_str(), kOtherUid, kOtherUid), 0);
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled);
    EXPECT_EQ(h->path, "");
  }
  // An entry file of another user inside our own directory.
  {
    std::string dir = freshDir("plant-file");
    const std::string path = KernelCache(dir).pathOf(KernelCache::keyOf(k));
    copyFile(planted, path);
    ASSERT_EQ(::chown(path.c_str(), kOtherUid, kOtherUid), 0);
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled);
  }
}

// Entries that are not regular files neither abort (a directory) nor hang
// (a FIFO) nor are followed (a link): each is refused and the kernel
// compiled.
TEST(KernelCache, SpecialFilesAreRefused) {
  GeneratedKernel k = smallKernel(64);
  const std::string good = compiledEntry(freshDir("special-src"), k);
  for (const char *kind : {"directory", "fifo", "symlink"}) {
    std::string dir = freshDir("special");
    const std::string path = KernelCache(dir).pathOf(KernelCache::keyOf(k));
    ::mkdir(path.substr(0, path.rfind('/')).c_str(), 0700);
    if (std::string(kind) == "directory")
      ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
    else if (std::string(kind) == "fifo")
      ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    else
      ASSERT_EQ(::symlink(good.c_str(), path.c_str()), 0);
    KernelCache cache(dir);
    auto h = cache.get(k);
    ASSERT_TRUE(h.isOk()) << kind << ": " << h.message();
    EXPECT_EQ(h->origin, CubinOrigin::Compiled) << kind;
  }
}
