// watch: the latest value, changed() after a newer one, borrow and
// borrow_and_update, and the sender going (tokio's sync_watch.rs, in C++).
#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("the initial value counts as seen: changed() waits for a send") {
  auto [tx, rx] = watch::channel<std::string>("first");
  CHECK(*rx.borrow() == "first");
  auto changed = rx.changed();
  CHECK(test::poll_once(changed).is_pending());
  CHECK(!rx.has_changed().value());
}

TEST_CASE("a send wakes a waiting changed(), which then sees the new value") {
  auto [tx, rx] = watch::channel<int>(0);
  Probe probe;
  auto changed = rx.changed();
  CHECK(changed.poll(probe.cx).is_pending());
  CHECK(tx.send(1));
  CHECK(probe.counts.woken() == 1);
  CHECK(changed.poll(probe.cx).value());
  CHECK(*rx.borrow() == 1);
}

TEST_CASE("a receiver sees only the latest of several sends") {
  auto [tx, rx] = watch::channel<int>(0);
  CHECK(tx.send(1));
  CHECK(tx.send(2));
  CHECK(block_on(rx.changed()));
  CHECK(*rx.borrow_and_update() == 2);
  auto again = rx.changed();
  CHECK(test::poll_once(again).is_pending());
}

TEST_CASE("borrow does not mark the value seen, borrow_and_update does") {
  auto [tx, rx] = watch::channel<int>(0);
  CHECK(tx.send(5));
  {
    auto ref = rx.borrow();
    CHECK(ref.has_changed());
  }
  CHECK(rx.has_changed().value());
  {
    auto ref = rx.borrow_and_update();
    CHECK(ref.has_changed());
    CHECK(*ref == 5);
  }
  CHECK(!rx.has_changed().value());
}

TEST_CASE("send_modify changes the value in place and notifies") {
  auto [tx, rx] = watch::channel<std::string>("a");
  tx.send_modify([](std::string& s) { s += "b"; });
  CHECK(rx.has_changed().value());
  CHECK(*rx.borrow_and_update() == "ab");
  CHECK(*tx.borrow() == "ab");
}

TEST_CASE("changed() fails once the sender is gone and nothing newer came") {
  auto [tx, rx] = watch::channel<int>(0);
  Probe probe;
  auto changed = rx.changed();
  CHECK(changed.poll(probe.cx).is_pending());
  { auto gone = std::move(tx); }
  CHECK(probe.counts.woken() == 1);
  auto result = changed.poll(probe.cx);
  REQUIRE(result.is_ready());
  CHECK(!result.value());
  CHECK(!rx.has_changed());
}

TEST_CASE("a value sent just before the sender went is still seen first") {
  auto [tx, rx] = watch::channel<int>(0);
  CHECK(tx.send(7));
  { auto gone = std::move(tx); }
  CHECK(block_on(rx.changed()));
  CHECK(*rx.borrow() == 7);
  CHECK(!block_on(rx.changed()));
}

TEST_CASE("a send with no receiver fails and gives the value back") {
  auto [tx, rx] = watch::channel<std::string>("x");
  { auto gone = std::move(rx); }
  auto result = tx.send("y");
  REQUIRE(!result);
  CHECK(result.error().value == "y");
  CHECK(*tx.borrow() == "x");
}

TEST_CASE("subscribe and copies give receivers that count from the current value") {
  auto [tx, rx] = watch::channel<int>(0);
  CHECK(tx.send(1));
  auto sub = tx.subscribe();
  CHECK(!sub.has_changed().value());
  auto copy = rx;
  CHECK(copy.has_changed().value());
  CHECK(tx.receiver_count() == 3);
}

TEST_CASE("a changed() destroyed while waiting leaves the list, and the change is still there") {
  auto [tx, rx] = watch::channel<int>(0);
  Probe probe;
  {
    auto changed = rx.changed();
    CHECK(changed.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  CHECK(tx.send(1));
  CHECK(probe.counts.woken() == 0);
  CHECK(rx.has_changed().value());
}

TEST_CASE("a receiver on another thread ends with the last value sent") {
  auto [tx, rx] = watch::channel<int>(-1);
  std::thread receiver([rx = std::move(rx)]() mutable {
    int last = -1;
    while (block_on(rx.changed())) last = *rx.borrow_and_update();
    CHECK(last == 9999);
  });
  for (int i = 0; i < 10'000; ++i) CHECK(tx.send(i));
  { auto gone = std::move(tx); }
  receiver.join();
}

namespace {
struct Point {  // trivially copyable, not default-constructible
  explicit Point(int x, int y) : x(x), y(y) {}
  int x, y;
};
}  // namespace

TEST_CASE("a small trivially copyable value is copied out whole, also while another thread keeps replacing it") {
  auto [tx, rx] = watch::channel<Point>(Point(0, 0));
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::thread reader([&, rx = rx] {
    while (!stop.load()) {
      auto p = rx.borrow();
      if (p->x != p->y) torn++;
    }
  });
  for (int i = 1; i <= 20'000; ++i) CHECK(tx.send(Point(i, i)));
  tx.send_modify([](Point& p) { p.y = p.x = -1; });
  stop = true;
  reader.join();
  CHECK(torn == 0);
  CHECK(rx.borrow()->x == -1);
}
