// broadcast: every receiver sees every value, lagging receivers are told
// how many they missed, the end of the channel, and when stored values are
// destroyed (tokio's sync_broadcast.rs, in C++).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("every receiver gets every value, in order") {
  auto [tx, rx1] = broadcast::channel<int>(16);
  auto rx2 = tx.subscribe();
  CHECK(tx.send(1).value() == 2);
  CHECK(tx.send(2).value() == 2);
  for (auto* rx : {&rx1, &rx2}) {
    CHECK(block_on(rx->recv()).value() == 1);
    CHECK(block_on(rx->recv()).value() == 2);
    CHECK(rx->try_recv().error().kind == broadcast::RecvError::Kind::Empty);
  }
}

TEST_CASE("a receiver subscribed later sees only the values sent after") {
  auto [tx, rx] = broadcast::channel<std::string>(4);
  CHECK(tx.send("early"));
  auto late = tx.subscribe();
  CHECK(tx.send("late"));
  CHECK(late.try_recv().value() == "late");
  CHECK(rx.try_recv().value() == "early");
}

TEST_CASE("a send with no receiver fails and gives the value back") {
  auto [tx, rx] = broadcast::channel<std::string>(2);
  { auto gone = std::move(rx); }
  auto result = tx.send("v");
  REQUIRE(!result);
  CHECK(result.error().value == "v");
  CHECK(tx.receiver_count() == 0);
}

TEST_CASE("a receiver that fell behind is told how many values it missed, then resumes at the oldest kept") {
  auto [tx, rx] = broadcast::channel<int>(2);
  for (int i = 0; i < 5; ++i) CHECK(tx.send(i));
  auto lagged = rx.try_recv();
  REQUIRE(!lagged);
  CHECK(lagged.error().is_lagged());
  CHECK(lagged.error().missed == 3);
  CHECK(rx.try_recv().value() == 3);
  CHECK(block_on(rx.recv()).value() == 4);
}

TEST_CASE("a receiver of strings that fell behind is told so as well") {
  auto [tx, rx] = broadcast::channel<std::string>(1);
  CHECK(tx.send("a"));
  CHECK(tx.send("b"));
  auto lagged = block_on(rx.recv());
  CHECK(lagged.error().missed == 1);
  CHECK(block_on(rx.recv()).value() == "b");
}

TEST_CASE("a waiting receiver is woken by a send, all of them") {
  auto [tx, rx1] = broadcast::channel<int>(4);
  auto rx2 = tx.subscribe();
  Probe a, b;
  auto r1 = rx1.recv();
  auto r2 = rx2.recv();
  CHECK(r1.poll(a.cx).is_pending());
  CHECK(r2.poll(b.cx).is_pending());
  CHECK(tx.send(9));
  CHECK(a.counts.woken() == 1);
  CHECK(b.counts.woken() == 1);
  CHECK(r1.poll(a.cx).value().value() == 9);
  CHECK(r2.poll(b.cx).value().value() == 9);
}

TEST_CASE("receivers drain what is left, then see the channel closed when every sender is gone") {
  auto [tx, rx] = broadcast::channel<int>(4);
  auto tx2 = tx;
  CHECK(tx.send(1));
  { auto gone = std::move(tx); }
  CHECK(tx2.send(2));
  Probe probe;
  { auto gone = std::move(tx2); }
  CHECK(rx.try_recv().value() == 1);
  CHECK(rx.try_recv().value() == 2);
  auto end = rx.recv();
  auto result = end.poll(probe.cx);
  REQUIRE(result.is_ready());
  CHECK(result.value().error().is_closed());
}

TEST_CASE("a waiting receiver is woken when the last sender goes") {
  auto [tx, rx] = broadcast::channel<int>(4);
  Probe probe;
  auto recv = rx.recv();
  CHECK(recv.poll(probe.cx).is_pending());
  { auto gone = std::move(tx); }
  CHECK(probe.counts.woken() == 1);
  CHECK(recv.poll(probe.cx).value().error().is_closed());
}

