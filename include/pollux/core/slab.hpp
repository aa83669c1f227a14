// SlabAllocator: where tasks live by default. Each thread keeps free lists
// of blocks in sizes of 64 to 1,024 bytes, carved from 2 MiB chunks it
// takes once; a block freed on another thread goes back to its owner's
// remote list (one compare-and-swap, no lock), which the owner takes in one
// exchange when its own list runs dry. Once warm, spawning and finishing
// tasks touch neither malloc nor a lock, and no freed task crosses into
// another thread's malloc arena. Those warm paths are inline: an
// allocation is a pop, and a free on the same thread a push, of a
// thread-local list, with no call.
//
// Chunks are kept for reuse, never returned to the system: a program's peak
// of live tasks stays reserved, as a thread's cache would. A thread that
// ends leaves its free lists to the next thread that starts. Under
// AddressSanitizer every block comes from operator new instead, so that a
// use after free of a task is still reported.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace pollux {

namespace detail {

/// The largest block the slab serves, and its blocks' alignment.
inline constexpr std::size_t kSlabMaxBlock = 1024;
inline constexpr std::size_t kSlabAlign = 64;

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSlabEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSlabEnabled = false;
#else
inline constexpr bool kSlabEnabled = true;
#endif
#else
inline constexpr bool kSlabEnabled = true;
#endif

/// Whether the slab serves a block of `bytes` aligned to `align`.
inline constexpr bool slab_serves(std::size_t bytes, std::size_t align) noexcept {
  return kSlabEnabled && bytes <= kSlabMaxBlock && align <= kSlabAlign;
}

#if defined(POLLUX_MODEL)
// A model build brings its own slab, which tracks every block (tests/model).
void* slab_allocate(std::size_t size);
void slab_deallocate(void* block, std::size_t size) noexcept;
#else
/// The slab's size classes: 64-byte steps up to kSlabMaxBlock.
inline constexpr std::size_t kSlabClasses = kSlabMaxBlock / kSlabAlign;
/// A chunk's size, and its alignment: a block finds its chunk by masking.
inline constexpr std::size_t kSlabChunkSize = std::size_t{2} * 1024 * 1024;

/// A free block: the next one of its list.
struct SlabBlock {
  SlabBlock* next;
};

/// The part of a thread's heap that the inline paths touch: its own free
/// lists, one per size class (the rest is in slab.cpp).
struct SlabFreeLists {
  SlabBlock* free[kSlabClasses] = {};
};

/// The first bytes of every chunk: the heap whose thread carved it.
struct SlabChunkHeader {
  SlabFreeLists* owner;
};

/// The calling thread's heap; null until its first allocation. constinit:
/// no dynamic initialization, so the inline paths read it without a call.
extern constinit thread_local SlabFreeLists* slab_this_thread;

/// The heap whose chunk holds `block` (a block of the slab).
inline SlabFreeLists* slab_owner_of(const void* block) noexcept {
  auto chunk = reinterpret_cast<std::uintptr_t>(block) & ~(std::uintptr_t{kSlabChunkSize} - 1);
  return reinterpret_cast<const SlabChunkHeader*>(chunk)->owner;
}

/// The size class of a block of `size` bytes.
inline constexpr std::size_t slab_class_of(std::size_t size) noexcept {
  return (size + kSlabAlign - 1) / kSlabAlign - 1;
}

/// What slab_allocate does when the calling thread's list of that size
/// is empty, or the thread has no heap yet.
void* slab_allocate_slow(std::size_t size);
/// What slab_deallocate does with a block of another thread's heap.
void slab_deallocate_remote(void* block, std::size_t size) noexcept;

/// A block of at least `size` bytes (at most kSlabMaxBlock), 64-byte
/// aligned, from the calling thread's free lists. Throws std::bad_alloc.
/// Inline: once warm, it is a pop from a thread-local list where the
/// caller is.
inline void* slab_allocate(std::size_t size) {
  const std::size_t cls = slab_class_of(size);
  if (SlabFreeLists* heap = slab_this_thread) [[likely]] {
    if (SlabBlock* block = heap->free[cls]) [[likely]] {
      heap->free[cls] = block->next;
      return block;
    }
  }
  return slab_allocate_slow(size);
}

/// Gives back a block from slab_allocate(size), from any thread. Inline:
/// on the thread whose heap it came from, a push onto a thread-local list.
inline void slab_deallocate(void* block, std::size_t size) noexcept {
  SlabFreeLists* owner = slab_owner_of(block);
  if (owner == slab_this_thread) [[likely]] {
    const std::size_t cls = slab_class_of(size);
    auto* freed = static_cast<SlabBlock*>(block);
    freed->next = owner->free[cls];
    owner->free[cls] = freed;
    return;
  }
  slab_deallocate_remote(block, size);
}
#endif

/// Chunks taken from the system so far, by all threads (for tests).
std::size_t slab_chunks() noexcept;

}  // namespace detail

