// Counting the allocations a runtime makes while it runs futures: the
// counting operator new (include this in one file per test executable, in
// place of counting_allocator.hpp) and allocations_of.
#pragma once

#include <optional>

#include <pollux/pollux.hpp>

#include "counting_allocator.hpp"

namespace test {

// Runs `make(i)` for i in [0, n) one after another inside one block_on and
// returns the allocations made after the first poll: block_on's own waker
// is made before it.
template <class Make>
long allocations_of(pollux::Runtime& rt, int n, Make make) {
  using F = decltype(make(0));
  return rt.block_on(pollux::poll_fn<long>(
      [&, i = 0, before = -1L, current = std::optional<F>()](pollux::Context& cx) mutable -> pollux::Poll<long> {
        if (before < 0) before = allocations;
        while (i < n) {
          if (!current) current.emplace(make(i));
          if (current->poll(cx).is_pending()) return pollux::pending;
          current.reset();
          ++i;
        }
        return pollux::ready(allocations - before);
      }));
}

}  // namespace test
