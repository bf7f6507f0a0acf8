// tests/tensor/test_allocator.cpp - the caching allocator: freed blocks are reused by the next
// request of their size class (or a little smaller), every block is aligned, the cache stays
// within its limit, and it can be emptied.
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tensor/allocator.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("allocator: a freed block serves the next request of its size class") {
  empty_cache();
  const AllocatorStats before = allocator_stats();
  void* a = allocate_block(100000);
  release_block(a, 100000);
  void* b = allocate_block(99000);  // same class: 100000 and 99000 both round up to 102400
  const AllocatorStats after = allocator_stats();
  if (after.caching) {
    CHECK(b == a);
    CHECK(after.hits == before.hits + 1);
  } else {  // under AddressSanitizer nothing is cached, so use-after-free is still caught
    CHECK(after.hits == before.hits);
  }
  release_block(b, 99000);
  void* c = allocate_block(200000);  // a different class: never the 100000-byte block
  if (after.caching) CHECK(c != a);
  release_block(c, 200000);
  empty_cache();
  CHECK(allocator_stats().cached_bytes == 0);
}

TEST_CASE("allocator: every block is 64-byte aligned, including tiny and odd sizes") {
  for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(65), size_t(4097), size_t(1000003)}) {
    CAPTURE(bytes);
    void* p = allocate_block(bytes);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    release_block(p, bytes);
  }
}

TEST_CASE("allocator: tensors freed in a loop stop missing the cache after the first round") {
  auto round = [] {
    Tensor a = randn({64, 128}), b = randn({64, 128});
    Tensor c = a + b;
    return c.numel();
  };
  round();
  const AllocatorStats first = allocator_stats();
  for (int i = 0; i < 5; ++i) round();
  const AllocatorStats later = allocator_stats();
  if (later.caching) CHECK(later.misses == first.misses);
}

TEST_CASE("running out of memory is an exception that says how much, and releasing never throws") {
  static_assert(noexcept(release_block(nullptr, 0)), "release_block runs in destructors: it must not throw");
  if (!allocator_stats().caching) {
    MESSAGE("skipped under AddressSanitizer: it stops the process on an impossible request by default");
    return;
  }
  // More than any machine has: the system says no twice (before and after the cache is emptied).
  const size_t huge = size_t(1) << 60;
  CHECK_THROWS_WITH_AS(allocate_block(huge), "out of memory: cannot allocate 1152921504.6 GB (1152921504606846976 bytes) for a tensor",
                       OutOfMemory);
  CHECK_THROWS_AS(allocate_block(huge), std::bad_alloc);  // what code that catches bad_alloc expects
  CHECK_THROWS_WITH_AS(zeros({int64_t(1) << 40, int64_t(1) << 22}),
                       "out of memory: cannot allocate 4611686018427387904 elements for a tensor",
                       OutOfMemory);
}

TEST_CASE("AllocationBudget refuses to hand out more than its bytes while it lives") {
  {
    const AllocationBudget budget(1 << 20, "building the model");
    const Tensor small = zeros({100, 100});  // 40 kB: within the budget
    CHECK_THROWS_WITH_AS(zeros({1000, 1000}), "building the model: needs more than 1.0 MB (1048576 bytes)",
                         std::runtime_error);
  }
  const Tensor after = zeros({1000, 1000});  // no budget any more
  CHECK(after.numel() == 1000000);
}

TEST_CASE("AllocationBudget: budgets nest, and another thread is not limited") {
  const AllocationBudget outer(1 << 22, "outer");
  {
    const AllocationBudget inner(1 << 16, "inner");
    CHECK_THROWS_WITH_AS(zeros({100, 1000}), "inner: needs more than 65536 bytes", std::runtime_error);
  }
  const Tensor fits = zeros({100, 1000});  // 400 kB: the outer budget again
  std::string other;
  std::thread([&] {
    try {
      zeros({2000, 1000});  // 8 MB, past the outer budget, but on a thread with no budget
    } catch (const std::exception& e) {
      other = e.what();
    }
  }).join();
  CHECK(other.empty());
  CHECK_THROWS_WITH_AS(zeros({2000, 1000}), "outer: needs more than 4.2 MB (4194304 bytes)", std::runtime_error);
}

// A run whose batches change shape asks for new sizes at every step. The cache keeps at most
// what in use plus cached may reach (AllocatorStats::limit_bytes): beyond it, the sizes not
// asked for the longest go back to the system. The blocks here are never written, so their
// pages are never touched and cost no memory.
TEST_CASE("allocator: in use plus cached never exceeds the limit, whatever sizes come and go") {
  if (!allocator_stats().caching) {
    MESSAGE("skipped under AddressSanitizer: nothing is cached");
    return;
  }
  empty_cache();
  reset_peak_memory_stats();
  const int64_t evictions_before = allocator_stats().evictions;
  auto within_limit = [] {
    const AllocatorStats s = allocator_stats();
    return s.in_use_bytes + s.cached_bytes <= s.limit_bytes();
  };
  const size_t MB = size_t(1) << 20;
  // Twelve "steps", each with six blocks of a size of its own, larger at every step, so that no
  // step can reuse an earlier step's blocks (the cache lends a block only to a smaller request).
  // Cached, they would add up to 540 MiB; the limit is 9/8 of the 78 MiB peak plus 32 MiB.
  for (int step = 0; step < 12; ++step) {
    const size_t size = (2 + static_cast<size_t>(step)) * MB;
    std::vector<void*> blocks;
    for (int i = 0; i < 6; ++i) {
      blocks.push_back(allocate_block(size));
      CHECK(within_limit());
    }
    for (void* p : blocks) {
      release_block(p, size);
      CHECK(within_limit());
    }
  }
  const AllocatorStats s = allocator_stats();
  CHECK(s.evictions > evictions_before);  // the old sizes went back
  CHECK(s.cached_bytes <= s.limit_bytes() - s.in_use_bytes);
  // A size asked for again is served from the cache.
  empty_cache();
  void* a = allocate_block(3 * MB);
  release_block(a, 3 * MB);
  const int64_t hits = allocator_stats().hits;
  void* b = allocate_block(3 * MB);
  CHECK(allocator_stats().hits == hits + 1);
  CHECK(b == a);
  release_block(b, 3 * MB);
  empty_cache();
}

