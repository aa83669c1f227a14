// idle_timeout: a future's output, or Elapsed once it went its limit
// without being woken. A wake counts even when it arrives in the same poll
// as the idle timer, and the future's waker may outlive the IdleTimeout.
#include <doctest/doctest.h>

#include <memory>
#include <optional>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

// A future woken from outside without finishing, like a connection that
// gets a request and goes back to waiting: it keeps the latest waker.
struct Activity {
  Waker waker;
  int polls = 0;
  bool finish = false;
  void happen() { waker.wake_by_ref(); }
};

auto busy_with(std::shared_ptr<Activity> activity) {
  return poll_fn<int>([activity](Context& cx) -> Poll<int> {
    ++activity->polls;
    if (activity->finish) return ready(7);
    activity->waker = cx.waker();
    return pending;
  });
}

}  // namespace

TEST_CASE("idle_timeout gives the future's output when it finishes") {
  test::Probe probe;
  test::PausedDriver d;
  auto activity = std::make_shared<Activity>();
  auto guarded = idle_timeout(10ms, busy_with(activity));
  CHECK(guarded.poll(probe.cx).is_pending());
  d.driver.advance(5ms);
  activity->finish = true;
  activity->happen();
  CHECK(probe.counts.woken() == 1);  // the future's wake reaches the task
  CHECK(guarded.poll(probe.cx).value().value() == 7);
}

TEST_CASE("idle_timeout ends a future that is not woken for its limit, and destroys it") {
  test::Probe probe;
  test::PausedDriver d;
  int drops = 0;
  {
    auto guarded = idle_timeout(10ms, test::PendingWithDrop(&drops));
    CHECK(guarded.poll(probe.cx).is_pending());
    d.driver.advance(9ms);
    CHECK(probe.counts.woken() == 0);
    d.driver.advance(1ms);
    CHECK(probe.counts.woken() == 1);
    CHECK(guarded.poll(probe.cx).value() == Elapsed{});
  }
  CHECK(drops == 1);
}

TEST_CASE("a wake that arrives in the same poll as the idle timer counts as activity") {
  test::Probe probe;
  test::PausedDriver d;
  auto activity = std::make_shared<Activity>();
  auto guarded = idle_timeout(10ms, busy_with(activity));
  CHECK(guarded.poll(probe.cx).is_pending());
  d.driver.advance(10ms);  // the idle timer fires...
  activity->happen();      // ...and a request comes before the task runs
  CHECK(guarded.poll(probe.cx).is_pending());
  d.driver.advance(9ms);
  CHECK(guarded.poll(probe.cx).is_pending());
  d.driver.advance(1ms);  // 10 ms after that request, with nothing since
  CHECK(guarded.poll(probe.cx).value() == Elapsed{});
}

TEST_CASE("a future woken more often than its idle limit runs on however long it lives") {
  test::Probe probe;
  test::PausedDriver d;
  auto activity = std::make_shared<Activity>();
  auto guarded = idle_timeout(10ms, busy_with(activity));
  CHECK(guarded.poll(probe.cx).is_pending());
  for (int i = 0; i < 100; ++i) {
    d.driver.advance(6ms);
    activity->happen();
    CHECK(guarded.poll(probe.cx).is_pending());
  }
  CHECK(activity->polls == 101);
}

TEST_CASE("the idle timer alone is not activity: spurious polls do not keep a future alive") {
  test::Probe probe;
  test::PausedDriver d;
  auto activity = std::make_shared<Activity>();
  auto guarded = idle_timeout(10ms, busy_with(activity));
  CHECK(guarded.poll(probe.cx).is_pending());
  for (int i = 0; i < 4; ++i) {
    d.driver.advance(2ms);
    CHECK(guarded.poll(probe.cx).is_pending());  // polled for another reason (a select's sibling)
  }
  d.driver.advance(2ms);
  CHECK(guarded.poll(probe.cx).value() == Elapsed{});
}

TEST_CASE("the waker an idle_timeout gives its future may be woken after the IdleTimeout is gone") {
  test::Probe probe;
  test::PausedDriver d;
  auto activity = std::make_shared<Activity>();
  {
    auto guarded = idle_timeout(10ms, busy_with(activity));
    CHECK(guarded.poll(probe.cx).is_pending());
  }
  activity->happen();  // a registration the future did not remove: harmless (rule 6)
  activity->waker = Waker();
  CHECK(probe.counts.woken() <= 1);
}

TEST_CASE("an idle future that keep_alive says to keep runs on until keep_alive says otherwise") {
  test::Probe probe;
  test::PausedDriver d;
  auto activity = std::make_shared<Activity>();
  bool subscribed = true;
  auto guarded = idle_timeout(10ms, busy_with(activity), [&subscribed] { return subscribed; });
  CHECK(guarded.poll(probe.cx).is_pending());
  for (int i = 0; i < 5; ++i) {
    d.driver.advance(10ms);
    CHECK(guarded.poll(probe.cx).is_pending());  // quiet, and kept
  }
  subscribed = false;
  d.driver.advance(10ms);
  CHECK(guarded.poll(probe.cx).value() == Elapsed{});
}
