// Mutex<T>: guards, FIFO hand-off, try_lock, cancellation of lock(), and
// a counter incremented by 1,000 tasks on two workers (tokio's
// sync_mutex.rs, in C++).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("lock gives a guard to the value, and the guard unlocks when destroyed") {
  Mutex<std::string> mutex("a");
  {
    auto guard = block_on(mutex.lock());
    guard->append("b");
    CHECK(!mutex.try_lock());
  }
  auto guard = mutex.try_lock();
  REQUIRE(guard);
  CHECK(*guard.value() == "ab");
}

TEST_CASE("a waiting lock is woken by the unlock and gets the lock before any try_lock") {
  Mutex<int> mutex(0);
  auto held = mutex.try_lock();
  Probe probe;
  auto lock = mutex.lock();
  CHECK(lock.poll(probe.cx).is_pending());
  held.value().unlock();
  CHECK(probe.counts.woken() == 1);
  CHECK(!mutex.try_lock());  // handed to the waiter: no barging
  auto guard = lock.poll(probe.cx);
  REQUIRE(guard.is_ready());
}

TEST_CASE("waiting locks are granted in the order they began to wait") {
  Mutex<std::vector<int>> mutex;
  auto held = mutex.try_lock();
  std::vector<Mutex<std::vector<int>>::Lock> locks;
  std::vector<Probe> probes(3);
  for (int i = 0; i < 3; ++i) locks.push_back(mutex.lock());
  for (int i = 0; i < 3; ++i) CHECK(locks[i].poll(probes[i].cx).is_pending());
  held.value().unlock();
  for (int i = 0; i < 3; ++i) {
    CHECK(probes[i].counts.woken() == 1);
    auto guard = locks[i].poll(probes[i].cx);
    REQUIRE(guard.is_ready());
    guard.value()->push_back(i);
    if (i + 1 < 3) CHECK(probes[i + 1].counts.woken() == 0);
  }
  CHECK(*mutex.try_lock().value() == std::vector<int>{0, 1, 2});
}

TEST_CASE("a guard can be moved, and unlocks once") {
  Mutex<int> mutex(1);
  auto guard = block_on(mutex.lock());
  auto moved = std::move(guard);
  *moved = 2;
  moved.unlock();
  CHECK(*mutex.try_lock().value() == 2);
}

TEST_CASE("a lock destroyed while queued is skipped, and one granted but never polled unlocks") {
  Mutex<int> mutex(0);
  auto held = mutex.try_lock();
  Probe a, b;
  std::optional<Mutex<int>::Lock> first(mutex.lock());
  std::optional<Mutex<int>::Lock> second(mutex.lock());
  CHECK(first->poll(a.cx).is_pending());
  CHECK(second->poll(b.cx).is_pending());
  first.reset();  // queued: leaves the line
  held.value().unlock();
  CHECK(b.counts.woken() == 1);
  second.reset();  // granted, never saw it: unlocks
  CHECK(mutex.try_lock());
  CHECK(a.counts.live() == 1);
  CHECK(b.counts.live() == 1);
}

TEST_CASE("a mutex is incremented by 1,000 tasks on two workers without a lost update") {
  auto rt = Runtime::multi_thread(2);
  Mutex<long> mutex(0);
  std::vector<JoinHandle<void>> handles;
  for (int t = 0; t < 1000; ++t) {
    handles.push_back(
        rt.spawn(poll_fn<void>([&, lock = std::optional<Mutex<long>::Lock>()](Context& cx) mutable -> Poll<void> {
          if (!lock) lock.emplace(mutex.lock());
          auto guard = lock->poll(cx);
          if (guard.is_pending()) return pending;
          long value = *guard.value();
          *guard.value() = value + 1;
          return ready();
        })));
  }
  for (auto& h : handles) rt.block_on(std::move(h)).value();
  CHECK(*mutex.try_lock().value() == 1000);
}

TEST_CASE("a guard held across a yield makes the other tasks queue, and each gets its turn") {
  auto rt = Runtime::current_thread();
  Mutex<int> mutex(0);
  std::vector<JoinHandle<void>> handles;
  for (int t = 0; t < 8; ++t) {
    handles.push_back(
        rt.spawn(poll_fn<void>([&, i = 0, lock = std::optional<Mutex<int>::Lock>(),
                                guard = std::optional<MutexGuard<int>>()](Context& cx) mutable -> Poll<void> {
          while (i < 100) {
            if (guard) {  // resumed after the yield below, still holding it
              guard.reset();
              ++i;
              continue;
            }
            if (!lock) lock.emplace(mutex.lock());
            auto got = lock->poll(cx);
            if (got.is_pending()) return pending;
            lock.reset();
            ++*got.value();
            if (i % 16 == 15) {
              guard.emplace(std::move(got).value());
              cx.waker().wake_by_ref();  // yield while holding the lock
              return pending;
            }
            ++i;
          }
          return ready();
        })));
  }
  for (auto& h : handles) rt.block_on(std::move(h)).value();
  CHECK(*mutex.try_lock().value() == 800);
}