TEST_CASE("a recv destroyed while waiting leaves the list and loses no value") {
  auto [tx, rx] = broadcast::channel<int>(4);
  Probe probe;
  {
    auto recv = rx.recv();
    CHECK(recv.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  CHECK(tx.send(5));
  CHECK(probe.counts.woken() == 0);
  CHECK(rx.try_recv().value() == 5);
}

TEST_CASE("a stored value is destroyed once every receiver took it, while the sender lives") {
  int drops = 0;
  auto [tx, rx1] = broadcast::channel<std::shared_ptr<test::DropCounter>>(8);
  auto rx2 = tx.subscribe();
  CHECK(tx.send(std::make_shared<test::DropCounter>(&drops)));
  {
    auto first = rx1.try_recv();
    CHECK(drops == 0);
  }
  CHECK(drops == 0);  // rx2 may still take it
  { auto second = rx2.try_recv(); }
  CHECK(drops == 1);
}

TEST_CASE("a stored value is destroyed when the only receiver that had not taken it goes") {
  int drops = 0;
  auto [tx, rx] = broadcast::channel<std::shared_ptr<test::DropCounter>>(8);
  CHECK(tx.send(std::make_shared<test::DropCounter>(&drops)));
  { auto gone = std::move(rx); }
  CHECK(drops == 1);
}

TEST_CASE("the last receiver to take a value gets it moved, the others a copy") {
  auto [tx, rx1] = broadcast::channel<std::shared_ptr<int>>(4);
  auto rx2 = tx.subscribe();
  CHECK(tx.send(std::make_shared<int>(1)));
  auto a = rx1.try_recv().value();
  CHECK(a.use_count() == 2);  // one copy with us, the stored one
  auto b = rx2.try_recv().value();
  CHECK(b.use_count() == 2);  // moved out: no third owner
}

TEST_CASE("a capacity of 0 is refused") { CHECK_THROWS_AS(broadcast::channel<int>(0), std::invalid_argument); }

TEST_CASE("receivers on other threads each see every value of a sender that waits for them") {
  constexpr int kReceivers = 4;
  constexpr std::uint64_t kValues = 20'000;
  auto [tx, rx] = broadcast::channel<std::uint64_t>(kValues);
  std::vector<broadcast::Receiver<std::uint64_t>> receivers;
  for (int i = 0; i < kReceivers; ++i) receivers.push_back(tx.subscribe());
  { auto unused = std::move(rx); }
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (auto& r : receivers) {
    threads.emplace_back([&wrong, &r] {
      std::uint64_t expected = 0;
      for (;;) {
        auto value = block_on(r.recv());
        if (!value) {
          if (!value.error().is_closed() || expected != kValues) wrong++;
          return;
        }
        if (value.value() != expected++) wrong++;
      }
    });
  }
  for (std::uint64_t i = 0; i < kValues; ++i) CHECK(tx.send(i));
  { auto gone = std::move(tx); }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
}

namespace {
// Copyable, never assignable: all a broadcast value needs (tokio asks only
// for Clone).
struct Labelled {
  Labelled(int n, std::string text) : number(n), label(std::move(text)) {}
  Labelled(const Labelled&) = default;
  Labelled& operator=(const Labelled&) = delete;
  const int number;
  std::string label;
};
// Trivially copyable, not assignable and without a default constructor:
// the lock-free slot's path.
struct Point {
  const int x;
  const int y;
};
}  // namespace

TEST_CASE("a value that can be copied but not assigned is sent and received") {
  auto [tx, rx] = broadcast::channel<Labelled>(4);
  auto other = tx.subscribe();
  CHECK(tx.send(Labelled(1, "one")));
  CHECK(tx.send(Labelled(2, "two")));
  CHECK(block_on(rx.recv()).value().label == "one");
  CHECK(rx.try_recv().value().number == 2);
  CHECK(other.try_recv().value().label == "one");
  CHECK(block_on(other.recv()).value().label == "two");
}

TEST_CASE("a trivially copyable value with no default constructor and no assignment is sent and received") {
  auto [tx, rx] = broadcast::channel<Point>(2);
  CHECK(tx.send(Point{3, 4}));
  Point p = block_on(rx.recv()).value();
  CHECK(p.x == 3);
  CHECK(p.y == 4);
  CHECK(tx.send(Point{5, 6}));
  CHECK(rx.try_recv().value().y == 6);
}
