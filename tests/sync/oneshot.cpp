#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "support.hpp"

using namespace pollux;

TEST_CASE("a value sent before the receive is received") {
  auto [tx, rx] = oneshot::channel<std::string>();
  CHECK(tx.send("hello"));
  CHECK(block_on(std::move(rx)) == std::optional<std::string>("hello"));
}

TEST_CASE("a value sent from another thread wakes the waiting receiver") {
  for (int round = 0; round < 200; ++round) {
    auto [tx, rx] = oneshot::channel<int>();
    std::thread sender([tx = std::move(tx), round]() mutable { CHECK(tx.send(round)); });
    CHECK(block_on(std::move(rx)) == std::optional<int>(round));
    sender.join();
  }
}

TEST_CASE("a sender destroyed without sending completes the receiver with nullopt") {
  auto [tx, rx] = oneshot::channel<int>();
  CHECK(test::poll_once(rx).is_pending());
  { auto gone = std::move(tx); }
  auto result = test::poll_once(rx);
  REQUIRE(result.is_ready());
  CHECK_FALSE(result.value().has_value());
}

TEST_CASE("a sender destroyed on another thread wakes the waiting receiver") {
  auto [tx, rx] = oneshot::channel<int>();
  std::thread dropper([tx = std::move(tx)] {});
  CHECK(block_on(std::move(rx)) == Closed{});
  dropper.join();
}

TEST_CASE("a send to a receiver destroyed first fails and gives the value back") {
  auto [tx, rx] = oneshot::channel<std::unique_ptr<int>>();
  CHECK_FALSE(tx.is_closed());
  { auto gone = std::move(rx); }
  CHECK(tx.is_closed());
  auto sent = tx.send(std::make_unique<int>(7));
  REQUIRE_FALSE(sent);
  CHECK(*sent.error().value == 7);
}

TEST_CASE("a value sent but never received is destroyed with the channel") {
  int drops = 0;
  {
    auto [tx, rx] = oneshot::channel<test::DropCounter>();
    CHECK(tx.send(test::DropCounter(&drops)));
    CHECK(drops == 0);
  }
  CHECK(drops == 1);
}

TEST_CASE("the receiver wakes the waker of its most recent poll") {
  test::Counts first, second;
  auto [tx, rx] = oneshot::channel<int>();
  Waker a = test::counting_waker(first);
  Waker b = test::counting_waker(second);
  Context cx_a(a), cx_b(b);
  CHECK(rx.poll(cx_a).is_pending());
  CHECK(rx.poll(cx_b).is_pending());
  CHECK(first.live() == 1);  // the old waker's clone was dropped when replaced
  (void)tx.send(1);
  CHECK(first.woken() == 0);
  CHECK(second.woken() == 1);
}

TEST_CASE("a receiver destroyed while waiting leaves no waker behind") {
  test::Counts counts;
  auto [tx, rx] = oneshot::channel<int>();
  {
    Waker waker = test::counting_waker(counts);
    Context cx(waker);
    auto receiver = std::move(rx);
    CHECK(receiver.poll(cx).is_pending());
    CHECK(counts.clones == 1);
  }
  CHECK(counts.live() == 0);
  CHECK_FALSE(tx.send(1));
}

TEST_CASE("using a sender twice is refused with a clear error") {
  auto [tx, rx] = oneshot::channel<int>();
  CHECK(tx.send(1));
  CHECK_THROWS_WITH_AS((void)tx.send(2), "pollux::oneshot::Sender::send: the sender was already used or moved from",
                       std::logic_error);
}

TEST_CASE("send, receive and drop race from two threads without loss or leak") {
  for (int round = 0; round < 2000; ++round) {
    auto [tx, rx] = oneshot::channel<std::shared_ptr<int>>();
    auto value = std::make_shared<int>(round);
    std::weak_ptr<int> watch = value;
    bool drop_receiver = round % 2 == 0;
    std::atomic<bool> refused{false};
    std::thread sender([&refused, round, tx = std::move(tx), value = std::move(value)]() mutable {
      auto sent = tx.send(std::move(value));
      // Refused only when the receiver left first; then the value comes back whole.
      if (!sent) refused = *sent.error().value == round;
    });
    if (drop_receiver) {
      { auto gone = std::move(rx); }
    } else {
      auto got = block_on(std::move(rx));
      REQUIRE(got.has_value());
      CHECK(*got.value() == round);
    }
    sender.join();
    if (!drop_receiver) CHECK_FALSE(refused);
    if (drop_receiver) CHECK(watch.expired());
  }
}

