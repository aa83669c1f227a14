// mpsc channels: order, the end of a channel, backpressure and FIFO among
// waiting senders, closing from either side, cancellation, and threads
// (tokio's sync_mpsc.rs, in C++).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

namespace {
using test::Probe;

template <class F>
auto must_ready(F& future) {
  auto result = test::poll_once(future);
  REQUIRE(result.is_ready());
  return std::move(result).value();
}
}  // namespace

TEST_CASE("a bounded channel delivers values in the order they were sent") {
  auto [tx, rx] = mpsc::channel<int>(8);
  for (int i = 0; i < 5; ++i) {
    auto send = tx.send(i);
    CHECK(must_ready(send));
  }
  for (int i = 0; i < 5; ++i) CHECK(block_on(rx.recv()) == i);
}

TEST_CASE("an unbounded channel delivers thousands of values in order, across many blocks") {
  auto [tx, rx] = mpsc::unbounded_channel<std::string>();
  for (int i = 0; i < 5000; ++i) REQUIRE(tx.send(std::to_string(i)));
  for (int i = 0; i < 5000; ++i) REQUIRE(rx.try_recv().value() == std::to_string(i));
  CHECK(rx.try_recv().error() == TryRecvError::Empty);
}

TEST_CASE("recv gives nullopt once every sender is gone and the queue is drained") {
  auto [tx, rx] = mpsc::channel<int>(4);
  auto tx2 = tx;
  CHECK(tx.try_send(1));
  { auto gone = std::move(tx); }
  CHECK(block_on(rx.recv()) == 1);
  CHECK(rx.try_recv().error() == TryRecvError::Empty);  // tx2 still lives
  { auto gone = std::move(tx2); }
  CHECK(block_on(rx.recv()) == std::nullopt);
  CHECK(block_on(rx.recv()) == std::nullopt);  // and stays ended
  CHECK(rx.try_recv().error() == TryRecvError::Closed);
}

TEST_CASE("a receiver polled before anything was sent is woken by the send") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  Probe probe;
  auto recv = rx.recv();
  CHECK(recv.poll(probe.cx).is_pending());
  CHECK(tx.send(7));
  CHECK(probe.counts.woken() == 1);
  CHECK(recv.poll(probe.cx).value() == 7);
}

TEST_CASE("a waiting receiver is woken when the last sender goes") {
  auto [tx, rx] = mpsc::channel<int>(1);
  Probe probe;
  auto recv = rx.recv();
  CHECK(recv.poll(probe.cx).is_pending());
  { auto gone = std::move(tx); }
  CHECK(probe.counts.woken() == 1);
  CHECK(recv.poll(probe.cx).value() == std::nullopt);
}

TEST_CASE("a send to a channel whose receiver is gone fails and gives the value back") {
  auto [tx, rx] = mpsc::channel<std::unique_ptr<int>>(2);
  { auto gone = std::move(rx); }
  auto send = tx.send(std::make_unique<int>(5));
  auto result = must_ready(send);
  REQUIRE(!result);
  CHECK(*result.error().value == 5);
  auto tried = tx.try_send(std::make_unique<int>(6));
  CHECK(tried.error().is_closed());
  CHECK(*tried.error().value == 6);
  CHECK(tx.is_closed());

  auto [utx, urx] = mpsc::unbounded_channel<std::string>();
  { auto gone = std::move(urx); }
  CHECK(utx.send("back").error().value == "back");
}

TEST_CASE("try_send on a full channel says Full and gives the value back") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(1));
  auto full = tx.try_send(2);
  CHECK(full.error().is_full());
  CHECK(full.error().value == 2);
  CHECK(tx.capacity() == 0);
}

TEST_CASE("a send on a full channel waits until the receiver takes a value") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(1));
  Probe probe;
  auto send = tx.send(2);
  CHECK(send.poll(probe.cx).is_pending());
  CHECK(rx.try_recv().value() == 1);
  CHECK(probe.counts.woken() == 1);
  CHECK(send.poll(probe.cx).value());
  CHECK(rx.try_recv().value() == 2);
}

TEST_CASE("waiting senders get room in the order they began to wait, and a try_send cannot barge in") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(0));
  Probe a, b;
  auto first = tx.send(1);
  auto second = tx.send(2);
  CHECK(first.poll(a.cx).is_pending());
  CHECK(second.poll(b.cx).is_pending());
  CHECK(rx.try_recv().value() == 0);
  CHECK(a.counts.woken() == 1);
  CHECK(b.counts.woken() == 0);
  CHECK(tx.try_send(9).error().is_full());  // the freed slot is `first`'s
  CHECK(first.poll(a.cx).value());
  CHECK(second.poll(b.cx).is_pending());
  CHECK(rx.try_recv().value() == 1);
  CHECK(second.poll(b.cx).value());
  CHECK(rx.try_recv().value() == 2);
}

TEST_CASE("a waiting send destroyed gives its place to the next sender") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(0));
  Probe a, b;
  std::optional<mpsc::Sender<int>::Send> first(tx.send(1));
  auto second = tx.send(2);
  CHECK(first->poll(a.cx).is_pending());
  CHECK(second.poll(b.cx).is_pending());
  first.reset();
  CHECK(a.counts.live() == 1);
  CHECK(rx.try_recv().value() == 0);
  CHECK(b.counts.woken() == 1);
  CHECK(second.poll(b.cx).value());
}

