// Semaphore: try_acquire, FIFO acquires, add_permits, forget, close, and
// cancellation of an acquire in every state (tokio's sync_semaphore.rs,
// in C++).
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

TEST_CASE("a semaphore with no permits refuses try_acquire") {
  Semaphore sem(0);
  CHECK(sem.try_acquire().error() == TryAcquireError::NoPermits);
}

TEST_CASE("try_acquire takes a permit and the permit gives it back when destroyed") {
  Semaphore sem(1);
  {
    auto permit = sem.try_acquire();
    REQUIRE(permit);
    CHECK(sem.available_permits() == 0);
    CHECK(!sem.try_acquire());
  }
  CHECK(sem.available_permits() == 1);
  CHECK(sem.try_acquire());
}

TEST_CASE("try_acquire_many takes several permits or none") {
  Semaphore sem(3);
  CHECK(sem.try_acquire_many(4).error() == TryAcquireError::NoPermits);
  auto permit = sem.try_acquire_many(3);
  REQUIRE(permit);
  CHECK(permit.value().num_permits() == 3);
  CHECK(sem.available_permits() == 0);
}

TEST_CASE("acquire is Ready at once when a permit is free") {
  Semaphore sem(1);
  auto acquire = sem.acquire();
  auto result = test::poll_once(acquire);
  REQUIRE(result.is_ready());
  CHECK(result.value());
  CHECK(sem.available_permits() == 0);
}

TEST_CASE("a waiting acquire is woken by the permit's release and gets it") {
  Semaphore sem(1);
  auto held = sem.try_acquire();
  test::Probe probe;
  auto acquire = sem.acquire();
  CHECK(acquire.poll(probe.cx).is_pending());
  held.value().release();
  CHECK(probe.counts.woken() == 1);
  CHECK(sem.available_permits() == 0);  // handed over, not freed
  CHECK(!sem.try_acquire());            // so nobody can barge in
  CHECK(acquire.poll(probe.cx).value());
}

TEST_CASE("waiters are served in the order they first waited") {
  Semaphore sem(0);
  std::vector<Semaphore::Acquire> acquires;
  for (int i = 0; i < 3; ++i) acquires.push_back(sem.acquire());
  for (auto& a : acquires) CHECK(test::poll_once(a).is_pending());
  sem.add_permits(1);
  auto first = test::poll_once(acquires[0]);  // held: destroying it would pass the permit on
  CHECK(first.is_ready());
  CHECK(test::poll_once(acquires[1]).is_pending());
  sem.add_permits(1);
  CHECK(test::poll_once(acquires[2]).is_pending());
  auto second = test::poll_once(acquires[1]);
  CHECK(second.is_ready());
}

TEST_CASE("a large request at the head is not overtaken by small ones behind it") {
  Semaphore sem(1);
  auto big = sem.acquire_many(3);
  auto small = sem.acquire();
  CHECK(test::poll_once(big).is_pending());  // takes the free permit and waits for 2 more
  CHECK(sem.available_permits() == 0);
  CHECK(test::poll_once(small).is_pending());
  sem.add_permits(1);
  CHECK(test::poll_once(small).is_pending());
  sem.add_permits(1);
  auto big_permit = test::poll_once(big);
  REQUIRE(big_permit.is_ready());
  CHECK(big_permit.value().value().num_permits() == 3);
  CHECK(test::poll_once(small).is_pending());
}

TEST_CASE("a re-poll with another waker replaces the stored one") {
  Semaphore sem(0);
  test::Counts first_counts, second_counts;
  Waker first = test::counting_waker(first_counts), second = test::counting_waker(second_counts);
  auto acquire = sem.acquire();
  Context cx1(first), cx2(second);
  CHECK(acquire.poll(cx1).is_pending());
  CHECK(acquire.poll(cx2).is_pending());
  sem.add_permits(1);
  CHECK(first_counts.woken() == 0);
  CHECK(second_counts.woken() == 1);
  CHECK(first_counts.live() == 1);  // the replaced clone was dropped
}

TEST_CASE("a forgotten permit leaves the semaphore smaller") {
  Semaphore sem(2);
  sem.try_acquire().value().forget();
  CHECK(sem.available_permits() == 1);
}

TEST_CASE("add_permits beyond the maximum throws and changes nothing") {
  Semaphore sem(Semaphore::kMaxPermits - 1);
  CHECK_THROWS_AS(sem.add_permits(2), std::invalid_argument);
  CHECK(sem.available_permits() == Semaphore::kMaxPermits - 1);
  sem.add_permits(1);
  CHECK(sem.available_permits() == Semaphore::kMaxPermits);
  CHECK_THROWS_AS(Semaphore(Semaphore::kMaxPermits + 1), std::invalid_argument);
}

