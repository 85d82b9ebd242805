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
  // (How fast a disk hit is, against the 5 ms, is measured by
  // fp8-bench, not here: a timed assertion failed at 23 ms on the loaded
  // GPU host while fp8-bench read 1.3 ms there, eleventh session.)
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
