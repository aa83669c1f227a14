#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "support.hpp"

using namespace pollux;

TEST_CASE("registering the same task's waker again clones nothing") {
  test::Counts counts;
  Waker waker = test::counting_waker(counts);
  AtomicWaker slot;
  slot.register_waker(waker);
  slot.register_waker(waker);
  slot.register_waker(Waker(waker));
  CHECK(counts.clones == 2);  // one stored clone, one temporary
  slot.wake_by_ref();
  CHECK(counts.wakes_by_ref == 1);
}

TEST_CASE("a wake reaches the most recently registered waker only") {
  test::Counts first, second;
  AtomicWaker slot;
  slot.register_waker(test::counting_waker(first));
  slot.register_waker(test::counting_waker(second));
  slot.wake_by_ref();
  CHECK(first.woken() == 0);
  CHECK(second.woken() == 1);
  CHECK(first.live() == 0);
}

TEST_CASE("take removes the waker so that later wakes reach nothing") {
  test::Counts counts;
  AtomicWaker slot;
  slot.register_waker(test::counting_waker(counts));
  Waker taken = slot.take();
  CHECK(taken.will_wake(test::counting_waker(counts)));
  slot.wake_by_ref();
  CHECK(counts.woken() == 0);
}

// Producers publish events and wake; the owner alternates between two
// wakers and consumes events only after a wake. Every event must be seen.
TEST_CASE("no event is lost between producers waking and the owner re-registering") {
  struct Signal : RefCounted<Signal> {
    std::atomic<int> wakes{0};
    void wake() { wakes.fetch_add(1, std::memory_order_release); }
  };
  constexpr int producers = 3;
  constexpr int events_each = 20000;
  AtomicWaker slot;
  std::atomic<int> published{0};
  Arc<Signal> signals[2] = {make_arc<Signal>(), make_arc<Signal>()};
  Waker wakers[2] = {waker_from(signals[0]), waker_from(signals[1])};

  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&] {
      for (int i = 0; i < events_each; ++i) {
        published.fetch_add(1, std::memory_order_release);
        slot.wake_by_ref();
      }
    });
  }
  int consumed = 0;
  int seen_wakes[2] = {0, 0};
  for (int round = 0; consumed < producers * events_each; ++round) {
    int which = round & 1;
    slot.register_waker(wakers[which]);
    int now = published.load(std::memory_order_acquire);
    if (now != consumed) {
      consumed = now;
      continue;
    }
    // Nothing new: wait for a wake of *this* waker (or the other one, which
    // registration may have woken instead), as a parked task would.
    while (signals[0]->wakes.load(std::memory_order_acquire) == seen_wakes[0]
           && signals[1]->wakes.load(std::memory_order_acquire) == seen_wakes[1]) {
      std::this_thread::yield();
    }
    seen_wakes[0] = signals[0]->wakes.load();
    seen_wakes[1] = signals[1]->wakes.load();
  }
  for (auto& t : threads) t.join();
  CHECK(consumed == producers * events_each);
}
