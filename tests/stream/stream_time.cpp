// The stream adapters that need the clock: timeout per item and throttle,
// on a paused driver whose time the test moves.
#include <doctest/doctest.h>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {
struct Fixture : test::PausedDriver {
  test::Probe probe;
  std::shared_ptr<test::StreamControl> control = std::make_shared<test::StreamControl>();
};
}  // namespace

TEST_CASE("a stream timeout yields each item that comes in time as a value") {
  Fixture f;
  auto s = test::ManualStream(f.control) | timeout(10ms);
  f.control->push(1);
  auto item = s.poll_next(f.probe.cx);
  REQUIRE(item.is_ready());
  CHECK(item.value()->value() == 1);
}

TEST_CASE("a stream timeout yields Elapsed after the duration without an item, and goes on") {
  Fixture f;
  auto s = test::ManualStream(f.control) | timeout(10ms);
  CHECK(s.poll_next(f.probe.cx).is_pending());
  f.driver.advance(9ms);
  CHECK(s.poll_next(f.probe.cx).is_pending());
  f.driver.advance(1ms);
  CHECK(f.probe.counts.woken() >= 1);
  auto elapsed = s.poll_next(f.probe.cx);
  REQUIRE(elapsed.is_ready());
  CHECK_FALSE(elapsed.value()->has_value());
  CHECK(elapsed.value()->error() == Elapsed{});
  // A fresh wait gets a fresh duration.
  CHECK(s.poll_next(f.probe.cx).is_pending());
  f.driver.advance(5ms);
  f.control->push(2);
  CHECK(s.poll_next(f.probe.cx).value()->value() == 2);
}

TEST_CASE("a stream timeout ends with its source") {
  Fixture f;
  f.control->ended = true;
  auto s = test::ManualStream(f.control) | timeout(10ms);
  CHECK_FALSE(s.poll_next(f.probe.cx).value().has_value());
}

TEST_CASE("a stream timeout destroyed while waiting unlinks its timer and its source's waker") {
  Fixture f;
  {
    auto s = test::ManualStream(f.control) | timeout(10ms);
    CHECK(s.poll_next(f.probe.cx).is_pending());
  }
  CHECK(f.probe.counts.live() == 1);
  f.driver.advance(20ms);
  CHECK(f.probe.counts.woken() == 0);
}

TEST_CASE("throttle passes the first item at once and holds the next until the period passed") {
  Fixture f;
  f.control->items = {1, 2};
  auto s = test::ManualStream(f.control) | throttle(10ms);
  CHECK(s.poll_next(f.probe.cx).value() == std::optional<int>(1));
  CHECK(s.poll_next(f.probe.cx).is_pending());
  CHECK(f.control->items.size() == 1);  // the source is not polled meanwhile
  f.driver.advance(10ms);
  CHECK(f.probe.counts.woken() == 1);
  CHECK(s.poll_next(f.probe.cx).value() == std::optional<int>(2));
}

TEST_CASE("throttle drops nothing and ends with its source") {
  Fixture f;
  f.control->items = {1, 2, 3};
  f.control->ended = true;
  auto s = test::ManualStream(f.control) | throttle(1ms);
  std::vector<int> seen;
  for (;;) {
    auto item = s.poll_next(f.probe.cx);
    if (item.is_pending()) {
      f.driver.advance(1ms);
      continue;
    }
    if (!item.value()) break;
    seen.push_back(*item.value());
  }
  CHECK(seen == std::vector<int>{1, 2, 3});
}
