// Interval's schedule, and its three answers to missed ticks, on a paused
// clock.
#include <doctest/doctest.h>

#include <vector>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

struct Fixture : test::PausedDriver, test::Probe {
  Instant start;
  Fixture() { start = driver.now(); }
  // The ticks ready now, as offsets from start in ms.
  std::vector<long> ready_ticks(Interval& interval) {
    std::vector<long> out;
    for (;;) {
      Poll<Instant> tick = interval.poll_tick(cx);
      if (tick.is_pending()) return out;
      out.push_back(static_cast<long>((std::move(tick).value() - start) / 1ms));
    }
  }
};

}  // namespace

TEST_CASE("an interval ticks at once, then once per period") {
  Fixture f;
  Interval ticks = interval(10ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{0});
  f.driver.advance(9ms);
  CHECK(f.ready_ticks(ticks).empty());
  f.driver.advance(1ms);
  CHECK(f.counts.woken() == 1);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{10});
  f.driver.advance(10ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{20});
}

TEST_CASE("an interval is a stream that never ends") {
  Fixture f;
  Interval ticks = interval_at(f.start + 5ms, 5ms);
  CHECK(ticks.poll_next(f.cx).is_pending());
  f.driver.advance(5ms);
  auto item = ticks.poll_next(f.cx);
  REQUIRE(item.is_ready());
  CHECK(std::move(item).value() == std::optional<Instant>(f.start + 5ms));
}

TEST_CASE("lateness under one period does not shift the schedule") {
  Fixture f;
  Interval ticks = interval(10ms);
  ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
  (void)f.ready_ticks(ticks);
  f.driver.advance(17ms);  // the tick at 10 is 7 ms late
  CHECK(f.ready_ticks(ticks) == std::vector<long>{10});
  f.driver.advance(3ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{20});
}

TEST_CASE("burst: missed ticks come at once until the schedule catches up") {
  Fixture f;
  Interval ticks = interval(10ms);
  CHECK(ticks.missed_tick_behavior() == MissedTickBehavior::Burst);
  (void)f.ready_ticks(ticks);
  f.driver.advance(35ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{10, 20, 30});
  f.driver.advance(5ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{40});
}

TEST_CASE("delay: after missed ticks the next comes one period after the late one") {
  Fixture f;
  Interval ticks = interval(10ms);
  ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
  (void)f.ready_ticks(ticks);
  f.driver.advance(35ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{10});
  f.driver.advance(9ms);
  CHECK(f.ready_ticks(ticks).empty());
  f.driver.advance(1ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{45});
}

TEST_CASE("skip: missed ticks are dropped and the original schedule resumes") {
  Fixture f;
  Interval ticks = interval(10ms);
  ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
  (void)f.ready_ticks(ticks);
  f.driver.advance(35ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{10});
  f.driver.advance(4ms);
  CHECK(f.ready_ticks(ticks).empty());
  f.driver.advance(1ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{40});
}

TEST_CASE("reset makes the next tick one period from now") {
  Fixture f;
  Interval ticks = interval(10ms);
  (void)f.ready_ticks(ticks);
  f.driver.advance(7ms);
  ticks.reset();
  f.driver.advance(9ms);
  CHECK(f.ready_ticks(ticks).empty());
  f.driver.advance(1ms);
  CHECK(f.ready_ticks(ticks) == std::vector<long>{17});
}

TEST_CASE("an interval's period must be positive") {
  Fixture f;
  CHECK_THROWS_AS((void)interval(0ms), std::invalid_argument);
  CHECK_THROWS_AS((void)interval(-1ms), std::invalid_argument);
}
