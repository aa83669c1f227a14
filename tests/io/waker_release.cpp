// Rule 5 for every future that stores a waker in a primitive's slot or
// list: destroyed while it waits, or completed after a wake, it leaves no
// clone of its waker behind. A counting waker says how many clones live;
// the original is the only one allowed once the future is done or gone.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "io_support.hpp"
#include "support.hpp"

using namespace pollux;
using test::Probe;

TEST_CASE("an mpsc recv destroyed while it waits leaves no waker in the channel") {
  auto [tx, rx] = mpsc::channel<int>(4);
  Probe probe;
  {
    auto recv = rx.recv();
    CHECK(recv.poll(probe.cx).is_pending());
    CHECK(probe.counts.live() == 2);
  }
  CHECK(probe.counts.live() == 1);
  CHECK(tx.try_send(1));
  CHECK(probe.counts.woken() == 0);  // the send reaches no waker of a gone future
}

TEST_CASE("an mpsc recv woken by a send and completed leaves no waker in the channel") {
  auto [tx, rx] = mpsc::unbounded_channel<int>();
  Probe probe;
  auto recv = rx.recv();
  CHECK(recv.poll(probe.cx).is_pending());
  CHECK(tx.send(7));
  CHECK(probe.counts.woken() == 1);
  auto got = recv.poll(probe.cx);
  REQUIRE(got.is_ready());
  CHECK(got.value() == 7);
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("an mpsc receiver polled as a stream and then destroyed leaves no waker with the senders") {
  auto [tx, rx] = mpsc::channel<int>(1);
  Probe probe;
  {
    auto receiver = std::move(rx);
    CHECK(receiver.poll_next(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("a bounded mpsc send destroyed while it waits for room leaves no waker") {
  auto [tx, rx] = mpsc::channel<int>(1);
  CHECK(tx.try_send(1));
  Probe probe;
  {
    auto send = tx.send(2);
    CHECK(send.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  CHECK(rx.try_recv().value() == 1);
  CHECK(probe.counts.woken() == 0);
}

TEST_CASE("a oneshot receiver destroyed while it waits, or completed after a wake, leaves no waker") {
  Probe waiting;
  {
    auto [tx, rx] = oneshot::channel<int>();
    CHECK(rx.poll(waiting.cx).is_pending());
    { auto gone = std::move(rx); }
    CHECK(waiting.counts.live() == 1);
    (void)tx.send(1);
  }
  CHECK(waiting.counts.woken() == 0);
  Probe completed;
  auto [tx, rx] = oneshot::channel<int>();
  CHECK(rx.poll(completed.cx).is_pending());
  (void)tx.send(2);
  CHECK(rx.poll(completed.cx).is_ready());
  { auto gone = std::move(rx); }
  CHECK(completed.counts.live() == 1);
}

TEST_CASE("a notified() destroyed while it waits, or completed after a wake, leaves no waker") {
  Notify notify;
  Probe waiting;
  {
    auto notified = notify.notified();
    CHECK(notified.poll(waiting.cx).is_pending());
  }
  CHECK(waiting.counts.live() == 1);
  Probe completed;
  auto notified = notify.notified();
  CHECK(notified.poll(completed.cx).is_pending());
  notify.notify_one();
  CHECK(notified.poll(completed.cx).is_ready());
  CHECK(completed.counts.live() == 1);
}

TEST_CASE("a broadcast recv destroyed while it waits, or completed after a wake, leaves no waker") {
  auto [tx, rx] = broadcast::channel<int>(4);
  Probe waiting;
  {
    auto recv = rx.recv();
    CHECK(recv.poll(waiting.cx).is_pending());
  }
  CHECK(waiting.counts.live() == 1);
  Probe completed;
  auto recv = rx.recv();
  CHECK(recv.poll(completed.cx).is_pending());
  CHECK(tx.send(3));
  CHECK(recv.poll(completed.cx).is_ready());
  CHECK(completed.counts.live() == 1);
}

TEST_CASE("a watch changed() destroyed while it waits, or completed after a wake, leaves no waker") {
  auto [tx, rx] = watch::channel<int>(0);
  Probe waiting;
  {
    auto changed = rx.changed();
    CHECK(changed.poll(waiting.cx).is_pending());
  }
  CHECK(waiting.counts.live() == 1);
  Probe completed;
  auto changed = rx.changed();
  CHECK(changed.poll(completed.cx).is_pending());
  CHECK(tx.send(1));
  CHECK(changed.poll(completed.cx).is_ready());
  CHECK(completed.counts.live() == 1);
}

TEST_CASE("a semaphore acquire destroyed while it waits, or completed after a wake, leaves no waker") {
  Semaphore semaphore(1);
  auto held = semaphore.try_acquire();
  REQUIRE(held);
  Probe waiting;
  {
    auto acquire = semaphore.acquire();
    CHECK(acquire.poll(waiting.cx).is_pending());
  }
  CHECK(waiting.counts.live() == 1);
  Probe completed;
  auto acquire = semaphore.acquire();
  CHECK(acquire.poll(completed.cx).is_pending());
  { SemaphorePermit released = std::move(held).value(); }
  CHECK(acquire.poll(completed.cx).is_ready());
  CHECK(completed.counts.live() == 1);
}

TEST_CASE("a spawn_blocking handle destroyed while the function runs lets go of its waker at once") {
  BlockingPool pool;
  std::atomic<bool> release{false};
  Probe probe;
  {
    auto handle = spawn_blocking_on(pool, [&release] {
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    CHECK(handle.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);  // while the pool thread still holds the shared state
  release = true;
}

TEST_CASE("a spawn_blocking handle completed after its wake keeps no waker in the shared state") {
  BlockingPool pool;
  std::atomic<bool> release{false};
  Probe probe;
  auto handle = spawn_blocking_on(pool, [&release] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return 5;
  });
  CHECK(handle.poll(probe.cx).is_pending());
  release = true;
  while (probe.counts.woken() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto got = handle.poll(probe.cx);
  REQUIRE(got.is_ready());
  CHECK(got.value() == 5);
  CHECK(probe.counts.live() == 1);
}

TEST_CASE("a socket read and an accept destroyed while they wait leave no waker in the reactor") {
  auto rt = Runtime::current_thread();
  auto guard = rt.enter();
  auto listener = TcpListener::bind("127.0.0.1:0");
  Probe accepting;
  {
    auto accept = listener.accept();
    CHECK(accept.poll(accepting.cx).is_pending());
  }
  CHECK(accepting.counts.live() == 1);
  auto [client, server] = test::connect_pair(rt, listener);
  Probe reading;
  char buffer[8];
  {
    auto read = server.read(std::span<char>(buffer));
    CHECK(read.poll(reading.cx).is_pending());
  }
  CHECK(reading.counts.live() == 1);
}

TEST_CASE("an abortable future destroyed while it waits leaves no waker with its handle") {
  auto [future, handle] = abortable(pending_future<int>());
  Probe probe;
  {
    auto gone = std::move(future);
    CHECK(gone.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);
  handle.abort();
  CHECK(probe.counts.woken() == 0);
}
