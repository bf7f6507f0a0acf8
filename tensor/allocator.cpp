// tensor/allocator.cpp - free lists of blocks by size class; see allocator.h.
#include "tensor/allocator.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace seqgrad {
namespace {

constexpr std::align_val_t kAlignment{64};
constexpr int64_t kMaxCachedBytes = int64_t(1) << 30;  // 1 GiB

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCaching = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif
#else
constexpr bool kCaching = true;
#endif

// The size class of a request: a multiple of 64 up to 4096, then one of 8 steps between
// consecutive powers of two (4096, 4608, 5120, ..., 7680, 8192, 9216, ...).
size_t size_class(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) / 64 * 64;
  size_t power = 4096;
  while (power * 2 < bytes) power *= 2;  // power < bytes <= 2 power
  const size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

struct Cache {
  std::mutex mutex;
  std::map<size_t, std::vector<void*>> free;  // size class -> blocks of that size
  AllocatorStats stats;
};

}  // namespace

struct BudgetState {
  int64_t used = 0, limit = 0;
  std::string what;
};

namespace {

// The AllocationBudget in force on this thread (none: nullptr).
thread_local BudgetState* current_budget = nullptr;

// "1.9 GB (2000000000 bytes)", for messages.
std::string describe_bytes(size_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB (%zu bytes)", b / 1e9, bytes);
  else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.1f MB (%zu bytes)", b / 1e6, bytes);
  else std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  return buf;
}

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may be freed during static destruction
  return *c;
}

}  // namespace

void* allocate_block(size_t bytes) {
  const size_t size = size_class(bytes == 0 ? 1 : bytes);
  if (BudgetState* b = current_budget) {
    b->used += static_cast<int64_t>(size);
    if (b->used > b->limit)
      throw std::runtime_error(b->what + ": needs more than " + describe_bytes(static_cast<size_t>(b->limit)));
  }
  if (kCaching) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free.find(size);
    if (it != c.free.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.stats.cached_bytes -= static_cast<int64_t>(size);
      ++c.stats.hits;
      return p;
    }
    ++c.stats.misses;
  }
  try {
    return ::operator new(size, kAlignment);
  } catch (const std::bad_alloc&) {
  }
  // The system said no: give back what the cache holds (blocks of other sizes) and ask again.
  empty_cache();
  try {
    return ::operator new(size, kAlignment);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("out of memory: cannot allocate " + describe_bytes(bytes) + " for a tensor");
  }
}

void release_block(void* p, size_t bytes) noexcept {
  if (!p) return;
  const size_t size = size_class(bytes == 0 ? 1 : bytes);
  if (kCaching) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.stats.cached_bytes + static_cast<int64_t>(size) <= kMaxCachedBytes) {
      try {
        c.free[size].push_back(p);  // may need memory itself (a map node, a longer list) ...
        c.stats.cached_bytes += static_cast<int64_t>(size);
        return;
      } catch (const std::bad_alloc&) {
        // ... and when there is none, the block goes back to the system instead.
      }
    }
  }
  ::operator delete(p, kAlignment);
}

AllocationBudget::AllocationBudget(int64_t bytes, std::string what)
    : state_(new BudgetState{0, bytes, std::move(what)}), previous_(current_budget) {
  current_budget = state_;
}

AllocationBudget::~AllocationBudget() {
  current_budget = previous_;
  delete state_;
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  AllocatorStats s = c.stats;
  s.caching = kCaching;
  return s;
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [size, blocks] : c.free)
    for (void* p : blocks) ::operator delete(p, kAlignment);
  c.free.clear();
  c.stats.cached_bytes = 0;
}

}  // namespace seqgrad