// What a training step on a corpus of many lengths asks for: for a batch of length L, a few
// blocks of each of three sizes that grow with it (activations ~ L, attention weights ~ L^2,
// small per-row statistics, below the 64 KiB of mapped blocks), made in order and released in
// reverse, as forward and backward do; L changes every step, up and down. Whatever is lent or
// given back, in use plus cached stays within the limit at every request and every release.
TEST_CASE("allocator: the cache stays within its limit on steps whose lengths change") {
  if (!allocator_stats().caching) {
    MESSAGE("skipped under AddressSanitizer: nothing is cached");
    return;
  }
  empty_cache();
  reset_peak_memory_stats();
  const AllocatorStats before = allocator_stats();
  auto within_limit = [] {
    const AllocatorStats s = allocator_stats();
    return s.in_use_bytes + s.cached_bytes <= s.limit_bytes();
  };
  uint32_t x = 1;  // lengths from a fixed linear congruential sequence: 2 .. 21
  auto next_length = [&x] {
    x = 1103515245u * x + 12345u;
    return 2 + static_cast<size_t>((x >> 16) % 20);
  };
  bool ok = true;  // one CHECK at the end: thousands of passing assertions say nothing more
  for (int step = 0; step < 60; ++step) {
    const size_t L = next_length();
    const size_t sizes[3] = {L * (size_t(1) << 17), L * L * (size_t(1) << 12), L * 512};
    std::vector<std::pair<void*, size_t>> blocks;
    for (int i = 0; i < 4; ++i)
      for (size_t size : sizes) {
        blocks.emplace_back(allocate_block(size), size);
        ok = ok && within_limit();
      }
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      release_block(it->first, it->second);
      ok = ok && within_limit();
    }
  }
  CHECK(ok);
  const AllocatorStats s = allocator_stats();
  CHECK(s.in_use_bytes == before.in_use_bytes);
  CHECK(s.hits - before.hits > s.misses - before.misses);  // and still, most requests hit
  empty_cache();
}

TEST_CASE("allocator: a block a little larger serves a request when its own size has none") {
  if (!allocator_stats().caching) {
    MESSAGE("skipped under AddressSanitizer: nothing is cached");
    return;
  }
  empty_cache();
  const size_t MB = size_t(1) << 20;
  void* big = allocate_block(3 * MB);
  release_block(big, 3 * MB);
  void* smaller = allocate_block(2 * MB);  // no 2 MiB block cached: the 3 MiB one, at most twice as big
  CHECK(smaller == big);
  release_block(smaller, 2 * MB);  // filed back under its own size, 3 MiB
  CHECK(allocator_stats().cached_bytes == static_cast<int64_t>(3 * MB));
  void* tiny = allocate_block(MB / 2);  // more than twice smaller: a block of its own
  CHECK(tiny != big);
  release_block(tiny, MB / 2);
  empty_cache();
}

TEST_CASE("ThreadBlockCache: a thread reuses the blocks it frees without the shared cache, which gets them at the end") {
  if (!allocator_stats().caching) {
    MESSAGE("skipped under AddressSanitizer: nothing is cached");
    return;
  }
  empty_cache();
  void* lent = nullptr;
  {
    const ThreadBlockCache own;
    void* a = allocate_block(5000);
    const AllocatorStats before = allocator_stats();
    release_block(a, 5000);  // kept for this thread: still counted in use, not in the shared cache
    CHECK(allocator_stats().cached_bytes == before.cached_bytes);
    CHECK(allocator_stats().in_use_bytes == before.in_use_bytes);
    {
      const ThreadBlockCache nested;  // the outer scope keeps the blocks
      void* b = allocate_block(4900);  // the same size class (5120 bytes)
      CHECK(b == a);
      CHECK(allocator_stats().hits == before.hits);  // the shared cache was not asked
      release_block(b, 4900);
    }
    // Another thread does not see this thread's blocks.
    std::thread([&] { lent = allocate_block(5000); }).join();
    CHECK(lent != a);
  }
  // The scope has ended: the block is in the shared cache, and no longer in use.
  const AllocatorStats after = allocator_stats();
  CHECK(after.cached_bytes >= 5120);
  void* again = allocate_block(5000);
  CHECK(allocator_stats().hits == after.hits + 1);
  release_block(again, 5000);
  release_block(lent, 5000);
  empty_cache();
  CHECK(allocator_stats().cached_bytes == 0);
}
