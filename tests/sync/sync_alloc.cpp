// Counts heap allocations in the sync layer's warm paths: sending and
// receiving on a bounded channel, locking, acquiring, notifying, watching
// and broadcasting allocate nothing; an unbounded channel allocates at
// most one block per 32 values while it grows, and nothing once warm.
#include <doctest/doctest.h>

#include "counting_allocator.hpp"
#include "support.hpp"

using namespace pollux;

namespace {
// Polls `future` until Ready with a waker that is reused, as a task would.
template <class F>
auto drive(F&& future, Context& cx) {
  for (;;) {
    auto result = future.poll(cx);
    if (result.is_ready()) return std::move(result).value();
  }
}
}  // namespace

TEST_CASE("send and recv on a warm bounded channel allocate nothing, also when the sender waits for room") {
  auto [tx, rx] = mpsc::channel<std::uint64_t>(16);
  test::Probe probe;
  for (int i = 0; i < 200; ++i) {  // warm: the blocks exist and are reused
    CHECK(drive(tx.send(i), probe.cx));
    CHECK(drive(rx.recv(), probe.cx) == std::uint64_t(i));
  }
  long before = test::allocations;
  for (std::uint64_t round = 0; round < 1000; ++round) {
    for (std::uint64_t i = 0; i < 16; ++i) CHECK(tx.try_send(i));
    auto waiting = tx.send(99);
    CHECK(waiting.poll(probe.cx).is_pending());  // full: queued for room
    CHECK(drive(rx.recv(), probe.cx) == 0u);
    CHECK(drive(waiting, probe.cx));
    for (std::uint64_t i = 1; i < 16; ++i) CHECK(drive(rx.recv(), probe.cx) == i);
    CHECK(drive(rx.recv(), probe.cx) == 99u);
    auto idle = rx.recv();
    CHECK(idle.poll(probe.cx).is_pending());  // the receiver parks on the next slot
  }
  CHECK(test::allocations - before == 0);
}

TEST_CASE("an unbounded channel allocates at most one block per 32 values, and none once warm") {
  auto [tx, rx] = mpsc::unbounded_channel<std::uint64_t>();
  long before = test::allocations;
  for (std::uint64_t i = 0; i < 3200; ++i) CHECK(tx.send(i));
  CHECK(test::allocations - before <= 100);
  for (std::uint64_t i = 0; i < 3200; ++i) CHECK(rx.try_recv().value() == i);
  before = test::allocations;
  for (int round = 0; round < 100; ++round) {
    for (std::uint64_t i = 0; i < 64; ++i) CHECK(tx.send(i));
    for (std::uint64_t i = 0; i < 64; ++i) CHECK(rx.try_recv().value() == i);
  }
  CHECK(test::allocations - before == 0);
}

TEST_CASE("lock and unlock allocate nothing, contended or not") {
  Mutex<int> mutex(0);
  test::Probe probe;
  long before = test::allocations;
  for (int i = 0; i < 1000; ++i) {
    auto guard = drive(mutex.lock(), probe.cx);
    auto waiting = mutex.lock();
    CHECK(waiting.poll(probe.cx).is_pending());
    guard.unlock();
    auto next = drive(waiting, probe.cx);
    ++*next;
  }
  CHECK(test::allocations - before == 0);
  CHECK(*mutex.try_lock().value() == 1000);
}

TEST_CASE("acquire and release allocate nothing, contended or not") {
  Semaphore sem(1);
  RwLock<int> lock(0);
  test::Probe probe;
  long before = test::allocations;
  for (int i = 0; i < 1000; ++i) {
    auto permit = drive(sem.acquire(), probe.cx);
    auto waiting = sem.acquire_many(1);
    CHECK(waiting.poll(probe.cx).is_pending());
    permit.value().release();
    auto next = drive(waiting, probe.cx);
    auto reader = drive(lock.read(), probe.cx);
    auto writer = lock.write();
    CHECK(writer.poll(probe.cx).is_pending());
    reader.unlock();
    auto written = drive(writer, probe.cx);
  }
  CHECK(test::allocations - before == 0);
}

TEST_CASE("notify and notified allocate nothing") {
  Notify notify;
  test::Probe probe;
  long before = test::allocations;
  for (int i = 0; i < 1000; ++i) {
    auto notified = notify.notified();
    CHECK(notified.poll(probe.cx).is_pending());
    notify.notify_one();
    drive(notified, probe.cx);
    notify.notify_one();  // stored permit
    drive(notify.notified(), probe.cx);
    auto all = notify.notified();
    CHECK(all.poll(probe.cx).is_pending());
    notify.notify_waiters();
    drive(all, probe.cx);
  }
  CHECK(test::allocations - before == 0);
}

TEST_CASE("watch sends and changed() allocate nothing") {
  auto [tx, rx] = watch::channel<std::uint64_t>(0);
  test::Probe probe;
  long before = test::allocations;
  for (std::uint64_t i = 1; i <= 1000; ++i) {
    auto changed = rx.changed();
    CHECK(changed.poll(probe.cx).is_pending());
    CHECK(tx.send(i));
    CHECK(drive(changed, probe.cx));
    CHECK(*rx.borrow_and_update() == i);
  }
  CHECK(test::allocations - before == 0);
}

TEST_CASE("broadcast sends and receives allocate nothing once the first send made the ring") {
  auto [tx, rx] = broadcast::channel<std::uint64_t>(64);
  auto rx2 = tx.subscribe();
  test::Probe probe;
  CHECK(tx.send(7));  // makes the ring
  CHECK(drive(rx.recv(), probe.cx).value() == 7u);
  CHECK(drive(rx2.recv(), probe.cx).value() == 7u);
  long before = test::allocations;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    auto waiting = rx.recv();
    CHECK(waiting.poll(probe.cx).is_pending());
    CHECK(tx.send(i));
    CHECK(drive(waiting, probe.cx).value() == i);
    CHECK(drive(rx2.recv(), probe.cx).value() == i);
  }
  CHECK(test::allocations - before == 0);
}

TEST_CASE("waiting on a cancellation token allocates nothing, before or after the cancel") {
  CancellationToken token;
  test::Probe probe;
  long before = test::allocations;
  for (int i = 0; i < 1000; ++i) {
    auto waiting = token.cancelled();
    CHECK(waiting.poll(probe.cx).is_pending());
  }
  token.cancel();
  for (int i = 0; i < 1000; ++i) drive(token.cancelled(), probe.cx);
  CHECK(test::allocations - before == 0);
}

TEST_CASE("a broadcast channel makes its ring at its first send, so one nobody sends on costs one allocation") {
  long before = test::allocations;
  auto [tx, rx] = broadcast::channel<std::string>(1024);
  auto second = tx.subscribe();
  CHECK(test::allocations - before == 1);  // the channel's shared state, no slots
  test::Probe probe;
  auto waiting = rx.recv();
  CHECK(waiting.poll(probe.cx).is_pending());  // a receiver may wait on a channel without a ring
  before = test::allocations;
  CHECK(tx.send(std::string("short")));
  CHECK(test::allocations - before == 1);  // the ring
  CHECK(probe.counts.woken() == 1);
  CHECK(drive(waiting, probe.cx).value() == "short");
  CHECK(drive(second.recv(), probe.cx).value() == "short");
}
