// StaticChannel: a bounded channel with its slots inline. Values in order,
// try_send refused when full or closed, senders served in the order they
// waited, close in every state, a send() or recv() destroyed while it
// waits, and many producer threads against one receiver task.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("a StaticChannel hands values to recv in the order they were sent") {
  StaticChannel<int, 4> channel;
  CHECK(channel.try_send(1));
  CHECK(channel.try_send(2));
  auto first = channel.recv();
  auto second = channel.recv();
  CHECK(test::poll_once(first).value() == std::optional<int>(1));
  CHECK(test::poll_once(second).value() == std::optional<int>(2));
  CHECK(channel.size() == 0);
}

TEST_CASE("try_send is refused when every slot is full, and leaves the value as it was") {
  StaticChannel<std::unique_ptr<int>, 1> channel;
  CHECK(channel.try_send(std::make_unique<int>(1)));
  auto kept = std::make_unique<int>(2);
  CHECK_FALSE(channel.try_send(std::move(kept)));
  REQUIRE(kept != nullptr);  // not moved from
  CHECK(*kept == 2);
}

TEST_CASE("recv waits for a value, and try_send wakes it") {
  StaticChannel<int, 2> channel;
  Probe probe;
  auto recv = channel.recv();
  CHECK(recv.poll(probe.cx).is_pending());
  CHECK(channel.try_send(7));
  CHECK(probe.counts.woken() == 1);
  CHECK(recv.poll(probe.cx).value() == std::optional<int>(7));
}

TEST_CASE("a send waits for room and is woken when recv frees a slot") {
  StaticChannel<int, 1> channel;
  CHECK(channel.try_send(1));
  Probe probe;
  auto send = channel.send(2);
  CHECK(send.poll(probe.cx).is_pending());
  auto recv = channel.recv();
  CHECK(test::poll_once(recv).value() == std::optional<int>(1));
  CHECK(probe.counts.woken() == 1);
  CHECK(send.poll(probe.cx).value());
  auto next = channel.recv();
  CHECK(test::poll_once(next).value() == std::optional<int>(2));
}

TEST_CASE("senders that wait get the freed slots in the order they started waiting") {
  StaticChannel<int, 1> channel;
  CHECK(channel.try_send(0));
  Probe first_probe, second_probe;
  auto first = channel.send(1);
  auto second = channel.send(2);
  CHECK(first.poll(first_probe.cx).is_pending());
  CHECK(second.poll(second_probe.cx).is_pending());
  auto recv = channel.recv();
  CHECK(test::poll_once(recv).value() == std::optional<int>(0));
  // The second is polled first (a spurious poll): it must not jump the queue.
  CHECK(second.poll(second_probe.cx).is_pending());
  CHECK(first.poll(first_probe.cx).value());
  CHECK_FALSE(channel.try_send(9));  // full again: try_send does not take a waiting sender's slot either
}

TEST_CASE("a send destroyed while first in the queue hands the free slot to the next") {
  StaticChannel<int, 1> channel;
  CHECK(channel.try_send(0));
  Probe next_probe;
  auto next = channel.send(2);
  {
    Probe probe;
    auto first = channel.send(1);
    CHECK(first.poll(probe.cx).is_pending());
    CHECK(next.poll(next_probe.cx).is_pending());
    auto recv = channel.recv();
    CHECK(test::poll_once(recv).value() == std::optional<int>(0));
  }  // the first is destroyed with a slot free
  CHECK(next_probe.counts.woken() >= 1);
  CHECK(next.poll(next_probe.cx).value());
}

TEST_CASE("close refuses new values, ends waiting sends with false, and recv drains the rest") {
  StaticChannel<int, 1> channel;
  CHECK(channel.try_send(1));
  Probe probe;
  auto send = channel.send(2);
  CHECK(send.poll(probe.cx).is_pending());
  channel.close();
  CHECK(probe.counts.woken() == 1);
  CHECK_FALSE(send.poll(probe.cx).value());
  CHECK_FALSE(channel.try_send(3));
  auto first = channel.recv();
  auto last = channel.recv();
  CHECK(test::poll_once(first).value() == std::optional<int>(1));
  CHECK(test::poll_once(last).value() == std::nullopt);
}

TEST_CASE("close wakes a receiver that waits on an empty channel") {
  StaticChannel<int, 2> channel;
  Probe probe;
  auto recv = channel.recv();
  CHECK(recv.poll(probe.cx).is_pending());
  channel.close();
  CHECK(probe.counts.woken() == 1);
  CHECK(recv.poll(probe.cx).value() == std::nullopt);
}

TEST_CASE("close wakes more waiting senders than one batch of wakes holds") {
  StaticChannel<int, 1> channel;
  CHECK(channel.try_send(0));
  std::vector<Probe> probes(100);
  std::vector<StaticChannel<int, 1>::Send> sends;
  sends.reserve(100);
  for (int i = 0; i < 100; ++i) {
    sends.push_back(channel.send(i));
    CHECK(sends.back().poll(probes[i].cx).is_pending());
  }
  channel.close();
  for (int i = 0; i < 100; ++i) {
    CHECK(probes[i].counts.woken() == 1);
    CHECK_FALSE(sends[i].poll(probes[i].cx).value());
  }
}

TEST_CASE("values left in a StaticChannel are destroyed with it") {
  auto value = std::make_shared<int>(1);
  {
    StaticChannel<std::shared_ptr<int>, 3> channel;
    CHECK(channel.try_send(value));
    CHECK(channel.try_send(value));
    CHECK(value.use_count() == 3);
  }
  CHECK(value.use_count() == 1);
}

TEST_CASE("a recv destroyed while waiting takes its waker back, and the next recv gets the value") {
  StaticChannel<std::string, 2> channel;
  {
    Probe probe;
    auto recv = channel.recv();
    CHECK(recv.poll(probe.cx).is_pending());
  }
  CHECK(channel.try_send(std::string("kept")));
  auto recv = channel.recv();
  CHECK(test::poll_once(recv).value() == std::optional<std::string>("kept"));
}

TEST_CASE("four producer threads and one receiver task pass 40,000 values without loss") {
  StaticChannel<int, 8> channel;
  constexpr int kPerThread = 10'000;
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      block_on(poll_fn<void>(
          [&, i = 0, send = std::optional<StaticChannel<int, 8>::Send>()](Context& cx) mutable -> Poll<void> {
            while (i < kPerThread) {
              if (!send) send.emplace(channel.send(t * kPerThread + i));
              if (send->poll(cx).is_pending()) return pending;
              send.reset();
              ++i;
            }
            return ready();
          }));
    });
  }
  long long sum = 0;
  int received = 0;
  std::thread receiver([&] {
    block_on(poll_fn<void>([&, recv = std::optional<StaticChannel<int, 8>::Recv>()](Context& cx) mutable -> Poll<void> {
      while (received < 4 * kPerThread) {
        if (!recv) recv.emplace(channel.recv());
        auto polled = recv->poll(cx);
        if (polled.is_pending()) return pending;
        recv.reset();
        sum += *polled.value();
        ++received;
      }
      return ready();
    }));
  });
  for (auto& p : producers) p.join();
  receiver.join();
  long long n = 4LL * kPerThread;
  CHECK(received == n);
  CHECK(sum == n * (n - 1) / 2);
}
