// The batch semaphore's protocol (sync/detail/batch_semaphore.hpp, under
// Semaphore, Mutex and RwLock), compiled over the model checker's atomics
// and mutex and run under every interleaving of acquires, releases,
// cancelled acquires and close. The invariants: no permit is lost or made
// up (the count at the end is the count at the start, less what is held);
// no wake is lost (a lost one leaves an acquire asleep for ever, which the
// checker reports as a deadlock); no waker outlives its future.
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/sync/detail/batch_semaphore.hpp"

namespace {

using model_task::poll_once;
using model_task::report;
using model_task::run_to_completion;
using model_task::TaskWaker;
using pollux::detail::AcquireFuture;
using pollux::detail::BatchSemaphore;

struct World {
  explicit World(std::size_t permits) : semaphore(permits) {}
  BatchSemaphore semaphore;
  TaskWaker tasks[3];
  // What one permit guards, as a Mutex's value: each holder writes it, so
  // a release must happen-before the acquire that gets its permit.
  model::Cell<int> guarded{0};
};

// Every schedule of the threads `body(world)` makes, on a semaphore of
// `permits`; at the end, `permits_after` are free and no waker leaked.
template <class Body>
std::uint64_t explore(std::size_t permits, std::size_t permits_after, Body body, int bound = 3) {
  model::Checker checker(bound);
  return checker.explore([&] {
    auto w = std::make_shared<World>(permits);
    model::Checker::Execution e = body(w);
    e.finish = [w, permits_after] {
      model::check(w->semaphore.available() == permits_after, "permits were lost or made up");
      for (auto& task : w->tasks) model::check(!task.leaked(), "an acquire's waker outlived it");
    };
    return e;
  });
}

// Acquires n permits as a task does, checks that it got them, then gives
// them back.
void acquire_release(World& w, int task, std::size_t n) {
  AcquireFuture acquire(w.semaphore, n);
  model::check(run_to_completion(acquire, w.tasks[task]), "an open semaphore refused an acquire");
  w.guarded.write() += 1;  // every caller holds all of the permits there are
  w.semaphore.release(n);
}

}  // namespace

TEST_CASE("two tasks contending for one permit both get it in turn, in any order") {
  report(explore(1, 1, [](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { acquire_release(*w, 0, 1); });
    e.threads.push_back([w] { acquire_release(*w, 1, 1); });
    return e;
  }));
}

TEST_CASE("an acquire of two permits gathers them from two releases of one") {
  report(explore(
      0, 2,
      [](auto w) {
        model::Checker::Execution e;
        e.threads.push_back([w] {
          AcquireFuture acquire(w->semaphore, 2);
          model::check(run_to_completion(acquire, w->tasks[0]), "an open semaphore refused an acquire");
          w->semaphore.release(2);
        });
        e.threads.push_back([w] { w->semaphore.release(1); });
        e.threads.push_back([w] { w->semaphore.release(1); });
        return e;
      },
      2));
}

TEST_CASE("an acquire dropped while queued or granted passes its permits to the next waiter") {
  report(explore(
      0, 1,
      [](auto w) {
        model::Checker::Execution e;
        e.threads.push_back([w] {
          AcquireFuture acquire(w->semaphore, 1);
          if (poll_once(acquire, w->tasks[0])) w->semaphore.release(1);  // it got the permit: done with it
        });
        e.threads.push_back([w] { acquire_release(*w, 1, 1); });
        e.threads.push_back([w] { w->semaphore.release(1); });
        return e;
      },
      2));
}

TEST_CASE("close racing a queued acquire completes it with Closed and keeps the permits") {
  report(explore(1, 1, [](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      AcquireFuture acquire(w->semaphore, 2);  // one permit short: it waits
      model::check(!run_to_completion(acquire, w->tasks[0]), "a closed semaphore granted an acquire");
    });
    e.threads.push_back([w] { w->semaphore.close(); });
    return e;
  }));
}
