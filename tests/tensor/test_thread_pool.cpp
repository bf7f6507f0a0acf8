// tests/tensor/test_thread_pool.cpp - parallel_for's contract.
//
// Every index is visited exactly once, whatever the pool size and grain; an exception in a
// chunk reaches the caller and leaves the pool usable; a parallel_for inside a chunk runs
// inline; the pool can be resized; thousands of tiny jobs in a row (the pattern of an RNN
// step) and jobs from several user threads at once neither deadlock nor race. The file is
// also meant to be run under ThreadSanitizer.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tensor/thread_pool.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::ThreadCount;

TEST_CASE("parallel_for: covers every index exactly once") {
  for (int threads : {1, 2, 3, 4}) {
    ThreadCount tc(threads);
    for (int64_t n : {1, 2, 3, 7, 64, 1000, 4097})
      for (int64_t grain : {1, 2, 5, 100, 10000}) {
        CAPTURE(threads);
        CAPTURE(n);
        CAPTURE(grain);
        const int64_t begin = 5, end = begin + n;
        std::vector<std::atomic<int>> hits(static_cast<size_t>(end));
        std::atomic<bool> bad_chunk{false};
        parallel_for(begin, end, grain, [&](int64_t b, int64_t e) {
          if (!(begin <= b && b < e && e <= end)) bad_chunk = true;
          for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        CHECK_FALSE(bad_chunk.load());
        int64_t wrong = 0;
        for (int64_t i = 0; i < end; ++i) wrong += hits[i].load() != (i >= begin ? 1 : 0);
        CHECK(wrong == 0);
      }
  }
}

TEST_CASE("parallel_for: empty ranges and small ranges") {
  ThreadCount tc(3);
  int calls = 0;
  parallel_for(10, 10, 1, [&](int64_t, int64_t) { ++calls; });
  parallel_for(10, 3, 1, [&](int64_t, int64_t) { ++calls; });
  CHECK(calls == 0);
  // A range no longer than the grain is one call, on the calling thread.
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id ran_on;
  int64_t got_b = -1, got_e = -1;
  parallel_for(0, 50, 64, [&](int64_t b, int64_t e) {
    ++calls;
    got_b = b;
    got_e = e;
    ran_on = std::this_thread::get_id();
  });
  CHECK(calls == 1);
  CHECK(got_b == 0);
  CHECK(got_e == 50);
  const bool on_caller = ran_on == me;
  CHECK(on_caller);
}

TEST_CASE("parallel_for: at most one chunk per thread, and the chunks run concurrently") {
  ThreadCount tc(2);
  std::atomic<int> chunks{0}, arrived{0};
  std::atomic<bool> met{true};
  parallel_for(0, 1000, 1, [&](int64_t, int64_t) {
    ++chunks;
    // Each chunk waits (bounded) for the other: only possible if two threads run them.
    ++arrived;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < 2)
      if (std::chrono::steady_clock::now() > deadline) {
        met = false;
        break;
      }
  });
  CHECK(chunks.load() == 2);
  CHECK(met.load());
}

TEST_CASE("parallel_for: an exception in a chunk reaches the caller") {
  ThreadCount tc(3);
  std::atomic<int64_t> sum{0};
  CHECK_THROWS_WITH_AS(parallel_for(0, 300, 1,
                                    [&](int64_t b, int64_t e) {
                                      for (int64_t i = b; i < e; ++i) {
                                        if (i == 150) throw std::runtime_error("chunk failed at 150");
                                        sum += i;
                                      }
                                    }),
                       "chunk failed at 150", std::runtime_error);
  // The pool is still usable afterwards.
  sum = 0;
  parallel_for(0, 300, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum.load() == 299 * 300 / 2);
  // Every chunk throwing still gives exactly one exception.
  CHECK_THROWS_AS(parallel_for(0, 300, 1, [](int64_t, int64_t) { throw std::out_of_range("x"); }),
                  std::out_of_range);
}

TEST_CASE("parallel_for: nested calls run inline on the calling thread") {
  ThreadCount tc(2);
  CHECK_FALSE(in_parallel_region());
  std::atomic<int> outer_chunks{0}, nested_ok{0}, nested_bad{0};
  parallel_for(0, 2, 1, [&](int64_t b, int64_t e) {
    ++outer_chunks;
    if (!in_parallel_region()) ++nested_bad;
    const std::thread::id me = std::this_thread::get_id();
    int inner_calls = 0;
    parallel_for(0, 1000, 1, [&](int64_t ib, int64_t ie) {
      ++inner_calls;
      if (ib != 0 || ie != 1000 || std::this_thread::get_id() != me) ++nested_bad;
    });
    if (inner_calls == 1) ++nested_ok;
    (void)b;
    (void)e;
  });
  CHECK(outer_chunks.load() == 2);
  CHECK(nested_ok.load() == 2);
  CHECK(nested_bad.load() == 0);
  CHECK_FALSE(in_parallel_region());
}

TEST_CASE("set_num_threads: resizes the pool and rejects bad sizes") {
  const int saved = get_num_threads();
  for (int n : {1, 3, 2, 5}) {
    set_num_threads(n);
    CHECK(get_num_threads() == n);
    std::atomic<int> chunks{0};
    parallel_for(0, 100, 1, [&](int64_t, int64_t) { ++chunks; });
    CHECK(chunks.load() == n);
  }
  CHECK_THROWS_WITH_AS(set_num_threads(0), "set_num_threads: expected 1 to 256 threads, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(set_num_threads(257), "set_num_threads: expected 1 to 256 threads, got 257",
                       std::invalid_argument);
  set_num_threads(2);
  CHECK_THROWS_WITH_AS(parallel_for(0, 2, 1, [](int64_t, int64_t) { set_num_threads(1); }),
                       "set_num_threads: cannot resize the pool from inside parallel_for",
                       std::runtime_error);
  CHECK(get_num_threads() == 2);
  set_num_threads(saved);
  CHECK(get_num_threads() == saved);
}

TEST_CASE("parallel_for: many small jobs in a row do not deadlock") {
  for (int threads : {2, 3}) {
    ThreadCount tc(threads);
    int64_t total = 0;
    for (int job = 0; job < 20000; ++job) {
      std::atomic<int64_t> sum{0};
      parallel_for(0, 4, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) sum += i;
      });
      total += sum.load();
    }
    CHECK(total == 20000 * 6);
  }
}

TEST_CASE("parallel_for: jobs from several user threads at once") {
  ThreadCount tc(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 3; ++u)
    users.emplace_back([&] {
      for (int job = 0; job < 500; ++job)
        parallel_for(0, 64, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) total += i;
        });
    });
  for (std::thread& t : users) t.join();
  CHECK(total.load() == 3 * 500 * (63 * 64 / 2));
}
