// tensor/allocator.cpp - free lists of blocks by size class; see allocator.h.
#include "tensor/allocator.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace seqgrad {
namespace {

constexpr std::align_val_t kAlignment{64};
// Blocks of at least this size are mapped pages of their own (mmap), and unmapped when the
// cache gives them back, so that memory given back really leaves the process. (The C library's
// heap keeps what it is given back, and serves big requests from it too once a big block has
// been freed, so a process's size would only ever grow.)
constexpr size_t kMapBytes = size_t(1) << 16;  // 64 KiB

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

// A block back to the system: unmapped if it was mapped (by its size, see system_allocate).
void system_free(void* p, size_t size) noexcept {
  if (kCaching && size >= kMapBytes) munmap(p, size);
  else ::operator delete(p, kAlignment);
}

// The size class of a request: a multiple of 64 up to 4096, then one of 8 steps between
// consecutive powers of two (4096, 4608, 5120, ..., 7680, 8192, 9216, ...).
size_t size_class(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) / 64 * 64;
  size_t power = 4096;
  while (power * 2 < bytes) power *= 2;  // power < bytes <= 2 power
  const size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

// The blocks of one size class waiting to be reused, and when the class was last touched.
struct FreeList {
  std::vector<void*> blocks;
  uint64_t last_used = 0;  // the cache's clock at the last request or release of this class
};

// The cache's lock. Its critical sections are a few hundred nanoseconds (a map lookup, a push or a
// pop), and with data-parallel shards (nn/optim/data_parallel.h) two threads allocate at once,
// thousands of times a step: a std::mutex that finds the lock taken puts the thread to sleep in
// the kernel and costs microseconds to wake it, so a waiter spins instead, briefly, and only then
// gives its core away.
class SpinLock {
 public:
  void lock() noexcept {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 1000) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
          ++spins;
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

struct Cache {
  SpinLock mutex;
  std::map<size_t, FreeList> free;           // size class -> its free list
  std::unordered_map<void*, size_t> larger;  // blocks lent to a smaller class: their own size
  uint64_t clock = 0;                        // counts requests and releases
  AllocatorStats stats;
};

// Frees cached blocks, from the size class touched longest ago, until in use + cached + `extra`
// fits the limit (AllocatorStats::limit_bytes), or the cache is empty. A training step whose
// shapes repeat needs about its own peak, so it always fits and every request after the first
// step is a hit; a run whose batches change shape would otherwise keep a block of every size
// it ever saw. The caller holds the lock.
void evict(Cache& c, int64_t extra) {
  while (c.stats.cached_bytes > 0 && c.stats.in_use_bytes + c.stats.cached_bytes + extra > c.stats.limit_bytes()) {
    auto oldest = c.free.end();
    for (auto it = c.free.begin(); it != c.free.end(); ++it)
      if (!it->second.blocks.empty() && (oldest == c.free.end() || it->second.last_used < oldest->second.last_used))
        oldest = it;
    if (oldest == c.free.end()) return;
    system_free(oldest->second.blocks.back(), oldest->first);
    oldest->second.blocks.pop_back();
    c.stats.cached_bytes -= static_cast<int64_t>(oldest->first);
    ++c.stats.evictions;
  }
}

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

// A block of `size` bytes (a size class) from the system. When it says no, what the cache
// holds (blocks of other sizes) goes back and it is asked once more.
void* system_allocate(size_t size, size_t bytes) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt == 1) empty_cache();
    if (kCaching && size >= kMapBytes) {  // page-aligned, so 64-byte aligned too
      void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) return p;
      continue;
    }
    try {
      return ::operator new(size, kAlignment);
    } catch (const std::bad_alloc&) {
    }
  }
  throw OutOfMemory("out of memory: cannot allocate " + describe_bytes(bytes) + " for a tensor");
}

// A block of `size` handed out: the bytes in use, and their most at any time.
void use(AllocatorStats& s, size_t size) {
  s.in_use_bytes += static_cast<int64_t>(size);
  if (s.in_use_bytes > s.peak_in_use_bytes) s.peak_in_use_bytes = s.in_use_bytes;
}

}  // namespace

// A thread's own free blocks while a ThreadBlockCache lives on it (allocator.h): by the size
// class they were requested for (a block lent from a larger class keeps being lent; the shared
// cache files it under its own size when the scope ends).
struct ThreadBlocks {
  static constexpr int64_t kMaxBytes = int64_t(64) << 20;
  std::unordered_map<size_t, std::vector<void*>> free;
  int64_t bytes = 0;
};

namespace {
thread_local ThreadBlocks* tls_blocks = nullptr;
}  // namespace

ThreadBlockCache::ThreadBlockCache() : blocks_(kCaching && !tls_blocks ? new ThreadBlocks : nullptr) {
  if (blocks_) tls_blocks = blocks_;
}

