// watch's protocol (sync/watch.hpp over sync/detail/seqlock_cell.hpp),
// compiled over the model checker's atomics and mutex and run under every
// interleaving of the sender's sends and drop with receivers that read and
// wait for changes. The invariants: a receiver never reads a torn value
// (two words written together are read together), never goes back to an
// older value, and always sees the last value before it sees the end; no
// change is lost (a receiver asleep for ever is a deadlock); no waker
// outlives its changed().
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "model_task.hpp"
#include "pollux/sync/watch.hpp"

namespace {

using model_task::report;
using model_task::run_to_completion;
using model_task::TaskWaker;

// Two words the sender writes as one: a read that mixes two sends shows.
struct Pair {
  std::uint64_t a;
  std::uint64_t b;
};

constexpr std::uint64_t kLast = 2;

struct World {
  TaskWaker tasks[2];
};

// Reads, and waits for changes, until the last value was seen; then the
// end must follow.
void follow(pollux::watch::Receiver<Pair>& rx, TaskWaker& task) {
  std::uint64_t last = 0;
  for (;;) {
    Pair value = *rx.borrow_and_update();
    model::check(value.a == value.b, "a receiver read a torn value");
    model::check(value.a >= last, "a receiver went back to an older value");
    last = value.a;
    auto changed = rx.changed();
    auto result = run_to_completion(changed, task);
    if (!result.has_value()) {
      model::check(last == kLast || rx.borrow()->a == kLast, "the end came before the last value");
      return;
    }
  }
}

std::uint64_t explore(int receivers, int bound) {
  model::Checker checker(bound);
  return checker.explore([=] {
    auto w = std::make_shared<World>();
    auto [tx, rx] = pollux::watch::channel<Pair>(Pair{0, 0});
    auto sender = std::make_shared<std::optional<pollux::watch::Sender<Pair>>>(std::move(tx));
    auto first = std::make_shared<pollux::watch::Receiver<Pair>>(std::move(rx));
    model::Checker::Execution e;
    e.threads.push_back([sender] {
      for (std::uint64_t v = 1; v <= kLast; ++v) (void)(*sender)->send(Pair{v, v});
      sender->reset();
    });
    e.threads.push_back([w, first] { follow(*first, w->tasks[0]); });
    if (receivers == 2) {
      auto second = std::make_shared<pollux::watch::Receiver<Pair>>(*first);
      e.threads.push_back([w, second] { follow(*second, w->tasks[1]); });
    }
    e.finish = [w] {
      for (auto& task : w->tasks) model::check(!task.leaked(), "a changed()'s waker outlived it");
    };
    return e;
  });
}

}  // namespace

TEST_CASE("a watch receiver sees every send's value whole, never older, and the end last") { report(explore(1, 2)); }

TEST_CASE("two watch receivers each see the last value and the end, whatever the order") { report(explore(2, 1)); }