TEST_CASE("close fails every waiter and every later acquire with a clear error") {
  Semaphore sem(0);
  auto waiting = sem.acquire();
  test::Probe probe;
  CHECK(waiting.poll(probe.cx).is_pending());
  sem.close();
  CHECK(probe.counts.woken() == 1);
  auto result = waiting.poll(probe.cx);
  REQUIRE(result.is_ready());
  CHECK(!result.value());
  auto later = sem.acquire();
  CHECK(!test::poll_once(later).value());
  CHECK(sem.try_acquire().error() == TryAcquireError::Closed);
  CHECK(sem.is_closed());
}

TEST_CASE("permits held when the semaphore closes may still be released") {
  Semaphore sem(1);
  auto permit = sem.try_acquire();
  sem.close();
  permit.value().release();
  CHECK(sem.available_permits() == 1);
}

TEST_CASE("an acquire destroyed before its first poll takes nothing") {
  Semaphore sem(1);
  { auto acquire = sem.acquire(); }
  CHECK(sem.available_permits() == 1);
}

TEST_CASE("a queued acquire destroyed passes the permits it gathered to the next waiter") {
  Semaphore sem(1);
  std::optional<Semaphore::Acquire> big(sem.acquire_many(2));
  auto next = sem.acquire();
  test::Probe probe;
  CHECK(big->poll(probe.cx).is_pending());  // holds 1 of its 2
  CHECK(next.poll(probe.cx).is_pending());
  big.reset();
  CHECK(probe.counts.woken() == 1);
  CHECK(next.poll(probe.cx).is_ready());
}

TEST_CASE("an acquire granted but destroyed before it saw the permit gives it back, and is not woken after") {
  Semaphore sem(1);
  auto held = sem.try_acquire();
  test::Probe probe;
  std::optional<Semaphore::Acquire> acquire(sem.acquire());
  CHECK(acquire->poll(probe.cx).is_pending());
  held.value().release();  // granted to `acquire`
  int woken = probe.counts.woken();
  acquire.reset();
  CHECK(sem.available_permits() == 1);
  CHECK(probe.counts.woken() == woken);
  CHECK(probe.counts.live() == 1);  // no probe.waker of ours is left behind
}

TEST_CASE("a semaphore is never over-granted by tasks on two workers") {
  auto rt = Runtime::multi_thread(2);
  Semaphore sem(3);
  std::atomic<int> holders{0};
  std::atomic<int> over{0};
  std::vector<JoinHandle<void>> handles;
  for (int t = 0; t < 16; ++t) {
    handles.push_back(rt.spawn(
        poll_fn<void>([&, i = 0, acquire = std::optional<Semaphore::Acquire>()](Context& cx) mutable -> Poll<void> {
          while (i < 500) {
            if (!acquire) acquire.emplace(sem.acquire());
            auto permit = acquire->poll(cx);
            if (permit.is_pending()) return pending;
            if (holders.fetch_add(1) + 1 > 3) over++;
            holders.fetch_sub(1);
            acquire.reset();
            ++i;
          }
          return ready();
        })));
  }
  for (auto& h : handles) rt.block_on(std::move(h)).value();
  CHECK(over == 0);
  CHECK(sem.available_permits() == 3);
}

TEST_CASE("acquires from plain threads through block_on all finish and return every permit") {
  Semaphore sem(2);
  std::atomic<int> holders{0}, over{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto permit = block_on(sem.acquire());
        if (holders.fetch_add(1) + 1 > 2) over++;
        holders.fetch_sub(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(over == 0);
  CHECK(sem.available_permits() == 2);
}

TEST_CASE("a queued acquire destroyed on one thread while another releases loses no permit") {
  for (int round = 0; round < 2000; ++round) {
    Semaphore sem(1);
    auto held = sem.try_acquire();
    std::optional<Semaphore::Acquire> acquire(sem.acquire());
    test::Probe probe;
    REQUIRE(acquire->poll(probe.cx).is_pending());
    std::thread releaser([&] { held.value().release(); });
    acquire.reset();  // races with the release: before it, after it, or while it hands the permit over
    releaser.join();
    REQUIRE(sem.available_permits() == 1);
    REQUIRE(probe.counts.live() == 1);
  }
}
