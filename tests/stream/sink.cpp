// Sinks: send, feed, flush, close, send_all and with over the channel
// sinks, in the orders a real program meets: a sender waiting for room
// when the receiver goes, a sink destroyed while it waits or holds a slot.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support.hpp"

using namespace pollux;

namespace {
template <class F>
auto must_ready(F& future) {
  auto result = test::poll_once(future);
  REQUIRE(result.is_ready());
  return std::move(result).value();
}

template <class T>
std::vector<T> received(mpsc::Receiver<T>& rx) {
  std::vector<T> out;
  while (auto value = rx.try_recv()) out.push_back(std::move(value).value());
  return out;
}
}  // namespace

TEST_CASE("an unbounded sender is a sink whose send queues the value at once") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  static_assert(Sink<mpsc::UnboundedSender<int>, int>);
  auto sending = send(tx, 7);
  CHECK(must_ready(sending));
  CHECK(received(rx) == std::vector<int>{7});
}

TEST_CASE("a send into a channel whose receiver is gone fails with Closed") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  { auto gone = std::move(rx); }
  auto sending = send(tx, 1);
  CHECK_FALSE(must_ready(sending));
}

TEST_CASE("close on the last sender sink ends the channel for the receiver") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  auto closing = close(tx);
  CHECK(must_ready(closing));
  auto sending = send(tx, 1);
  CHECK_FALSE(must_ready(sending));
  auto end = rx.recv();
  CHECK(must_ready(end) == std::nullopt);
}

TEST_CASE("a PollSender waits for room and is woken when the receiver takes a value") {
  auto [tx, rx] = mpsc::channel<int>(1);
  mpsc::PollSender<int> sink(tx);
  auto first = send(sink, 1);
  CHECK(must_ready(first));
  test::Probe probe;
  auto second = send(sink, 2);
  REQUIRE(second.poll(probe.cx).is_pending());
  CHECK(rx.try_recv().value() == 1);
  CHECK(probe.counts.woken() == 1);
  auto done = second.poll(probe.cx);
  REQUIRE(done.is_ready());
  CHECK(done.value());
  CHECK(received(rx) == std::vector<int>{2});
}

TEST_CASE("a PollSender waiting for room answers Closed when the receiver goes") {
  auto [tx, rx] = mpsc::channel<int>(1);
  REQUIRE(tx.try_send(0));
  mpsc::PollSender<int> sink(tx);
  test::Probe probe;
  REQUIRE(sink.poll_ready(probe.cx).is_pending());
  { auto gone = std::move(rx); }
  CHECK(probe.counts.woken() == 1);
  auto answer = sink.poll_ready(probe.cx);
  REQUIRE(answer.is_ready());
  CHECK_FALSE(answer.value());
}

TEST_CASE("a PollSender destroyed with a reserved slot gives the slot back") {
  auto [tx, rx] = mpsc::channel<int>(1);
  {
    mpsc::PollSender<int> sink(tx);
    test::Probe probe;
    REQUIRE(sink.poll_ready(probe.cx).is_ready());
    CHECK(tx.capacity() == 0);
  }
  CHECK(tx.capacity() == 1);
  CHECK(tx.try_send(5));
}

TEST_CASE("a PollSender destroyed while it waits for room leaves no waiter behind") {
  auto [tx, rx] = mpsc::channel<int>(1);
  REQUIRE(tx.try_send(0));
  test::Probe probe;
  {
    mpsc::PollSender<int> sink(tx);
    REQUIRE(sink.poll_ready(probe.cx).is_pending());
  }
  CHECK(rx.try_recv().value() == 0);
  CHECK(probe.counts.woken() == 0);
  CHECK(probe.counts.live() == 1);
  CHECK(tx.try_send(1));  // the slot went to no one in between
}

TEST_CASE("start_send on a PollSender without a successful poll_ready is a logic_error") {
  auto [tx, rx] = mpsc::channel<int>(1);
  mpsc::PollSender<int> sink(tx);
  CHECK_THROWS_AS((void)sink.start_send(1), std::logic_error);
}

TEST_CASE("send_all sends every item of a stream into a sink, in order") {
  auto [tx, rx] = mpsc::channel<int>(4);
  mpsc::PollSender<int> sink(tx);
  Runtime rt = Runtime::current_thread();
  auto consumer = rt.spawn(std::move(rx) | collect<std::vector<int>>());
  auto sent = rt.block_on(send_all(sink, range(0, 100)));
  CHECK(sent);
  { auto gone = std::move(sink); }
  { auto gone = std::move(tx); }
  std::vector<int> expected;
  for (int i = 0; i < 100; ++i) expected.push_back(i);
  CHECK(rt.block_on(std::move(consumer)) == expected);
}

TEST_CASE("send_all stops at the sink's first error") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  { auto gone = std::move(rx); }
  auto sending = send_all(tx, range(0, 10));
  CHECK_FALSE(must_ready(sending));
}

TEST_CASE("with maps each item before the sink below takes it") {
  auto [tx, rx] = mpsc::unbounded_channel<std::string>();
  auto sink = std::move(tx) | with([](int n) { return std::to_string(n * 2); });
  for (int i = 1; i <= 3; ++i) {
    auto sending = send(sink, i);
    CHECK(must_ready(sending));
  }
  CHECK(received(rx) == std::vector<std::string>{"2", "4", "6"});
}
