//===- Parallel.cpp - A small thread pool for the CPU oracle --------------===//

#include "numerics/Parallel.h"

#include "core/Env.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fp8::numerics {

namespace {

thread_local bool tInsideParallelFor = false;

int threadsFromEnvironment() {
  if (int n = env::oracleThreads())
    return n;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : int(hw);
}

/// One parallelFor in flight: ranges are claimed through `next`.
struct Job {
  int64_t n = 0;
  int64_t grain = 1;
  const std::function<void(int64_t, int64_t)> *fn = nullptr;
  std::atomic<int64_t> next{0};
  std::atomic<int> active{0};

  void run() {
    for (;;) {
      int64_t begin = next.fetch_add(grain);
      if (begin >= n)
        return;
      (*fn)(begin, std::min(n, begin + grain));
    }
  }
};

/// Workers wait for a job, help drain it, and go back to waiting. One job at
/// a time: callers from different threads queue on `submit`.
class Pool {
public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i)
      threads_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto &t : threads_)
      t.join();
  }

  void run(Job &job) {
    std::lock_guard<std::mutex> serialize(submit_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    tInsideParallelFor = true;
    job.run();
    tInsideParallelFor = false;
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr; // late workers will not pick it up
    done_.wait(lock, [&] { return job.active.load() == 0; });
  }

private:
  void loop() {
    tInsideParallelFor = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      Job *job = job_;
      if (!job)
        continue;
      job->active.fetch_add(1);
      lock.unlock();
      job->run();
      lock.lock();
      if (job->active.fetch_sub(1) == 1)
        done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex submit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job *job_ = nullptr;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool &pool() {
  static Pool p(numThreads() - 1);
  return p;
}

} // namespace

int numThreads() {
  static const int n = threadsFromEnvironment();
  return n;
}

void parallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  if (tInsideParallelFor || numThreads() == 1 || n <= grain) {
    for (int64_t b = 0; b < n; b += grain)
      fn(b, std::min(n, b + grain));
    return;
  }
  Job job;
  job.n = n;
  job.grain = grain;
  job.fn = &fn;
  pool().run(job);
}

} // namespace fp8::numerics