TEST_CASE("a send granted room but destroyed before it saw it gives the room back") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(0));
  Probe probe;
  std::optional<mpsc::Sender<int>::Send> send(tx.send(1));
  CHECK(send->poll(probe.cx).is_pending());
  CHECK(rx.try_recv().value() == 0);  // room goes to `send`
  send.reset();
  CHECK(tx.capacity() == 1);
  CHECK(tx.try_send(2));
}

TEST_CASE("a recv destroyed before it was Ready loses no value") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  Probe probe;
  {
    auto recv = rx.recv();
    CHECK(recv.poll(probe.cx).is_pending());
  }
  CHECK(tx.send(3));
  CHECK(rx.try_recv().value() == 3);
}

TEST_CASE("close makes senders fail, waiting ones too, while queued values can still be received") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(1));
  Probe probe;
  auto waiting = tx.send(2);
  CHECK(waiting.poll(probe.cx).is_pending());
  rx.close();
  CHECK(probe.counts.woken() == 1);
  auto failed = waiting.poll(probe.cx);
  REQUIRE(failed.is_ready());
  CHECK(failed.value().error().value == 2);
  CHECK(tx.try_send(3).error().is_closed());
  CHECK(block_on(rx.recv()) == 1);
  CHECK(block_on(rx.recv()) == std::nullopt);  // closed and drained, though tx lives
}

TEST_CASE("closed() completes when the receiver goes, and not before") {
  auto [tx, rx] = mpsc::channel<int>(1);
  Probe probe;
  auto closed = tx.closed();
  CHECK(closed.poll(probe.cx).is_pending());
  CHECK(!tx.is_closed());
  { auto gone = std::move(rx); }
  CHECK(probe.counts.woken() == 1);
  CHECK(closed.poll(probe.cx).is_ready());
  CHECK(tx.is_closed());
}

TEST_CASE("closed() created before the receiver closes completes even if first polled after") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  auto closed = tx.closed();
  rx.close();
  CHECK(test::poll_once(closed).is_ready());
}

TEST_CASE("the values still queued are destroyed with the receiver") {
  int drops = 0;
  auto [tx, rx] = mpsc::unbounded_channel<test::DropCounter>();
  for (int i = 0; i < 40; ++i) CHECK(tx.send(test::DropCounter(&drops)));
  { auto gone = std::move(rx); }
  CHECK(drops == 40);
}

TEST_CASE("the values still queued are destroyed with the last sender when the receiver went first") {
  int drops = 0;
  {
    auto [tx, rx] = mpsc::unbounded_channel<test::DropCounter>();
    CHECK(tx.send(test::DropCounter(&drops)));
  }
  CHECK(drops == 1);
}

TEST_CASE("the receiver is a stream that ends with the channel") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  static_assert(Stream<mpsc::Receiver<int>>);
  for (int i = 1; i <= 3; ++i) CHECK(tx.send(i));
  { auto gone = std::move(tx); }
  int sum = 0;
  while (auto value = block_on(next(rx))) sum += *value;
  CHECK(sum == 6);
}

TEST_CASE("a channel of capacity 0 is refused, and a moved-from sender says so") {
  CHECK_THROWS_AS(mpsc::channel<int>(0), std::invalid_argument);
  auto [tx, rx] = mpsc::channel<int>(1);
  auto moved = std::move(tx);
  CHECK_THROWS_AS((void)tx.try_send(1), std::logic_error);  // NOLINT: use after move on purpose
}

TEST_CASE("four threads send 100,000 values each through a channel of 16: each arrives once, in its sender's order") {
  constexpr int kSenders = 4;
  constexpr std::uint64_t kPerSender = 100'000;
  auto [tx, rx] = mpsc::channel<std::uint64_t>(16);
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s) {
    senders.emplace_back([s, tx = tx] {
      for (std::uint64_t i = 0; i < kPerSender; ++i) REQUIRE(block_on(tx.send(s * kPerSender + i)));
    });
  }
  { auto gone = std::move(tx); }
  std::vector<std::uint64_t> next_of(kSenders, 0);
  std::uint64_t count = 0;
  bool in_order = true;
  while (auto value = block_on(rx.recv())) {
    std::uint64_t s = *value / kPerSender;
    in_order = in_order && *value % kPerSender == next_of[s];
    next_of[s] = *value % kPerSender + 1;
    ++count;
  }
  for (auto& t : senders) t.join();
  CHECK(in_order);
  CHECK(count == kSenders * kPerSender);
}

