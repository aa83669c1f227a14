// Replaces the global operator new and delete of a model test executable:
// a block that a model thread deletes during an execution is kept until the
// execution ends (model::free_later), so that the checker reports an atomic
// operation or a lock on a deleted object (a use after free), and an object
// deleted twice, wherever the code under test allocates with new.
// Include it in exactly one file per test executable.
#pragma once

#include <malloc.h>

#include <cstdlib>
#include <new>

#include "model.hpp"

namespace model::detail {

// The quarantine's own bookkeeping allocates and frees; those frees are real.
inline thread_local bool in_heap = false;

inline void heap_free(void* block, std::size_t size) noexcept {
  if (block == nullptr) return;
  if (active == nullptr || self < 0 || in_heap || in_checker) {
    std::free(block);
    return;
  }
  in_heap = true;
  free_later(block, size, [](void* b) { std::free(b); });
  in_heap = false;
}

}  // namespace model::detail

// GCC sees `free` on memory from `operator new` once these are inlined
// into their callers and warns; here they are the one matching pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { model::detail::heap_free(p, p == nullptr ? 0 : malloc_usable_size(p)); }
void operator delete(void* p, std::size_t size) noexcept { model::detail::heap_free(p, size); }
#pragma GCC diagnostic pop
