// Barrier: n waiters go on together, one leader per generation, generations
// repeat, and cancellation takes an arrival back (tokio's sync_barrier.rs,
// in C++).
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("a barrier of one lets its waiter through at once, as leader") {
  Barrier barrier(1);
  CHECK(block_on(barrier.wait()).is_leader);
  Barrier zero(0);
  CHECK(block_on(zero.wait()).is_leader);
}

TEST_CASE("waiters wait until the n-th arrives; it leads and wakes the others") {
  Barrier barrier(3);
  Probe a, b;
  auto first = barrier.wait();
  auto second = barrier.wait();
  CHECK(first.poll(a.cx).is_pending());
  CHECK(second.poll(b.cx).is_pending());
  auto third = barrier.wait();
  CHECK(test::poll_once(third).value().is_leader);
  CHECK(a.counts.woken() == 1);
  CHECK(b.counts.woken() == 1);
  CHECK(!first.poll(a.cx).value().is_leader);
  CHECK(!second.poll(b.cx).value().is_leader);
}

TEST_CASE("a barrier is reused, generation after generation") {
  Barrier barrier(2);
  for (int generation = 0; generation < 3; ++generation) {
    auto first = barrier.wait();
    CHECK(test::poll_once(first).is_pending());
    auto second = barrier.wait();
    CHECK(test::poll_once(second).value().is_leader);
    CHECK(test::poll_once(first).is_ready());
  }
}

TEST_CASE("a wait destroyed before its generation completed takes its arrival back") {
  Barrier barrier(2);
  Probe probe;
  {
    auto gone = barrier.wait();
    CHECK(gone.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  auto first = barrier.wait();
  CHECK(test::poll_once(first).is_pending());  // still needs a second live waiter
  auto second = barrier.wait();
  CHECK(test::poll_once(second).is_ready());
}

TEST_CASE("ten threads meet at a barrier a hundred times with one leader each time") {
  constexpr int kThreads = 10;
  constexpr int kRounds = 100;
  Barrier barrier(kThreads);
  std::atomic<int> leaders{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        if (block_on(barrier.wait()).is_leader) leaders++;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(leaders == kRounds);
}
