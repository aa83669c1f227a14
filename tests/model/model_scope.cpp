// A Scope's protocol (exec/detail/scope_state.hpp and scope_cell.hpp),
// compiled over the model checker's atomics, mutex and futex and run under
// every schedule within the bound: a worker polls a child while cancellers
// (a failing sibling, the scope's destructor, the child's own task being
// dropped) race for its future. The invariants are the ones borrowing
// needs: each child's future is destroyed exactly once, never while it is
// being polled, never polled after; the scope's destructor returns only
// once every child's future is gone; and a claimed child's task is woken,
// so that it finishes.
#include <doctest/doctest.h>

#include <exception>
#include <memory>
#include <stdexcept>

#include "model_task.hpp"
#include "pollux/exec/detail/scope_state.hpp"
#include "support.hpp"

namespace {

using pollux::detail::Atomic;
using pollux::detail::ScopeCell;
using pollux::detail::ScopeChild;
using pollux::detail::ScopeState;

// A child whose "future" is two flags: being polled, and destroyed.
struct FakeChild : ScopeChild {
  Atomic<int> polling{0};
  Atomic<int> destroyed{0};
  Atomic<int> worker_ended{0};
  Atomic<int> task_dropped{0};
  test::Counts task_wakes;

  FakeChild() {
    destroy = &destroy_future;
    task = test::counting_waker(task_wakes);
  }
  static void destroy_future(ScopeChild* self) noexcept {
    auto& c = *static_cast<FakeChild*>(self);
    model::check(c.polling.load() == 0, "a child's future was destroyed while a worker polled it");
    model::check(c.destroyed.fetch_add(1) == 0, "a child's future was destroyed twice");
  }
};

struct World {
  ScopeState scope;
  FakeChild children[2];
  Atomic<bool> drained{false};

  explicit World(int linked) {
    for (int i = 0; i < linked; ++i) REQUIRE(scope.link(children[i]));
  }
};

// The worker's turn, as ScopedChild::poll takes it: one poll, which ends
// the child when `finish` (Ready, or thrown when `fail`), else Pending.
void poll_child(World& w, FakeChild& c, bool finish, bool fail = false) {
  switch (c.cell.begin_poll()) {
    case ScopeCell::kGone:
    case ScopeCell::kClaimed:
      return;
    default:
      break;
  }
  model::check(c.destroyed.load() == 0, "a child was polled after its future was destroyed");
  model::check(!w.drained.load(), "a child was polled after its scope's destructor returned");
  c.polling.store(1);
  c.polling.store(0);
  if (!finish && c.cell.end_poll()) return;
  c.worker_ended.store(1);
  FakeChild::destroy_future(&c);
  if (fail) {
    c.scope->child_failed(c, std::make_exception_ptr(std::runtime_error("child failed")));
  } else {
    c.scope->child_ended(c);
  }
}

// The child's task is dropped (its executor shuts down): once child_dropped
// returns, the task frees the child's memory, so its future must be gone.
void drop_task(FakeChild& c) {
  c.task_dropped.store(1);
  ScopeState::child_dropped(c);
  model::check(c.destroyed.load() == 1, "a dropped child's task went on before its future was destroyed");
}

// The scope's destructor: returns once every child's future is gone.
void destroy_scope(World& w) {
  w.scope.drain();
  for (FakeChild& c : w.children) {
    if (c.scope != nullptr)
      model::check(c.destroyed.load() == 1, "the scope's destructor returned before a child was destroyed");
  }
  w.drained.store(true);
}

// A preemption bound of 2: each race above needs at most two preemptions
// (into the window between a claim and its kGone, and between a poll's
// begin and end); a third only multiplies the executions.
std::uint64_t explore(int bound, model::Checker::Execution (*scenario)(std::shared_ptr<World>)) {
  model::Checker checker(bound);
  return checker.explore([scenario] {
    auto w = std::make_shared<World>(2);
    model::Checker::Execution e = scenario(w);
    e.finish = [w] {
      for (FakeChild& c : w->children) {
        model::check(c.destroyed.load() == 1, "a child's future was never destroyed");
        model::check(c.cell.phase() == ScopeCell::kGone, "a child's cell did not end gone");
        model::check(c.worker_ended.load() == 1 || c.task_dropped.load() == 1 || c.task_wakes.woken() == 1,
                     "a child destroyed by a canceller was not woken exactly once to finish its task");
      }
      model::check(w->scope.live() == 0, "the scope still counts a child");
    };
    return e;
  });
}

}  // namespace

TEST_CASE("a scope's destructor destroys a child its worker is polling only after that poll") {
  model_task::report(explore(2, [](std::shared_ptr<World> w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      poll_child(*w, w->children[0], false);
      poll_child(*w, w->children[0], false);  // the next poll, if the first ended Pending
    });
    e.threads.push_back([w] { poll_child(*w, w->children[1], true); });
    e.threads.push_back([w] { destroy_scope(*w); });
    return e;
  }));
}

TEST_CASE("a failing child cancels an idle sibling and a polled one, each destroyed exactly once") {
  model_task::report(explore(2, [](std::shared_ptr<World> w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { poll_child(*w, w->children[0], true, true); });
    e.threads.push_back([w] { poll_child(*w, w->children[1], false); });
    e.threads.push_back([w] { destroy_scope(*w); });
    return e;
  }));
}

TEST_CASE("a child's task dropped while a canceller claims it waits for that canceller") {
  model_task::report(explore(2, [](std::shared_ptr<World> w) {
    model::Checker::Execution e;
    e.threads.push_back([w] { drop_task(w->children[0]); });
    e.threads.push_back([w] { w->scope.cancel_all(); });
    e.threads.push_back([w] {
      poll_child(*w, w->children[1], false);
      destroy_scope(*w);
    });
    return e;
  }));
}

TEST_CASE("a claimed child's task is woken so that it finishes") {
  model_task::report(explore(2, [](std::shared_ptr<World> w) {
    model::Checker::Execution e;
    e.threads.push_back([w] {
      poll_child(*w, w->children[0], false);
      // Woken by the claimer (or never claimed): a later poll finds it gone.
      if (w->children[0].task_wakes.woken() > 0) poll_child(*w, w->children[0], false);
    });
    e.threads.push_back([w] {
      w->scope.cancel_all();
      drop_task(w->children[1]);
    });
    return e;
  }));
}
