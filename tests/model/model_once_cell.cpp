// OnceCell's protocol (sync/once_cell.hpp: a one-permit semaphore decides
// who initializes, a release store publishes the value, the close wakes
// the waiters), compiled over the model checker's atomics and mutex and run
// under every interleaving of initializers, set and readers. The
// invariants: the initializer runs once; everyone who sees a value sees
// the same one; no waiter sleeps for ever (the checker reports a deadlock)
// and no waker outlives its future.
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/core/future.hpp"
#include "pollux/sync/once_cell.hpp"

namespace {

using model_task::report;
using model_task::run_to_completion;
using model_task::TaskWaker;

struct World {
  pollux::OnceCell<int> cell;
  int inits = 0;               // the model runs one thread at a time: a plain count is exact
  int seen[3] = {-1, -1, -1};  // -1: saw no value
  TaskWaker tasks[2];
};

// A get_or_init whose initializer gives `value` at once.
void get_or_init(World& w, int task, int value) {
  auto get = w.cell.get_or_init([&w, value] {
    ++w.inits;
    return pollux::ready_future(value);
  });
  w.seen[task] = run_to_completion(get, w.tasks[task]).get();
}

template <class Body>
std::uint64_t explore(Body body) {
  model::Checker checker(3);
  return checker.explore([&] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = body(w);
    e.finish = [w, scenario = std::move(e.finish)] {
      if (scenario) scenario();
      const int* value = w->cell.get();
      model::check(value != nullptr, "the cell has no value after every initializer finished");
      for (int seen : w->seen) model::check(seen == -1 || seen == *value, "two values were seen");
      for (auto& task : w->tasks) model::check(!task.leaked(), "a get_or_init's waker outlived it");
    };
    return e;
  });
}

}  // namespace

TEST_CASE("two get_or_init racing run one initializer, and a reader sees nothing or that value") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { get_or_init(*w, 0, 1); });
    e.threads.push_back([w] { get_or_init(*w, 1, 2); });
    e.threads.push_back([w] {
      if (const int* value = w->cell.get()) w->seen[2] = *value;
    });
    e.finish = [w] { model::check(w->inits == 1, "the initializer ran more than once"); };
    return e;
  }));
}

TEST_CASE("set racing get_or_init: one of them sets the value and both agree on it") {
  report(explore([](auto w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { get_or_init(*w, 0, 1); });
    e.threads.push_back([w] {
      if (w->cell.set(2)) w->seen[1] = 2;
    });
    return e;
  }));
}
