// Replaces the global operator new and delete of a test executable with
// ones that count allocations. Include it in exactly one file per test
// executable.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace test {
inline std::atomic<long> allocations{0};
}

// GCC sees `free` on memory from `operator new` once these are inlined
// into their callers and warns; here they are the one matching pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  ++test::allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