/// An allocator (in the standard sense) that serves one object of up to
/// 1,024 bytes at a time from the slab, and anything else from operator
/// new. Stateless: any two compare equal. make_task uses it unless given
/// another.
template <class T>
class SlabAllocator {
 public:
  /// The type allocated (std::allocator requirements).
  using value_type = T;

  SlabAllocator() noexcept = default;
  /// Rebinding: slab allocators of any type are interchangeable.
  template <class U>
  SlabAllocator(const SlabAllocator<U>&) noexcept {}

  /// Room for `n` objects: one object of up to 1,024 bytes from the
  /// calling thread's slab, anything else from operator new.
  T* allocate(std::size_t n) {
    if (served_by_slab(n)) return static_cast<T*>(detail::slab_allocate(sizeof(T)));
    if constexpr (over_aligned) {
      return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)}));
    } else {
      return static_cast<T*>(::operator new(n * sizeof(T)));
    }
  }

  /// Gives back what allocate(n) returned, from any thread.
  void deallocate(T* p, std::size_t n) noexcept {
    if (served_by_slab(n)) {
      detail::slab_deallocate(p, sizeof(T));
    } else {
#if defined(__cpp_sized_deallocation)
      if constexpr (over_aligned)
        ::operator delete (p, n * sizeof(T), std::align_val_t{alignof(T)});
      else
        ::operator delete(p, n * sizeof(T));
#else  // Clang before 19 leaves sized deallocation off unless asked
      if constexpr (over_aligned)
        ::operator delete (p, std::align_val_t{alignof(T)});
      else
        ::operator delete(p);
#endif
    }
  }

  /// Always true: memory from one can be freed by any other.
  template <class U>
  bool operator==(const SlabAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static constexpr bool over_aligned = alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;

  static constexpr bool served_by_slab(std::size_t n) noexcept {
    return n == 1 && detail::slab_serves(sizeof(T), alignof(T));
  }
};

namespace detail {

/// Makes one T in memory from SlabAllocator<T> (the memory goes back if
/// the constructor throws).
template <class T, class... Args>
T* slab_new(Args&&... args) {
  SlabAllocator<T> alloc;
  T* object = alloc.allocate(1);
  try {
    return ::new (static_cast<void*>(object)) T(std::forward<Args>(args)...);
  } catch (...) {
    alloc.deallocate(object, 1);
    throw;
  }
}

/// `bytes` of memory aligned to `align` (a power of two): from the
/// calling thread's slab when it serves that size, else from operator new.
/// Throws std::bad_alloc. For objects whose size is known only at run
/// time; give it back with deallocate_bytes and the same arguments.
inline void* allocate_bytes(std::size_t bytes, std::size_t align) {
  if (slab_serves(bytes, align)) return slab_allocate(bytes);
  return ::operator new (bytes, std::align_val_t{align});
}

/// Gives back what allocate_bytes(bytes, align) returned, from any thread.
inline void deallocate_bytes(void* memory, std::size_t bytes, std::size_t align) noexcept {
  if (slab_serves(bytes, align)) {
    slab_deallocate(memory, bytes);
  } else {
    ::operator delete (memory, std::align_val_t{align});
  }
}

/// Destroys a T made by slab_new and gives its memory back, from any thread.
template <class T>
void slab_delete(T* object) noexcept {
  object->~T();
  SlabAllocator<T>().deallocate(object, 1);
}

}  // namespace detail

}  // namespace pollux
