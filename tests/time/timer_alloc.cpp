// Counts heap allocations: arming, firing and cancelling timers (sleep,
// timeout, Interval) allocates nothing.
#include <doctest/doctest.h>

#include "alloc_support.hpp"
#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;
using test::allocations_of;

namespace {

// timeout(10 s, a future that is pending once): the timer is armed and
// cancelled each time.
auto armed_timeout(int i) {
  return timeout(10s, map(yield_now(), [i] { return i; }));
}

}  // namespace

TEST_CASE("armed and cancelled timeouts allocate nothing") {
  auto rt = Runtime::current_thread();
  (void)allocations_of(rt, 100, armed_timeout);  // warm-up
  CHECK(allocations_of(rt, 10'000, armed_timeout) == 0);
}

TEST_CASE("timeouts around ready futures allocate nothing") {
  auto rt = Runtime::current_thread();
  CHECK(allocations_of(rt, 10'000, [](int i) { return timeout(10s, ready_future(i)); }) == 0);
}

TEST_CASE("sleeps that fire allocate nothing") {
  auto rt = Runtime::current_thread();
  rt.driver().pause();
  (void)allocations_of(rt, 10, [](int) { return sleep(1ms); });
  CHECK(allocations_of(rt, 1000, [](int i) { return sleep(std::chrono::microseconds(i)); }) == 0);
}

TEST_CASE("an interval ticking allocates nothing") {
  auto rt = Runtime::current_thread();
  rt.driver().pause();
  Interval ticks = interval(1ms);
  long before = -1;
  int n = rt.block_on(poll_fn<int>([&ticks, &before, n = 0](Context& cx) mutable -> Poll<int> {
    if (before < 0) before = test::allocations;
    while (n < 1000) {
      if (ticks.poll_tick(cx).is_pending()) return pending;
      ++n;
    }
    return ready(n);
  }));
  CHECK(n == 1000);
  CHECK(test::allocations - before == 0);
}
