//===- CudaEmulatorRuntime.h - Launching kernels on the CPU -----*- C++ -*-===//
//
// The runtime half of the CUDA emulator (CudaEmulator.h): the launch and
// the per-thread state the emulated built-ins read. Included by the test
// that launches kernels; CudaEmulator.h adds the built-ins for the kernels'
// translation units.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TEST_CUDAEMULATORRUNTIME_H
#define FP8_TEST_CUDAEMULATORRUNTIME_H

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cudaemu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A reusable barrier over `count` threads.
class Barrier {
public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned gen = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen != generation_; });
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_, waiting_ = 0;
  unsigned generation_ = 0;
};

/// The CTA being run.
struct Cta {
  explicit Cta(int threads) : barrier(threads), shuffle(size_t(threads)) {
    for (int w = 0; w < (threads + 31) / 32; ++w)
      warps.push_back(
          std::make_unique<Barrier>(std::min(32, threads - 32 * w)));
  }
  Barrier barrier;
  std::vector<std::unique_ptr<Barrier>> warps;
  std::vector<unsigned> shuffle;
  /// Dynamic shared memory: the most an sm_90 CTA may have (227 KiB),
  /// whatever the launch asked for.
  std::unique_ptr<unsigned char[]> dynamicShared{new unsigned char[227 << 10]};
};

inline thread_local Dim3 tIdx, bIdx;
inline thread_local int linear = 0;
inline thread_local Cta *cta = nullptr;
inline Dim3 bDim, gDim;
inline std::mutex atomics;

/// The running CTA's dynamic shared memory (fp8k::dynamic_shared).
inline unsigned char *dynamic_shared() { return cta->dynamicShared.get(); }

/// Runs `kernel()` over `grid` x `block` threads: the threads of one CTA
/// are real threads, which run the CTAs of the grid one after another (a
/// barrier between two CTAs, whose __shared__ statics they reuse).
template <typename F> void launch(Dim3 grid, Dim3 block, F kernel) {
  gDim = grid;
  bDim = block;
  const int threads = int(block.x * block.y * block.z);
  Cta c(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      tIdx = {unsigned(t) % block.x, (unsigned(t) / block.x) % block.y,
              unsigned(t) / (block.x * block.y)};
      linear = t;
      cta = &c;
      for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
          for (unsigned x = 0; x < grid.x; ++x) {
            bIdx = {x, y, z};
            kernel();
            c.barrier.wait();
          }
    });
  for (std::thread &th : pool)
    th.join();
}

} // namespace cudaemu

#endif // FP8_TEST_CUDAEMULATORRUNTIME_H
