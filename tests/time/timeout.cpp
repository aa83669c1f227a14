// timeout: the inner future's output, or Elapsed when time runs out first.
#include <doctest/doctest.h>

#include <memory>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

TEST_CASE("a timeout around a ready future is ready with its value and never touches a driver") {
  auto t = timeout(1s, ready_future(5));  // no driver installed: arming would throw
  CHECK(test::poll_once(t).value() == 5);
}

TEST_CASE("a future that finishes in time gives its value, and the timer is cancelled") {
  test::PausedDriver d;
  auto control = std::make_shared<test::Control>();
  test::Probe probe;
  auto t = timeout(10ms, test::ManualFuture(control));
  CHECK(t.poll(probe.cx).is_pending());
  d.driver.advance(5ms);
  control->complete(3);
  CHECK(t.poll(probe.cx).value() == 3);
  d.driver.advance(1s);
  CHECK(probe.counts.woken() == 1);  // the completion's wake only: the timer never fires
}

TEST_CASE("a future still pending at the deadline is destroyed and the result is empty") {
  test::PausedDriver d;
  int drops = 0;
  test::Probe probe;
  {
    auto t = timeout(10ms, test::PendingWithDrop(&drops));
    CHECK(t.poll(probe.cx).is_pending());
    d.driver.advance(10ms);
    CHECK(probe.counts.woken() == 1);
    CHECK_FALSE(t.poll(probe.cx).value().has_value());
  }
  CHECK(drops == 1);
}

TEST_CASE("timeout_at takes an instant, and a void future gives Result<Unit, Elapsed>") {
  test::PausedDriver d;
  auto t = timeout_at(d.driver.now() + 1ms, pending_future<void>());
  CHECK(test::poll_once(t).is_pending());
  CHECK(t.deadline() == std::optional<Instant>(d.driver.now() + 1ms));
  d.driver.advance(1ms);
  Result<Unit, Elapsed> out = test::poll_once(t).value();
  CHECK(out == Elapsed{});
}

TEST_CASE("timeout(d, f) counts d from its first poll") {
  test::PausedDriver d;
  auto t = timeout(10ms, pending_future<int>());
  CHECK_FALSE(t.deadline().has_value());  // only timeout_at has one to show
  d.driver.advance(1h);                   // made long ago: the time has not started yet
  CHECK(test::poll_once(t).is_pending());
  d.driver.advance(9ms);
  CHECK(test::poll_once(t).is_pending());
  d.driver.advance(1ms);
  CHECK_FALSE(test::poll_once(t).value().has_value());
}

TEST_CASE("timeout works in a runtime: a slow future times out, a fast one does not") {
  auto rt = Runtime::current_thread();
  rt.driver().pause();
  auto slow = rt.block_on(timeout(10ms, then(sleep(1s), [] { return ready_future(1); })));
  CHECK_FALSE(slow.has_value());
  auto fast = rt.block_on(timeout(1s, then(sleep(10ms), [] { return ready_future(2); })));
  CHECK(fast == 2);
}
