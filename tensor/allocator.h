// tensor/allocator.h - the caching allocator behind every Tensor's storage.
//
// A training step allocates the same few hundred buffers every time: activations, gradients,
// temporaries, freed again by the end of the step. Handing each one back to the C library
// and asking again costs more than the malloc call: large blocks go back to the operating
// system, and the next request gets fresh pages that the kernel must fault in and zero, one
// 4 KB page at a time. So freed blocks are kept on free lists by size class and handed out
// again (PyTorch's CUDA allocator does the same for GPU memory). Sizes are rounded up to a
// class: multiples of 64 bytes up to 4 KB, then 8 classes per power of two, so a block is at
// most 12.5% bigger than asked for and the next step's request of the same size always fits.
//
// The cache is bounded by what is in use: whenever a block is released or a new one is made,
// cached blocks go back to the system until in use plus cached is at most the most ever in use
// at once plus an eighth, plus 32 MiB; the size classes not asked for the longest go first. A
// training loop of fixed shapes fits and always hits;
// one whose batches change length (a real corpus) no longer keeps a block of every size it
// ever met. A request whose own class has no block may take a cached block up to a quarter
// bigger (twice as big from 64 KiB up), since a new batch length changes every size a little.
// Blocks from 64 KiB up are pages mapped for them alone, so what goes back leaves the process.
// Under AddressSanitizer blocks are never cached, so reading freed memory is still caught.
// Every block is 64-byte aligned. Thread-safe. Running out of memory is an exception that says
// how much was asked (OutOfMemory), never an abort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

namespace seqgrad {

// At least `bytes`, 64-byte aligned, never null. When the system has no more memory, the cache
// is emptied and the request tried again; if it still fails, OutOfMemory says how much was asked.
void* allocate_block(size_t bytes);
// `bytes` as passed to allocate_block. Never throws (it runs in destructors, also while an
// exception unwinds): if the cache cannot take the block, it goes back to the system.
void release_block(void* p, size_t bytes) noexcept;

// What allocate_block throws when memory runs out: still a std::bad_alloc, so code that catches
// those keeps working, but what() says how much was asked:
//   "out of memory: cannot allocate 1.9 GB (2000000000 bytes) for a tensor"
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// While it lives, allocate_block hands out at most `bytes` in all to this thread (counted from
// its start; other threads are not limited) and beyond that throws std::runtime_error("<what>:
// needs more than N bytes"). Budgets nest: the innermost one applies, then the one before.
// For building something from an untrusted description: a checkpoint whose configuration asks
// for a model far larger than the tensors in the file is refused before memory runs out.
struct BudgetState;  // allocator.cpp: bytes used so far, the limit, the message
class AllocationBudget {
 public:
  AllocationBudget(int64_t bytes, std::string what);
  ~AllocationBudget();
  AllocationBudget(const AllocationBudget&) = delete;
  AllocationBudget& operator=(const AllocationBudget&) = delete;

 private:
  BudgetState* state_;
  BudgetState* previous_;  // the budget in force before this one, or nullptr
};

// While it lives, the blocks this thread releases are kept for this thread's next requests of
// the same size class, without the cache's lock, and go to the shared cache when it ends (up to
// 64 MiB of them; more go to the shared cache at once). For threads that allocate at the same
// time, thousands of times a step: data-parallel shards (nn/optim/data_parallel.h), each of
// which would otherwise wait for the other at every tensor it makes and frees. While kept, a
// block counts as in use in allocator_stats(). Scopes nest; the outermost one keeps the blocks.
struct ThreadBlocks;  // allocator.cpp
class ThreadBlockCache {
 public:
  ThreadBlockCache();
  ~ThreadBlockCache();
  ThreadBlockCache(const ThreadBlockCache&) = delete;
  ThreadBlockCache& operator=(const ThreadBlockCache&) = delete;

 private:
  ThreadBlocks* blocks_;  // null for a nested scope
};

struct AllocatorStats {
  bool caching = true;            // false under AddressSanitizer
  int64_t hits = 0, misses = 0;   // requests served from the cache / from the system
  int64_t evictions = 0;          // cached blocks given back to the system to stay in the limit
  int64_t cached_bytes = 0;       // held in free lists right now
  int64_t in_use_bytes = 0;       // handed out and not yet released (size classes)
  int64_t peak_in_use_bytes = 0;  // the most in use at any one time so far
  // What in use + cached may reach: peak_in_use * 9/8 + 32 MiB (caching builds only).
  int64_t limit_bytes() const { return peak_in_use_bytes + peak_in_use_bytes / 8 + (int64_t(32) << 20); }
};
AllocatorStats allocator_stats();
// Return every cached block to the system (as torch.cuda.empty_cache()).
void empty_cache();
// Start counting the peak again from what is in use now (as torch.cuda.reset_peak_memory_stats()):
// the cache's limit follows.
void reset_peak_memory_stats();

}  // namespace seqgrad
