// FuturesUnordered's wake protocol (stream/futures_unordered.hpp over
// core/detail/woken_queue.hpp: a lock-free stack of woken nodes, one wake
// of the parent per empty-to-non-empty push), compiled over the model
// checker's atomics and run under every interleaving of the parent's polls
// with children woken from other threads, and with the set dropped while
// a child's waker is still held elsewhere. The invariants: every wake is
// seen (a child woken after its last poll is polled again, or the parent
// sleeps for ever, which the checker reports as a deadlock); a node is
// never touched after it was freed; nothing leaks.
#include <doctest/doctest.h>

#include <memory>
#include <optional>

#include "model_slab.hpp"
#include "model_task.hpp"
#include "pollux/core/atomic_waker.hpp"
#include "pollux/stream/futures_unordered.hpp"

namespace {

using model_task::poll_once;
using model_task::report;
using model_task::TaskWaker;

// What a child waits for: an event another thread fires, as a socket's
// readiness or a channel's value.
struct Event {
  pollux::detail::Atomic<bool> fired{false};
  pollux::AtomicWaker waker;

  void fire() {
    fired.store(true);
    waker.wake_by_ref();
  }
};

// Ready once its event fired; registers its waker first, then looks again
// (rule 2), as a leaf future does.
class Child {
 public:
  using Output = int;
  Child(std::shared_ptr<Event> event, int id) : event_(std::move(event)), id_(id) {}
  pollux::Poll<int> poll(pollux::Context& cx) {
    if (event_->fired.load()) return pollux::Poll<int>(std::in_place, id_);
    event_->waker.register_waker(cx.waker());
    if (event_->fired.load()) return pollux::Poll<int>(std::in_place, id_);
    return pollux::pending;
  }

 private:
  std::shared_ptr<Event> event_;
  int id_;
};

struct World {
  std::optional<pollux::FuturesUnordered<Child>> set{std::in_place};
  std::shared_ptr<Event> events[2] = {std::make_shared<Event>(), std::make_shared<Event>()};
  TaskWaker parent;
  int finished = 0;
};

// The parent's task: poll_next until the set is empty, sleeping between
// polls until its waker was woken.
void collect(World& w) {
  pollux::Context cx{w.parent.waker};
  for (;;) {
    int woken_before = w.parent.woken();
    auto next = w.set->poll_next(cx);
    if (next.is_ready()) {
      if (!next.value()) return;
      ++w.finished;
      continue;
    }
    model::block_until([&w, woken_before] { return w.parent.woken() > woken_before; });
    w.parent.counts.woke.acquire();  // the poll a wake leads to happens after it
  }
}

template <class Body>
std::uint64_t explore(Body body, int bound) {
  model::Checker checker(bound);
  std::size_t blocks = model_live_blocks();
  return checker.explore([&] {
    auto w = std::make_shared<World>();
    for (int i = 0; i < 2; ++i) w->set->push(Child(w->events[i], i));
    model::Checker::Execution e = body(w);
    e.finish = [w, blocks] {
      w->set.reset();
      for (auto& event : w->events) (void)event->waker.take();
      model::check(model_live_blocks() == blocks, "a node was never freed");
      model::check(!w->parent.leaked(), "a clone of the parent's waker leaked");
    };
    return e;
  });
}

}  // namespace

TEST_CASE("FuturesUnordered sees every child woken from another thread, whatever the order of wakes and polls") {
  report(explore(
      [](auto w) {
        model::Checker::Execution e;
        e.threads.push_back([w] { collect(*w); });
        e.threads.push_back([w] { w->events[0]->fire(); });
        e.threads.push_back([w] { w->events[1]->fire(); });
        return e;
      },
      2));
}

TEST_CASE(
    "a FuturesUnordered dropped while a child's waker is woken on another thread frees each node once, after its last touch") {
  report(explore(
      [](auto w) {
        model::Checker::Execution e;
        e.threads.push_back([w] {
          pollux::Context cx{w->parent.waker};
          (void)w->set->poll_next(cx);  // both children wait, their wakers held by the events
          w->set.reset();
        });
        e.threads.push_back([w] { w->events[0]->fire(); });
        return e;
      },
      3));
}
