// Sleep against a Driver with a paused clock: exact, and instant to run.
// The last cases use the real clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

TEST_CASE("polling a sleep outside any runtime throws NoRuntime saying how to get one") {
  auto s = sleep(1ms);
  try {
    (void)test::poll_once(s);
    FAIL("no exception");
  } catch (const NoRuntime& e) {
    CHECK(std::string(e.what()).find("pollux::Sleep") != std::string::npos);
    CHECK(std::string(e.what()).find("Runtime::block_on") != std::string::npos);
  }
}

TEST_CASE("sleep(0) and a deadline already passed are ready on the first poll") {
  test::PausedDriver d;
  auto zero = sleep(0ms);
  CHECK(test::poll_once(zero).is_ready());
  auto past = sleep_until(d.driver.now() - 1s);
  CHECK(test::poll_once(past).is_ready());
}

TEST_CASE("a sleep is pending until the clock reaches its deadline, then woken once") {
  test::PausedDriver d;
  test::Probe probe;
  auto s = sleep(1s);
  CHECK(s.poll(probe.cx).is_pending());
  d.driver.advance(999ms);
  CHECK(probe.counts.woken() == 0);
  d.driver.advance(1ms);
  CHECK(probe.counts.woken() == 1);
  CHECK(s.poll(probe.cx).is_ready());
  CHECK(probe.counts.live() == 1);  // the driver dropped its clone
}

TEST_CASE("a sleep fires at its exact deadline, below the millisecond") {
  test::PausedDriver d;
  test::Probe probe;
  auto s = sleep(1500us);
  CHECK(s.poll(probe.cx).is_pending());
  d.driver.advance(1499us);
  CHECK(probe.counts.woken() == 0);
  d.driver.advance(1us);
  CHECK(probe.counts.woken() == 1);
}

TEST_CASE("a sleep destroyed before its deadline is unlinked and never wakes") {
  test::PausedDriver d;
  test::Probe probe;
  {
    auto s = sleep(10ms);
    CHECK(s.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);  // the entry's clone is gone with it
  d.driver.advance(1s);
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("polling again with a new waker replaces the stored one") {
  test::PausedDriver d;
  test::Counts first, second;
  Waker w1 = test::counting_waker(first), w2 = test::counting_waker(second);
  Context cx1(w1), cx2(w2);
  auto s = sleep(10ms);
  CHECK(s.poll(cx1).is_pending());
  CHECK(s.poll(cx2).is_pending());
  CHECK(first.live() == 1);
  d.driver.advance(10ms);
  CHECK(first.woken() == 0);
  CHECK(second.woken() == 1);
}

TEST_CASE("a reset sleep waits for its new deadline") {
  test::PausedDriver d;
  test::Probe probe;
  auto s = sleep(10ms);
  CHECK(s.poll(probe.cx).is_pending());
  s.reset(d.driver.now() + 50ms);
  CHECK(s.poll(probe.cx).is_pending());
  d.driver.advance(10ms);
  CHECK(probe.counts.woken() == 0);
  d.driver.advance(40ms);
  CHECK(probe.counts.woken() == 1);
  CHECK(s.poll(probe.cx).is_ready());
}

TEST_CASE("advance refuses to run on a clock that is not paused") {
  Driver driver;
  CHECK_THROWS_AS(driver.advance(1ms), std::logic_error);
}

TEST_CASE("a sleep whose driver is destroyed is woken and then throws NoRuntime") {
  test::Probe probe;
  auto driver = std::make_unique<Driver>();
  auto s = [&] {
    Driver::Guard guard = driver->enter();
    return sleep(1h);
  }();
  {
    Driver::Guard guard = driver->enter();
    CHECK(s.poll(probe.cx).is_pending());
  }
  driver.reset();
  CHECK(probe.counts.woken() == 1);
  CHECK_THROWS_AS((void)s.poll(probe.cx), NoRuntime);
}

namespace {

struct Fired {
  Instant deadline, at;
};

// A sleep that reports when it was due and when it completed.
struct TimedSleep {
  using Output = Fired;
  Sleep sleep;
  Poll<Fired> poll(Context& cx) {
    if (sleep.poll(cx).is_pending()) return pending;
    return ready(Fired{sleep.deadline(), now()});
  }
};

}  // namespace

TEST_CASE("100,000 timers at random deadlines fire in deadline order, each at or after its deadline") {
  auto rt = Runtime::current_thread();
  rt.driver().pause();
  const Instant start = rt.driver().now();
  std::mt19937_64 rng(7);
  FuturesUnordered<TimedSleep> set;
  Instant latest = start;
  for (int i = 0; i < 100'000; ++i) {
    // Up to ten days, in nanoseconds: every level of the wheel is used.
    Instant deadline = start + Duration(static_cast<std::int64_t>(rng() % 864'000'000'000'000));
    latest = std::max(latest, deadline);
    set.push(TimedSleep{sleep_until(deadline)});
  }
  std::vector<Fired> fired =
      rt.block_on(poll_fn([&set, out = std::vector<Fired>()](Context& cx) mutable -> Poll<std::vector<Fired>> {
        for (;;) {
          auto item = set.poll_next(cx);
          if (item.is_pending()) return pending;
          auto value = std::move(item).value();
          if (!value) return ready(std::move(out));
          out.push_back(*value);
        }
      }));
  REQUIRE(fired.size() == 100'000);
  std::size_t early = 0, out_of_order = 0;
  for (std::size_t i = 0; i < fired.size(); ++i) {
    if (fired[i].at < fired[i].deadline) ++early;
    if (i > 0 && fired[i - 1].deadline > fired[i].deadline) ++out_of_order;
  }
  CHECK(early == 0);
  CHECK(out_of_order == 0);
  CHECK(rt.driver().now() == latest);  // the paused clock jumped from deadline to deadline
}

TEST_CASE("a 50 ms sleep on the real clock takes at least 50 ms, and well under 60 ms") {
  auto rt = Runtime::current_thread();
  // The least of five: one sleep may be delayed by a busy machine, but a
  // driver that is late by itself (a whole-millisecond timeout, say) is late
  // every time.
  std::chrono::nanoseconds least = std::chrono::hours(1);
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    rt.block_on(sleep(50ms));
    auto took = std::chrono::steady_clock::now() - t0;
    CHECK(took >= 50ms);
    least = std::min<std::chrono::nanoseconds>(least, took);
  }
  CHECK(least < 60ms);
}
