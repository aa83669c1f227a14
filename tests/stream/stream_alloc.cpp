// Counts heap allocations in the stream layer: a pipeline of adapters
// allocates nothing per item, and buffer_unordered / buffered allocate
// only their n slots, reused from then on.
#include <doctest/doctest.h>

#include <ranges>

#include "counting_allocator.hpp"
#include "support.hpp"

using namespace pollux;

namespace {
// Pending once (it wakes its task first), then Ready with its value.
auto yield_then(int value) {
  return poll_fn<int>([value, yielded = false](Context& cx) mutable -> Poll<int> {
    if (yielded) return ready(value);
    yielded = true;
    cx.waker().wake_by_ref();
    return pending;
  });
}
}  // namespace

TEST_CASE("a five-adapter pipeline allocates nothing, however many items go through") {
  long before = test::allocations;
  auto pipeline = range(0, 100000) | map([](int x) { return x * 3; }) | filter([](int x) { return x % 2 == 0; })
                  | skip(10) | take_while([](int x) { return x < 250000; }) | enumerate()
                  | fold(0L, [](long acc, std::pair<std::size_t, int> p) { return acc + p.second; });
  long sum = block_on(std::move(pipeline));
  CHECK(sum > 0);
  CHECK(test::allocations - before <= 2);  // block_on's parker, if this thread had none
  long again = test::allocations;
  block_on(range(0, 1000000) | map([](int x) { return x + 1; }) | filter([](int x) { return x > 0; }) | take(900000)
           | skip(1) | count());
  CHECK(test::allocations == again);
}

TEST_CASE("buffer_unordered allocates its slots once and reuses them for every later future") {
  auto measure = [](int n) {
    long before = test::allocations;
    long sum = block_on(range(0, n) | map(yield_then) | buffer_unordered(16)
                        | fold(0L, [](long acc, int x) { return acc + x; }));
    CHECK(sum == long(n) * (n - 1) / 2);
    return test::allocations - before;
  };
  measure(10);  // the thread's slab takes its first chunk
  long small = measure(100);
  long large = measure(100000);
  CHECK(small == large);  // the same slots, whatever the number of items
  CHECK(large <= 16 + 4);
}

TEST_CASE("buffered allocates its slots and its ring once, whatever the number of items") {
  auto measure = [](int n) {
    long before = test::allocations;
    long sum =
        block_on(range(0, n) | map(yield_then) | buffered(16) | fold(0L, [](long acc, int x) { return acc + x; }));
    CHECK(sum == long(n) * (n - 1) / 2);
    return test::allocations - before;
  };
  measure(10);  // the thread's slab takes its first chunk
  long small = measure(100);
  long large = measure(100000);
  CHECK(small == large);
  CHECK(large <= 16 + 8);
}
