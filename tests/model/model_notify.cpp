// Notify's protocol (sync/notify.hpp, sync/notify.cpp), compiled over the
// model checker's atomics and mutex and run under every interleaving of
// waiters and notifiers: notify_one against a first poll that may take a
// stored permit or queue, a chosen waiter dropped before it saw its
// notification, notify_waiters against a notified() created before it.
// The invariants: no notification is lost (a lost one leaves a waiter
// asleep for ever, which the checker reports as a deadlock), and no waker
// outlives its future.
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/sync/notify.hpp"

namespace {

using model_task::poll_once;
using model_task::report;
using model_task::run_to_completion;
using model_task::TaskWaker;

struct World {
  pollux::Notify notify;
  TaskWaker first, second;
  // Written before a notify_one, read by the waiter it completes: a
  // notification happens-before the wait it ends.
  model::Cell<int> published{0};
};

// A task that waits on a notified() created when it starts.
void wait_notified(World& w) {
  auto notified = w.notify.notified();
  run_to_completion(notified, w.first);
}

template <class Body>
std::uint64_t explore(Body body, int bound = 3) {
  model::Checker checker(bound);
  return checker.explore([&] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = body(w);
    e.finish = [w] {
      model::check(!w->first.leaked() && !w->second.leaked(), "a waiter's waker outlived its notified()");
    };
    return e;
  });
}

}  // namespace

TEST_CASE("a notify_one racing a waiter's first poll completes it, by permit or by wake") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      w->published.write() = 1;
      w->notify.notify_one();
    });
    e.threads.push_back([w] {
      wait_notified(*w);
      (void)w->published.read();
    });
    return e;
  }));
}

TEST_CASE("a notify_one whose chosen waiter is dropped passes on to the other waiter") {
  report(explore(
      [](auto w) {
        model::Checker::Execution e;
        e.threads.push_back([w] { w->notify.notify_one(); });
        e.threads.push_back([w] { wait_notified(*w); });
        e.threads.push_back([w] {
          auto notified = w->notify.notified();
          // Ready here took the notification for itself: hand it on, as its
          // task would after the work it was notified for.
          if (poll_once(notified, w->second)) w->notify.notify_one();
        });
        return e;
      },
      2));
}

TEST_CASE("notify_waiters completes a notified() created before it, polled before or after") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    auto notified = std::make_shared<pollux::Notify::Notified>(w->notify.notified());
    e.threads.push_back([w] { w->notify.notify_waiters(); });
    e.threads.push_back([w, notified] { run_to_completion(*notified, w->first); });
    return e;
  }));
}

TEST_CASE("a waiting notified() dropped while notify_waiters runs leaks no waker and blocks nobody") {
  report(explore(
      [](auto w) {
        model::Checker::Execution e;
        e.threads.push_back([w] { w->notify.notify_waiters(); });
        e.threads.push_back([w] {
          auto notified = w->notify.notified();
          (void)poll_once(notified, w->first);
        });
        e.threads.push_back([w] {
          auto notified = w->notify.notified();
          (void)poll_once(notified, w->second);
        });
        return e;
      },
      2));
}

TEST_CASE("a waiter polled again with the waker it stored is still woken by a notify_one that took that waker") {
  // The second poll is the one a select makes for a sibling's wake: it
  // skips the lock when its waker is the one stored, and must not miss the
  // notify_one that, meanwhile, took that waker out to wake it.
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { w->notify.notify_one(); });
    e.threads.push_back([w] {
      auto notified = w->notify.notified();
      if (poll_once(notified, w->first) || poll_once(notified, w->first)) return;
      run_to_completion(notified, w->first);
    });
    return e;
  }));
}