TEST_CASE("unbounded senders on four threads and a receiver on a runtime lose nothing") {
  auto rt = Runtime::multi_thread(2);
  auto [tx, rx] = mpsc::unbounded_channel<std::uint64_t>();
  std::vector<std::thread> senders;
  for (int s = 0; s < 4; ++s) {
    senders.emplace_back([tx = tx] {
      for (std::uint64_t i = 1; i <= 50'000; ++i) REQUIRE(tx.send(i));
    });
  }
  { auto gone = std::move(tx); }
  auto sum = rt.block_on(
      rt.spawn(poll_fn<std::uint64_t>([&rx = rx, total = std::uint64_t{0}](Context& cx) mutable -> Poll<std::uint64_t> {
        for (;;) {
          auto value = rx.poll_recv(cx);
          if (value.is_pending()) return pending;
          if (!value.value()) return ready(total);
          total += *value.value();
        }
      })));
  for (auto& t : senders) t.join();
  CHECK(sum == 4 * (50'000ull * 50'001 / 2));
}

TEST_CASE("a receiver destroyed on another thread while two threads send leaks and loses nothing") {
  for (int round = 0; round < 200; ++round) {
    std::atomic<int> drops{0};
    std::atomic<int> sent{0};
    auto [tx, rx] = mpsc::unbounded_channel<test::BasicDropCounter<std::atomic<int>>>();
    std::vector<std::thread> senders;
    for (int s = 0; s < 2; ++s) {
      senders.emplace_back([&sent, &drops, tx = tx] {
        for (int i = 0; i < 100; ++i) {
          if (tx.send(test::BasicDropCounter<std::atomic<int>>(&drops))) sent++;
        }
      });
    }
    { auto gone = std::move(tx); }
    std::thread dropper([rx = std::move(rx)]() mutable { auto gone = std::move(rx); });
    for (auto& t : senders) t.join();
    dropper.join();
    REQUIRE(drops == 200);  // every value, sent or handed back, was destroyed exactly once
  }
}

TEST_CASE("a receiver polled before the sender ran, on another thread, is woken by its first value") {
  for (int round = 0; round < 500; ++round) {
    auto [tx, rx] = mpsc::channel<int>(4);
    std::thread sender([tx = std::move(tx)] { REQUIRE(block_on(tx.send(42))); });
    REQUIRE(block_on(rx.recv()) == 42);  // polled first, or after: either way it sees the value
    sender.join();
  }
}

// recv_many (tokio's recv_many tests, in C++).

TEST_CASE("recv_many takes what is queued up to its limit, and the rest on the next call") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  for (int i = 0; i < 5; ++i) REQUIRE(tx.send(i));
  std::vector<int> buffer{-1};
  auto first = rx.recv_many(buffer, 3);
  CHECK(must_ready(first) == 3u);
  auto second = rx.recv_many(buffer, 3);
  CHECK(must_ready(second) == 2u);
  CHECK(buffer == std::vector<int>{-1, 0, 1, 2, 3, 4});  // appended, in order
}

TEST_CASE("recv_many polled before anything was sent waits, and is woken by the first send") {
  auto [tx, rx] = mpsc::channel<int>(4);
  std::vector<int> buffer;
  auto many = rx.recv_many(buffer, 10);
  Probe probe;
  CHECK(many.poll(probe.cx).is_pending());
  auto send = tx.send(7);
  CHECK(must_ready(send));
  CHECK(probe.counts.woken() == 1);
  auto got = many.poll(probe.cx);
  REQUIRE(got.is_ready());
  CHECK(got.value() == 1u);
  CHECK(buffer == std::vector<int>{7});
}

TEST_CASE("recv_many gives 0 once every sender is gone and the queue is drained, and 0 at once for a limit of 0") {
  auto [tx, rx] = mpsc::channel<int>(4);
  std::vector<int> buffer;
  auto none = rx.recv_many(buffer, 0);
  CHECK(must_ready(none) == 0u);
  auto send = tx.send(1);
  CHECK(must_ready(send));
  { auto gone = std::move(tx); }
  auto last = rx.recv_many(buffer, 8);
  CHECK(must_ready(last) == 1u);
  auto ended = rx.recv_many(buffer, 8);
  CHECK(must_ready(ended) == 0u);
  CHECK(buffer == std::vector<int>{1});
}

TEST_CASE("recv_many gives back every permit it took, so senders waiting on a full channel go on") {
  auto [tx, rx] = mpsc::channel<int>(2);
  auto a = tx.send(1);
  auto b = tx.send(2);
  CHECK(must_ready(a));
  CHECK(must_ready(b));
  auto blocked = tx.send(3);
  Probe probe;
  CHECK(blocked.poll(probe.cx).is_pending());
  std::vector<int> buffer;
  auto many = rx.recv_many(buffer, 8);
  CHECK(must_ready(many) == 2u);
  CHECK(probe.counts.woken() == 1);
  auto sent = blocked.poll(probe.cx);
  REQUIRE(sent.is_ready());
  CHECK(sent.value());
  CHECK(rx.try_recv().value() == 3);
}

TEST_CASE("a recv_many destroyed while it waits takes nothing and leaves no waker behind") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  std::vector<int> buffer;
  Probe probe;
  {
    auto many = rx.recv_many(buffer, 4);
    CHECK(many.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);  // only the probe's own waker
  REQUIRE(tx.send(5));
  CHECK(probe.counts.woken() == 0);
  CHECK(buffer.empty());
  CHECK(rx.try_recv().value() == 5);
}
