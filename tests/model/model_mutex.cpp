// FutexMutex's protocol (core/detail/concurrency.hpp: one word, Unlocked,
// Locked or Contended, and a futex to sleep on), compiled over the model
// checker's atomics and futex and run under every interleaving of
// threads that lock and unlock it. The invariants: no two threads hold it
// at once, every increment made under it survives, and no thread sleeps
// for ever (a lost wake-up is a deadlock, which the checker reports).
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/core/detail/concurrency.hpp"

namespace {

using model_task::report;

struct World {
  pollux::detail::FutexMutex mutex;
  int holders = 0;  // the model runs one thread at a time: plain ints are exact
  int count = 0;
};

// Takes the lock `rounds` times; inside, checks it is alone and counts.
void critical(World& w, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    w.mutex.lock();
    model::check(++w.holders == 1, "two threads hold the mutex at once");
    int seen = w.count;
    model::yield();  // another thread may run here: if it got in, the count breaks
    w.count = seen + 1;
    --w.holders;
    w.mutex.unlock();
  }
}

std::uint64_t explore(int threads, int rounds) {
  model::Checker checker(3);
  return checker.explore([=] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e;
    for (int t = 0; t < threads; ++t) e.threads.push_back([w, rounds] { critical(*w, rounds); });
    e.finish = [w, threads, rounds] {
      model::check(w->count == threads * rounds, "an increment under the mutex was lost");
    };
    return e;
  });
}

}  // namespace

TEST_CASE("two threads taking the mutex twice each never hold it together, and neither sleeps for ever") {
  report(explore(2, 2));
}

TEST_CASE("three threads contending for the mutex all get it: an unlock always wakes a sleeper") {
  report(explore(3, 1));
}

TEST_CASE("try_lock takes the mutex only when no thread holds it") {
  report([] {
    model::Checker checker(3);
    return checker.explore([] {
      auto w = std::make_shared<World>();
      model::Checker::Execution e;
      e.threads.push_back([w] { critical(*w, 1); });
      e.threads.push_back([w] {
        if (!w->mutex.try_lock()) return;
        model::check(++w->holders == 1, "try_lock took a mutex that was held");
        --w->holders;
        w->mutex.unlock();
      });
      e.finish = [w] { model::check(w->count == 1, "the locking thread's increment was lost"); };
      return e;
    });
  }());
}
