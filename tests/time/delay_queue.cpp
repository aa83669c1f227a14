// DelayQueue: values out in deadline order, insert, remove and reset by
// key, an earlier insert waking the poller, and one timer for the queue
// (tokio-util's time/delay_queue tests, in C++), on a paused driver.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "support.hpp"

using namespace pollux;
using namespace std::chrono_literals;

namespace {

struct Fixture : test::PausedDriver {
  test::Probe probe;
  DelayQueue<std::string> queue;

  // What one poll gives: the value, "" for Pending, "<end>" for the end.
  std::string poll() {
    auto next = queue.poll_next(probe.cx);
    if (next.is_pending()) return "";
    if (!next.value()) return "<end>";
    return next.value()->value;
  }
};

}  // namespace

TEST_CASE("an empty queue ends, and yields again after an insert") {
  Fixture f;
  CHECK(f.poll() == "<end>");
  f.queue.insert("now", 0ms);
  CHECK(f.probe.counts.woken() == 1);  // the insert woke the poller that saw the end
  CHECK(f.poll() == "now");
}

TEST_CASE("a value comes out once its delay passed, not before") {
  Fixture f;
  f.queue.insert("later", 10ms);
  CHECK(f.poll() == "");
  f.driver.advance(9ms);
  CHECK(f.poll() == "");
  f.driver.advance(1ms);
  CHECK(f.probe.counts.woken() >= 1);
  CHECK(f.poll() == "later");
  CHECK(f.poll() == "<end>");
}

TEST_CASE("values come out in deadline order, whatever their insert order") {
  Fixture f;
  f.queue.insert("c", 30ms);
  f.queue.insert("a", 10ms);
  f.queue.insert("b", 20ms);
  f.queue.insert("past", -5ms);  // a deadline already passed comes out at once
  std::vector<std::string> out;
  while (out.empty() || out.back() != "<end>") {
    std::string got = f.poll();
    if (got.empty()) {
      f.driver.advance(10ms);  // Pending: time moves on
    } else {
      out.push_back(got);
    }
  }
  CHECK(out == std::vector<std::string>{"past", "a", "b", "c", "<end>"});
}

TEST_CASE("an insert earlier than the armed timer wakes the poller, which re-arms for it") {
  Fixture f;
  f.queue.insert("late", 100ms);
  CHECK(f.poll() == "");
  int woken = f.probe.counts.woken();
  f.queue.insert("early", 5ms);
  CHECK(f.probe.counts.woken() == woken + 1);
  CHECK(f.poll() == "");
  f.driver.advance(5ms);
  CHECK(f.poll() == "early");
  CHECK(f.poll() == "");
}

TEST_CASE("remove takes a value out before it expires, and its key is refused after") {
  Fixture f;
  auto key = f.queue.insert("gone", 10ms);
  f.queue.insert("stays", 20ms);
  auto removed = f.queue.remove(key);
  CHECK(removed.value == "gone");
  CHECK(!f.queue.contains(key));
  CHECK(!f.queue.try_remove(key));
  CHECK_THROWS_AS(f.queue.remove(key), std::out_of_range);
  CHECK_THROWS_AS(f.queue.reset(key, 1ms), std::out_of_range);
  f.driver.advance(20ms);
  CHECK(f.poll() == "stays");
  CHECK(f.poll() == "<end>");
}

TEST_CASE("a key of a removed value does not name the value that reuses its slot") {
  Fixture f;
  auto old_key = f.queue.insert("first", 10ms);
  (void)f.queue.remove(old_key);
  auto new_key = f.queue.insert("second", 10ms);
  CHECK(new_key.index == old_key.index);
  CHECK(!f.queue.contains(old_key));
  CHECK(f.queue.contains(new_key));
}

TEST_CASE("reset moves a value's deadline later or earlier") {
  Fixture f;
  auto a = f.queue.insert("a", 10ms);
  auto b = f.queue.insert("b", 20ms);
  f.queue.reset(a, 30ms);  // later than b now
  f.driver.advance(20ms);
  CHECK(f.poll() == "b");
  CHECK(f.poll() == "");
  f.queue.reset(a, 0ms);  // due at once
  CHECK(f.poll() == "a");
  (void)b;
}

TEST_CASE("a value reset a thousand times comes out once, at its last deadline") {
  Fixture f;
  auto key = f.queue.insert("once", 1ms);
  for (int i = 0; i < 1000; ++i) f.queue.reset(key, std::chrono::milliseconds(2 + i % 7));
  f.driver.advance(8ms);
  CHECK(f.poll() == "once");
  CHECK(f.poll() == "<end>");
}

TEST_CASE("peek names the value due first, and clear empties the queue") {
  Fixture f;
  f.queue.insert("b", 20ms);
  auto a = f.queue.insert("a", 10ms);
  CHECK(f.queue.peek() == a);
  CHECK(f.queue.size() == 2);
  f.queue.clear();
  CHECK(f.queue.empty());
  CHECK(!f.queue.peek());
  CHECK(f.poll() == "<end>");
}

TEST_CASE("a queue dropped while it waits unlinks its timer and leaves only its poller's waker with the driver") {
  test::PausedDriver paused;
  test::Probe probe;
  {
    DelayQueue<int> queue;
    queue.insert(1, 10ms);
    CHECK(queue.poll_next(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  paused.driver.advance(20ms);
  CHECK(probe.counts.woken() == 0);
}
