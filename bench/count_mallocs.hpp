// Counts every malloc of the process (operator new comes here too): include
// it in exactly one file of a benchmark, which then reads bench::mallocs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

extern "C" void* __libc_malloc(std::size_t size);

namespace bench {
inline std::atomic<std::uint64_t> mallocs{0};
}  // namespace bench

extern "C" void* malloc(std::size_t size) {
  bench::mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
