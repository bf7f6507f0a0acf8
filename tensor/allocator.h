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
// The cache is bounded (kMaxCachedBytes); beyond it, freed blocks go straight back. Under
// AddressSanitizer blocks are never cached, so that reading freed memory is still caught.
// Every block is 64-byte aligned. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace seqgrad {

void* allocate_block(size_t bytes);          // at least `bytes`, 64-byte aligned, never null
void release_block(void* p, size_t bytes);   // `bytes` as passed to allocate_block

struct AllocatorStats {
  bool caching = true;           // false under AddressSanitizer
  int64_t hits = 0, misses = 0;  // requests served from the cache / from the system
  int64_t cached_bytes = 0;      // held in free lists right now
};
AllocatorStats allocator_stats();
// Return every cached block to the system (as torch.cuda.empty_cache()).
void empty_cache();

}  // namespace seqgrad