ThreadBlockCache::~ThreadBlockCache() {
  if (!blocks_) return;
  tls_blocks = nullptr;  // from here on, releases go to the shared cache
  for (auto& [size, list] : blocks_->free)
    for (void* p : list) release_block(p, size);
  delete blocks_;
}

namespace {

// A block of class `size` from this thread's own, or null.
void* take_thread_block(size_t size) {
  ThreadBlocks* t = tls_blocks;
  if (!t) return nullptr;
  const auto it = t->free.find(size);
  if (it == t->free.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  t->bytes -= static_cast<int64_t>(size);
  return p;
}

// Keeps a released block of class `size` for this thread if it has a ThreadBlockCache with room.
bool keep_thread_block(void* p, size_t size) noexcept {
  ThreadBlocks* t = tls_blocks;
  if (!t || t->bytes + static_cast<int64_t>(size) > ThreadBlocks::kMaxBytes) return false;
  try {
    t->free[size].push_back(p);
  } catch (const std::bad_alloc&) {
    return false;
  }
  t->bytes += static_cast<int64_t>(size);
  return true;
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
    if (void* p = take_thread_block(size)) return p;
    Cache& c = cache();
    std::lock_guard<SpinLock> lock(c.mutex);
    FreeList* list = nullptr;
    try {
      list = &c.free[size];  // may need memory for a map node: then simply no cache this time
      list->last_used = ++c.clock;
    } catch (const std::bad_alloc&) {
    }
    if (list && !list->blocks.empty()) {
      void* p = list->blocks.back();
      list->blocks.pop_back();
      c.stats.cached_bytes -= static_cast<int64_t>(size);
      ++c.stats.hits;
      use(c.stats, size);
      return p;
    }
    // None of this class: a cached block of a larger class will do, if it is at most a quarter
    // bigger, or for mapped blocks at most twice as big. The batches of a real corpus change
    // length from step to step, and so do the sizes of nearly all of a step's tensors.
    const size_t largest = size >= kMapBytes ? 2 * size : size + size / 4;
    for (auto it = c.free.upper_bound(size); it != c.free.end() && it->first <= largest; ++it) {
      if (it->second.blocks.empty()) continue;
      void* p = it->second.blocks.back();
      try {
        c.larger[p] = it->first;  // so that release_block files it under its own size
      } catch (const std::bad_alloc&) {
        break;
      }
      it->second.blocks.pop_back();
      it->second.last_used = c.clock;
      c.stats.cached_bytes -= static_cast<int64_t>(it->first);
      ++c.stats.hits;
      use(c.stats, it->first);
      return p;
    }
    ++c.stats.misses;
    evict(c, static_cast<int64_t>(size));  // a new block: first make room for it
  }
  // (Outside the lock: when the system says no, system_allocate empties the cache.)
  void* p = system_allocate(size, bytes);
  if (kCaching) {
    Cache& c = cache();
    std::lock_guard<SpinLock> lock(c.mutex);
    use(c.stats, size);
  }
  return p;
}

void release_block(void* p, size_t bytes) noexcept {
  if (!p) return;
  size_t size = size_class(bytes == 0 ? 1 : bytes);
  if (kCaching) {
    if (keep_thread_block(p, size)) return;
    Cache& c = cache();
    std::lock_guard<SpinLock> lock(c.mutex);
    if (!c.larger.empty()) {
      const auto it = c.larger.find(p);
      if (it != c.larger.end()) {  // a block of a larger class, lent for this one
        size = it->second;
        c.larger.erase(it);
      }
    }
    c.stats.in_use_bytes -= static_cast<int64_t>(size);
    try {
      FreeList& list = c.free[size];  // may need memory itself (a map node, a longer list) ...
      list.blocks.push_back(p);
      list.last_used = ++c.clock;
      c.stats.cached_bytes += static_cast<int64_t>(size);
      evict(c, 0);  // over the limit: the classes not used for longest go back (maybe this one)
      return;
    } catch (const std::bad_alloc&) {
      // ... and when there is none, the block goes back to the system instead.
    }
  }
  system_free(p, size);
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
  std::lock_guard<SpinLock> lock(c.mutex);
  AllocatorStats s = c.stats;
  s.caching = kCaching;
  return s;
}

void reset_peak_memory_stats() {
  Cache& c = cache();
  std::lock_guard<SpinLock> lock(c.mutex);
  c.stats.peak_in_use_bytes = c.stats.in_use_bytes;
  evict(c, 0);  // the limit follows the peak down
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<SpinLock> lock(c.mutex);
  for (auto& [size, list] : c.free)
    for (void* p : list.blocks) system_free(p, size);
  c.free.clear();
  c.stats.cached_bytes = 0;
}

}  // namespace seqgrad
