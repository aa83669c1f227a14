// The slab behind SlabAllocator.
//
//  - A Heap belongs to one thread at a time. Per size class (64-byte steps
//    up to 1,024) it has a free list only the owner touches and a remote
//    list that other threads push freed blocks onto; blocks of every class
//    are carved from the heap's current chunk.
//  - A chunk (2 MiB, aligned to its size) starts with the Heap that owns
//    it, so a freed block finds its owner by masking its address. Chunks
//    are not asked for huge pages (MADV_HUGEPAGE): where the system's
//    default is "madvise", a fault in such a region compacts memory on the
//    spot when no huge page is free, which made a million spawns 2 to 3
//    times slower than 4 KiB faults once other programs had fragmented the
//    memory (and faster only on a machine that had just freed some).
//  - The remote list is a stack that only grows by single pushes and is
//    only ever taken whole, by the owner, so it has no ABA problem. The
//    push (release) and the take (acquire) order whatever the freeing
//    thread did to the block before the next owner of it.
//  - Heaps are never destroyed: a block may be freed at any time, even
//    during static destruction. A thread that ends leaves its heap to the
//    next thread that needs one.
#include "pollux/core/slab.hpp"

#include <array>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

namespace {

std::size_t block_size(std::size_t cls) noexcept { return (cls + 1) * kSlabAlign; }

struct Heap;

// The first 64 bytes of every chunk.
struct alignas(kSlabAlign) ChunkHeader : SlabChunkHeader {};

struct alignas(64) RemoteList {
  Atomic<SlabBlock*> head{nullptr};
};

// Its free lists (SlabFreeLists, which slab.hpp's inline paths use) are
// the owner's only.
struct Heap : SlabFreeLists {
  char* carve = nullptr;                        // owner only: the next bytes never handed out
  char* carve_end = nullptr;                    // owner only: the end of the current chunk
  std::array<RemoteList, kSlabClasses> remote;  // any thread pushes, the owner takes
};

Atomic<std::size_t> chunks_taken{0};

// Every heap and chunk ever made (so that leak checkers see them
// reachable), and the heaps whose thread has ended. Never destroyed (see
// the top of the file).
struct Registry {
  Mutex mutex;
  std::vector<Heap*> heaps POLLUX_GUARDED_BY(mutex);
  std::vector<void*> chunks POLLUX_GUARDED_BY(mutex);
  std::vector<Heap*> abandoned POLLUX_GUARDED_BY(mutex);
};
Registry& registry() {
  static Registry* instance = new Registry;  // deliberately never destroyed
  return *instance;
}

// Hands the heap on when its thread ends.
struct HeapRelease {
  ~HeapRelease() {
    if (slab_this_thread == nullptr) return;
    Registry& r = registry();
    detail::MutexLock lock(r.mutex);
    r.abandoned.push_back(static_cast<Heap*>(slab_this_thread));
    slab_this_thread = nullptr;
  }
};

Heap* attach() {
  Heap* heap;
  {
    Registry& r = registry();
    detail::MutexLock lock(r.mutex);
    if (!r.abandoned.empty()) {
      heap = r.abandoned.back();
      r.abandoned.pop_back();
    } else {
      heap = new Heap;  // deliberately never destroyed
      r.heaps.push_back(heap);
    }
  }
  slab_this_thread = heap;
  thread_local HeapRelease release;  // constructed once per thread, on its first attach
  (void)release;
  return heap;
}

Heap* owner_of(void* block) noexcept { return static_cast<Heap*>(slab_owner_of(block)); }

// Takes a fresh chunk (the rest of the old one, too small for the block
// asked for, is left unused: less than 1 KiB).
void refill_carve(Heap& heap) {
  void* memory = std::aligned_alloc(kSlabChunkSize, kSlabChunkSize);
  if (memory == nullptr) throw std::bad_alloc();
  {
    Registry& r = registry();
    detail::MutexLock lock(r.mutex);
    r.chunks.push_back(memory);
  }
  chunks_taken.fetch_add(1, std::memory_order_relaxed);
  auto* header = ::new (memory) ChunkHeader{{&heap}};
  heap.carve = reinterpret_cast<char*>(header) + sizeof(ChunkHeader);
  heap.carve_end = static_cast<char*>(memory) + kSlabChunkSize;
}

}  // namespace

constinit thread_local SlabFreeLists* slab_this_thread = nullptr;

void* slab_allocate_slow(std::size_t size) {
  std::size_t cls = slab_class_of(size);
  Heap* heap = slab_this_thread != nullptr ? static_cast<Heap*>(slab_this_thread) : attach();
  if (SlabBlock* block = heap->free[cls]) {  // a heap handed on by a thread that ended
    heap->free[cls] = block->next;
    return block;
  }
  // Blocks other threads freed: all of them at once.
  if (SlabBlock* block = heap->remote[cls].head.exchange(nullptr, std::memory_order_acquire)) {
    heap->free[cls] = block->next;
    return block;
  }
  std::size_t bytes = block_size(cls);
  if (heap->carve_end - heap->carve < static_cast<std::ptrdiff_t>(bytes)) refill_carve(*heap);
  void* block = heap->carve;
  heap->carve += bytes;
  return block;
}

void slab_deallocate_remote(void* memory, std::size_t size) noexcept {
  auto* block = static_cast<SlabBlock*>(memory);
  Atomic<SlabBlock*>& head = owner_of(memory)->remote[slab_class_of(size)].head;
  SlabBlock* top = head.load(std::memory_order_relaxed);
  do {
    block->next = top;
  } while (!head.compare_exchange_weak(top, block, std::memory_order_release, std::memory_order_relaxed));
}

std::size_t slab_chunks() noexcept { return chunks_taken.load(std::memory_order_relaxed); }

}  // namespace pollux::detail