TEST_CASE("a receiver switching wakers while the value arrives is always woken or finds the value") {
  struct Signal : RefCounted<Signal> {
    std::atomic<int> wakes{0};
    void wake() { wakes.fetch_add(1, std::memory_order_release); }
  };
  Arc<Signal> signals[2] = {make_arc<Signal>(), make_arc<Signal>()};
  Waker wakers[2] = {waker_from(signals[0]), waker_from(signals[1])};
  for (int round = 0; round < 3000; ++round) {
    auto [tx, rx] = oneshot::channel<int>();
    std::thread sender([tx = std::move(tx), round]() mutable { (void)tx.send(round); });
    std::optional<int> got;
    for (int poll = 0;; ++poll) {
      int seen[2] = {signals[0]->wakes.load(), signals[1]->wakes.load()};
      Context cx(wakers[poll & 1]);
      auto result = rx.poll(cx);
      if (result.is_ready()) {
        got = result.value().value_or(-1);
        break;
      }
      // Pending: the value must come with a wake of one of our wakers.
      while (signals[0]->wakes.load() == seen[0] && signals[1]->wakes.load() == seen[1]) std::this_thread::yield();
    }
    sender.join();
    CHECK(got == std::optional<int>(round));
  }
}

TEST_CASE("a oneshot sender's closed() completes when the receiver goes, and wakes it") {
  auto [tx, rx] = oneshot::channel<int>();
  test::Probe probe;
  auto closed = tx.closed();
  CHECK(closed.poll(probe.cx).is_pending());
  CHECK(!tx.is_closed());
  { auto gone = std::move(rx); }
  CHECK(probe.counts.woken() == 1);
  CHECK(closed.poll(probe.cx).is_ready());
  CHECK(tx.is_closed());
  CHECK(!tx.send(1));
}

TEST_CASE("a oneshot closed() destroyed while waiting takes its waker back") {
  auto [tx, rx] = oneshot::channel<int>();
  test::Probe probe;
  {
    auto closed = tx.closed();
    CHECK(closed.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  { auto gone = std::move(rx); }
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("a oneshot closed() waiting while the sender sends keeps no waker behind") {
  auto [tx, rx] = oneshot::channel<int>();
  test::Probe probe;
  auto closed = tx.closed();
  CHECK(closed.poll(probe.cx).is_pending());
  CHECK(tx.send(3));
  CHECK(probe.counts.live() == 1);
  CHECK(block_on(std::move(rx)) == 3);
  CHECK(closed.poll(probe.cx).is_ready());  // the sender is used: nothing to wait for
}

TEST_CASE("a oneshot receiver dropped on another thread wakes the sender's closed()") {
  for (int i = 0; i < 200; ++i) {
    auto [tx, rx] = oneshot::channel<int>();
    std::thread dropper([rx = std::move(rx)]() mutable { auto gone = std::move(rx); });
    block_on(tx.closed());
    dropper.join();
    CHECK(tx.is_closed());
  }
}

TEST_CASE("a oneshot slot makes a channel that carries a value with nothing allocated") {
  static constinit oneshot::Slot<int> slot;
  auto channel = slot.channel();
  REQUIRE(channel.has_value());
  auto& [tx, rx] = *channel;
  CHECK(tx.send(42));
  CHECK(block_on(std::move(rx)) == 42);
}

TEST_CASE("a oneshot slot refuses a second channel while a side of the first lives") {
  oneshot::Slot<int> slot;
  auto first = slot.channel();
  REQUIRE(first.has_value());
  CHECK(slot.in_use());
  CHECK_FALSE(slot.channel().has_value());
  { auto sender = std::move(first->first); }
  CHECK_FALSE(slot.channel().has_value());  // the receiver still lives
  first.reset();
  CHECK_FALSE(slot.in_use());
  CHECK(slot.channel().has_value());
}

TEST_CASE("a oneshot slot drops a value sent but never received when both sides are gone") {
  oneshot::Slot<std::shared_ptr<int>> slot;
  auto value = std::make_shared<int>(1);
  std::weak_ptr<int> watch = value;
  {
    auto channel = slot.channel();
    CHECK(channel->first.send(std::move(value)));
  }
  CHECK(watch.expired());
  CHECK_FALSE(slot.in_use());
}

TEST_CASE("a oneshot slot's channel reports Closed and refused sends as the slab's does") {
  oneshot::Slot<int> slot;
  {
    auto channel = slot.channel();
    { auto sender = std::move(channel->first); }
    CHECK(block_on(std::move(channel->second)) == Closed{});
  }
  auto channel = slot.channel();
  REQUIRE(channel.has_value());
  { auto receiver = std::move(channel->second); }
  auto refused = channel->first.send(9);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().value == 9);
}

TEST_CASE("a oneshot slot is reused across threads, each channel's value arriving once") {
  oneshot::Slot<int> slot;
  for (int round = 0; round < 200; ++round) {
    auto channel = slot.channel();
    REQUIRE(channel.has_value());  // the last round's sides are gone: the slot is free
    std::thread sender([tx = std::move(channel->first), round]() mutable { CHECK(tx.send(round)); });
    CHECK(block_on(std::move(channel->second)) == round);
    sender.join();
    channel.reset();
  }
}
