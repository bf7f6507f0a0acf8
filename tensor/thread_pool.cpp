// tensor/thread_pool.cpp - a persistent pool of workers that wait on a condition variable.
//
// One "job" at a time: the caller publishes a task and a number of chunks, wakes the workers,
// takes chunks itself, and waits until every chunk is done and every worker that joined the
// job has left it. Chunks are handed out through an atomic counter, so a slow thread simply
// takes fewer of them. What this is not: a general task scheduler with futures and queues.
//
// Waiting spins briefly before it sleeps. A worker that has finished a job keeps polling for the
// next one for 0.2 ms, and the caller polls for the workers to finish before it sleeps on the
// condition variable. The first thousand polls are a plain loop with the CPU's "pause" hint
// between them (a few to a few tens of microseconds, depending on the processor); after that
// each poll yields the CPU, so other runnable threads still get the core. Training runs jobs
// back to back, microseconds apart, while a sleep/wake round trip through the kernel costs tens
// of microseconds (more inside a virtual machine): enough to eat the gain of splitting a small
// matmul in two. Even a yield is a system call, and a worker that is inside one when the next
// job arrives joins it late; the pause loop catches most jobs of a training step without one.
//
// The mutex is taken to publish a job, by each worker to join it, by the caller to end it, and
// for errors. The chunk counters are atomics; a worker that finishes a job's last chunk, or is
// the last worker to leave it, takes the mutex only to wake the caller, which may be asleep.
#include "tensor/thread_pool.h"

#include <pthread.h>  // POSIX: pthread_sigmask
#include <signal.h>   // POSIX: sigset_t

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tensor/check.h"

namespace seqgrad {
namespace {

thread_local bool tls_in_parallel = false;

// The processor's hint that this is a spin-wait loop: on x86 it lets the other hardware thread
// of the core run and saves power; elsewhere, nothing.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls done() for up to kSpinTime; true if it became true. The first kPausePolls polls only
// pause; later ones yield the CPU between polls.
constexpr std::chrono::microseconds kSpinTime{200};
constexpr int kPausePolls = 1 << 10;
template <class Done>
bool spin_until(Done done) {
  for (int i = 0; i < kPausePolls; ++i) {
    if (done()) return true;
    cpu_relax();
  }
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 0;; ++i) {
    if (done()) return true;
    if ((i & 15) == 15 && std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
}

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) {
    // Signals sent to the process (Ctrl-C, SIGTERM, SIGHUP) go to a thread that does not block
    // them. Workers start with these blocked (a new thread inherits its creator's mask), which
    // leaves them to the thread that called the library: it can hold them back while it writes
    // a file (io/atomic_file.h) or turn them into a flag.
    sigset_t signals, previous;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, &previous);
    // The system may refuse a thread (a limit on processes or on address space): then the mask
    // comes back and the workers already started are stopped and joined before the error
    // leaves, or the signals would stay blocked and the workers' std::threads would end the
    // program as they are destroyed (a hang only SIGKILL ended, or an abort).
    try {
      for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::exception& e) {
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      const int started = size();
      stop_workers();
      throw std::runtime_error("thread pool: cannot start thread " + std::to_string(started + 1) + " of " +
                               std::to_string(num_threads) + " (" + e.what() +
                               "); ask for fewer threads (--threads, SEQGRAD_THREADS or set_num_threads)");
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  ~ThreadPool() { stop_workers(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(c) for every c in [0, num_chunks) and returns when all have finished.
  void run(int64_t num_chunks, const std::function<void(int64_t)>& task) {
    std::lock_guard<std::mutex> one_job_at_a_time(submit_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      num_chunks_ = num_chunks;
      next_chunk_.store(0);
      chunks_done_.store(0);
      error_ = nullptr;
      generation_.store(generation_.load() + 1);
    }
    wake_.notify_all();
    work_on(task, num_chunks, /*is_caller=*/true);  // the caller is one of the threads
    auto finished = [&] { return chunks_done_.load() == num_chunks && active_workers_.load() == 0; };
    spin_until(finished);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, finished);
    task_ = nullptr;  // a worker waking late must not pick up a finished job
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      auto woken = [&] { return stop_.load() || generation_.load() != seen; };
      spin_until(woken);
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, woken);
      if (stop_.load()) return;
      seen = generation_.load();
      if (task_ == nullptr) continue;  // woke after the job was already finished
      const std::function<void(int64_t)>* task = task_;
      const int64_t num_chunks = num_chunks_;
      active_workers_.fetch_add(1);
      lock.unlock();
      work_on(*task, num_chunks, /*is_caller=*/false);
      if (active_workers_.fetch_sub(1) == 1) wake_caller();
    }
  }

