// Notify: notify_one's stored permit, FIFO wake-ups, notify_waiters, and
// cancellation of a notified() in every state (tokio's sync_notify.rs, in
// C++).
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "support.hpp"

using namespace pollux;

using test::Probe;

TEST_CASE("notify_one before notified() stores a permit that the next notified() takes at once") {
  Notify notify;
  notify.notify_one();
  auto notified = notify.notified();
  CHECK(test::poll_once(notified).is_ready());
  auto second = notify.notified();
  CHECK(test::poll_once(second).is_pending());  // one permit, taken
}

TEST_CASE("notify_one stores at most one permit") {
  Notify notify;
  notify.notify_one();
  notify.notify_one();
  auto first = notify.notified();
  auto second = notify.notified();
  CHECK(test::poll_once(first).is_ready());
  CHECK(test::poll_once(second).is_pending());
}

TEST_CASE("notify_one wakes a waiting notified() and completes it") {
  Notify notify;
  Probe probe;
  auto notified = notify.notified();
  CHECK(notified.poll(probe.cx).is_pending());
  notify.notify_one();
  CHECK(probe.counts.woken() == 1);
  CHECK(notified.poll(probe.cx).is_ready());
  auto next = notify.notified();
  CHECK(test::poll_once(next).is_pending());  // the notification was used, not stored
}

TEST_CASE("notify_one wakes the waiters in the order they began to wait") {
  Notify notify;
  Probe a, b;
  auto first = notify.notified();
  auto second = notify.notified();
  CHECK(second.poll(b.cx).is_pending());
  CHECK(first.poll(a.cx).is_pending());
  notify.notify_one();
  CHECK(b.counts.woken() == 1);
  CHECK(a.counts.woken() == 0);
  CHECK(second.poll(b.cx).is_ready());
  CHECK(first.poll(a.cx).is_pending());
}

TEST_CASE("notify_waiters wakes every waiter and stores no permit") {
  Notify notify;
  Probe a, b;
  auto first = notify.notified();
  auto second = notify.notified();
  CHECK(first.poll(a.cx).is_pending());
  CHECK(second.poll(b.cx).is_pending());
  notify.notify_waiters();
  CHECK(a.counts.woken() == 1);
  CHECK(b.counts.woken() == 1);
  CHECK(first.poll(a.cx).is_ready());
  CHECK(second.poll(b.cx).is_ready());
  auto later = notify.notified();
  CHECK(test::poll_once(later).is_pending());
}

TEST_CASE("notify_waiters completes a notified() created before it but not yet polled") {
  Notify notify;
  auto created = notify.notified();
  notify.notify_waiters();
  CHECK(test::poll_once(created).is_ready());
}

TEST_CASE("notify_waiters does not complete a notified() created after it") {
  Notify notify;
  notify.notify_waiters();
  auto created = notify.notified();
  CHECK(test::poll_once(created).is_pending());
}

TEST_CASE("a re-poll with another waker replaces the stored one") {
  Notify notify;
  Probe a, b;
  auto notified = notify.notified();
  CHECK(notified.poll(a.cx).is_pending());
  CHECK(notified.poll(b.cx).is_pending());
  notify.notify_one();
  CHECK(a.counts.woken() == 0);
  CHECK(b.counts.woken() == 1);
}

TEST_CASE("a notified() destroyed before its first poll takes no permit") {
  Notify notify;
  notify.notify_one();
  { auto dropped = notify.notified(); }
  auto next = notify.notified();
  CHECK(test::poll_once(next).is_ready());
}

TEST_CASE("a queued notified() destroyed leaves the list, and notify_one then stores a permit") {
  Notify notify;
  Probe probe;
  {
    auto notified = notify.notified();
    CHECK(notified.poll(probe.cx).is_pending());
  }
  CHECK(probe.counts.live() == 1);  // its waker went with it
  notify.notify_one();
  CHECK(probe.counts.woken() == 0);
  auto next = notify.notified();
  CHECK(test::poll_once(next).is_ready());
}

TEST_CASE("a notified() chosen by notify_one but destroyed before it saw it passes the notification on") {
  Notify notify;
  Probe a, b;
  std::optional<Notify::Notified> chosen(notify.notified());
  auto next = notify.notified();
  CHECK(chosen->poll(a.cx).is_pending());
  CHECK(next.poll(b.cx).is_pending());
  notify.notify_one();  // picks `chosen`
  chosen.reset();
  CHECK(b.counts.woken() == 1);
  CHECK(next.poll(b.cx).is_ready());
}

TEST_CASE("a chosen notified() destroyed with nobody else waiting turns back into the stored permit") {
  Notify notify;
  Probe probe;
  std::optional<Notify::Notified> chosen(notify.notified());
  CHECK(chosen->poll(probe.cx).is_pending());
  notify.notify_one();
  chosen.reset();
  auto next = notify.notified();
  CHECK(test::poll_once(next).is_ready());
}

TEST_CASE("notify_waiters wakes more waiters than one batch holds") {
  Notify notify;
  std::vector<Probe> probes(100);
  std::vector<Notify::Notified> waiters;
  waiters.reserve(100);
  for (int i = 0; i < 100; ++i) waiters.push_back(notify.notified());
  for (int i = 0; i < 100; ++i) CHECK(waiters[i].poll(probes[i].cx).is_pending());
  notify.notify_waiters();
  for (int i = 0; i < 100; ++i) {
    CHECK(probes[i].counts.woken() == 1);
    CHECK(waiters[i].poll(probes[i].cx).is_ready());
  }
}

TEST_CASE("notify_one storms from another thread lose no wake-up") {
  // A waits for B's notification and answers with its own, 20,000 times;
  // a lost wake-up would hang the test.
  Notify to_a, to_b;
  constexpr int kRounds = 20'000;
  std::thread b([&] {
    for (int i = 0; i < kRounds; ++i) {
      block_on(to_b.notified());
      to_a.notify_one();
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    to_b.notify_one();
    block_on(to_a.notified());
  }
  b.join();
}

TEST_CASE("many notifiers on many threads wake a waiter once per notification or fewer, never none") {
  Notify notify;
  std::atomic<int> sent{0};
  constexpr int kPerThread = 5'000;
  std::vector<std::thread> notifiers;
  std::atomic<bool> done{false};
  int received = 0;
  std::thread waiter([&] {
    // Waits at least once, and once more after every wake that came
    // before `done`: the notify_one made after `done` is set ends the last
    // wait, woken or through the stored permit.
    do {
      block_on(notify.notified());
      ++received;
    } while (!done.load());
  });
  for (int t = 0; t < 3; ++t) {
    notifiers.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        notify.notify_one();
        sent++;
      }
    });
  }
  for (auto& t : notifiers) t.join();
  done = true;
  notify.notify_one();
  waiter.join();
  CHECK(received >= 1);
  CHECK(received <= sent.load() + 1);
}

TEST_CASE("a notified() destroyed on one thread while another calls notify_one never loses the notification") {
  for (int round = 0; round < 2000; ++round) {
    Notify notify;
    std::optional<Notify::Notified> waiting(notify.notified());
    Probe probe;
    REQUIRE(waiting->poll(probe.cx).is_pending());
    std::thread notifier([&] { notify.notify_one(); });
    waiting.reset();  // before notify_one: it stores a permit; after: it passes it back
    notifier.join();
    auto next = notify.notified();
    REQUIRE(test::poll_once(next).is_ready());
    REQUIRE(probe.counts.live() == 1);
  }
}
