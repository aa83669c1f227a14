// Shared by the sync benchmarks: a runtime per variant (current thread, or
// two workers for `_mt`), a future that spawns tasks from inside block_on
// and awaits their JoinHandles in spawn order (as the peers do), the timed
// run with its warm-up, and a count of the heap allocations made while
// timed (a counting operator new: include this in one file per program).
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pollux/pollux.hpp>

#include "common.hpp"

namespace bench {

inline std::atomic<std::uint64_t> allocations{0};

// The runtime of a variant: "_mt" at the end means two workers. Strips it
// from `variant`, as the peers' JSON lines do.
inline pollux::Runtime runtime_for(std::string& variant) {
  if (variant.size() > 3 && variant.ends_with("_mt")) {
    variant.resize(variant.size() - 3);
    return pollux::Runtime::multi_thread(2);
  }
  return pollux::Runtime::current_thread();
}

// On its first poll (inside the runtime) calls spawn_all(), which spawns
// tasks and returns their JoinHandles; then awaits them in order. Ready
// with their outputs.
template <class T, class SpawnAll>
auto spawn_and_join(SpawnAll spawn_all) {
  return pollux::poll_fn<std::vector<T>>(
      [spawn_all = std::move(spawn_all), handles = std::optional<std::vector<pollux::JoinHandle<T>>>(),
       outputs = std::vector<T>()](pollux::Context& cx) mutable -> pollux::Poll<std::vector<T>> {
        if (!handles) handles.emplace(spawn_all());
        while (outputs.size() < handles->size()) {
          auto output = (*handles)[outputs.size()].poll(cx);
          if (output.is_pending()) return pollux::pending;
          outputs.push_back(std::move(output).value().value());  // as the peers unwrap each handle
        }
        return pollux::ready(std::move(outputs));
      });
}

struct Timed {
  double seconds;
  std::uint64_t allocations;
};

// Runs run(n / 10) to warm up, then times run(n) (whose output `check`
// verifies), on the same runtime.
template <class Run, class Check>
Timed timed(pollux::Runtime& rt, std::uint64_t n, Run run, Check check) {
  check(rt.block_on(run(n / 10)), n / 10);
  std::uint64_t allocations0 = allocations.load();
  auto t0 = Clock::now();
  auto output = rt.block_on(run(n));
  double seconds = secs_since(t0);
  std::uint64_t made = allocations.load() - allocations0;
  check(std::move(output), n);
  return {seconds, made};
}

}  // namespace bench

// GCC sees `free` on memory from `operator new` once these are inlined; here
// they are the one matching pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  bench::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