  // The caller may be asleep in run(), waiting for the job to end; the mutex makes sure it is
  // either still to check its condition (and will see the counter just changed) or asleep.
  void wake_caller() {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.notify_all();
  }

  // Takes chunks until none are left. A worker that finishes the last one wakes the caller; the
  // caller itself needs no waking.
  void work_on(const std::function<void(int64_t)>& task, int64_t num_chunks, bool is_caller) {
    tls_in_parallel = true;
    for (int64_t c; (c = next_chunk_.fetch_add(1)) < num_chunks;) {
      try {
        task(c);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      if (chunks_done_.fetch_add(1) + 1 == num_chunks && !is_caller) wake_caller();
    }
    tls_in_parallel = false;
  }

  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // serialises jobs from different user threads
  std::mutex mutex_;         // guards the job's description (task_, num_chunks_, error_) and the waits
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t num_chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  // Atomic: counted without the mutex, and read by the spinning phase of a wait.
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<int> active_workers_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

int threads_from_environment() {
  const char* env = std::getenv("SEQGRAD_THREADS");
  if (env == nullptr || *env == '\0') {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
  }
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  check(*end == '\0' && n >= 1 && n <= kMaxThreads,
        "SEQGRAD_THREADS: expected a whole number from 1 to ", kMaxThreads, ", got '", env, "'");
  return static_cast<int>(n);
}

std::mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool;  // guarded by g_pool_mutex
// The pool's size, 0 before it is made: read without the mutex, because every matrix product
// asks (tensor/gemm_blocked.h), and data-parallel shards (nn/optim/data_parallel.h) ask from
// two threads at once, thousands of times a step.
std::atomic<int> g_pool_size{0};

ThreadPool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) {
    g_pool = std::make_unique<ThreadPool>(threads_from_environment());
    g_pool_size.store(g_pool->size(), std::memory_order_release);
  }
  return *g_pool;
}

}  // namespace

int get_num_threads() {
  const int n = g_pool_size.load(std::memory_order_acquire);
  return n > 0 ? n : pool().size();
}

void set_num_threads(int n) {
  check(n >= 1 && n <= kMaxThreads, "set_num_threads: expected 1 to ", kMaxThreads,
        " threads, got ", n);
  check_state(!tls_in_parallel, "set_num_threads: cannot resize the pool from inside parallel_for");
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_pool && g_pool->size() == n) return;
  g_pool.reset();  // joins the old workers
  g_pool = std::make_unique<ThreadPool>(n);
  g_pool_size.store(n, std::memory_order_release);
}

bool in_parallel_region() { return tls_in_parallel; }

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || tls_in_parallel) return fn(begin, end);
  ThreadPool& p = pool();
  const int64_t chunks = std::min<int64_t>(p.size(), (n + grain - 1) / grain);
  if (chunks <= 1) return fn(begin, end);
  const int64_t chunk_size = (n + chunks - 1) / chunks;
  p.run(chunks, [&](int64_t c) {
    const int64_t b = begin + c * chunk_size;
    const int64_t e = std::min(end, b + chunk_size);
    if (b < e) fn(b, e);
  });
}

void parallel_for(int64_t begin, int64_t end, int64_t grain, void (*fn)(void* ctx, int64_t, int64_t), void* ctx) {
  parallel_for(begin, end, grain, [fn, ctx](int64_t b, int64_t e) { fn(ctx, b, e); });
}

}  // namespace seqgrad
