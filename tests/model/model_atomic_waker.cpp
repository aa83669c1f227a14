// AtomicWaker's protocol (core/atomic_waker.hpp), compiled over the model
// checker's atomics (POLLUX_MODEL) and run under every interleaving of its
// owner and one or two producers, at each atomic operation on its state.
// The invariant is the one the type promises: no wake is lost. Producers
// publish an event, then wake; the owner polls as a task does until it has
// seen every event, and a lost wake leaves it waiting for ever.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "model_task.hpp"
#include "pollux/core/atomic_waker.hpp"
#include "support.hpp"

namespace {

using pollux::AtomicWaker;
using pollux::Waker;

struct World {
  AtomicWaker slot;
  pollux::detail::Atomic<int> events{0};
  test::Counts first, second;
  test::Counts* last = nullptr;  // the waker the owner registered last
};

// Whether `waker` is `counts`' waker (without making one: a Waker made and
// dropped would count as a drop).
bool is_waker_of(const Waker& waker, const test::Counts& counts) { return waker.as_raw().data == &counts; }

// The owner polls as a task does: register its waker, look for the events,
// and, short of all of them, wait to be woken, then poll again. A wake
// that is lost leaves it waiting for ever (the checker's deadlock). With
// `alternate`, each poll registers the other of two wakers, so the slot is
// written again while producers may read it.
// A registration that meets a wake in flight wakes the new waker at once,
// and the task polls again; it runs again only once another thread moved
// (as a re-queued task runs behind others), or the model would explore an
// owner re-polling for ever while the producer never runs.
void own(World& w, int producers, bool alternate) {
  test::Counts* counts = &w.first;
  for (;;) {
    int woken_before = counts->woken();
    std::uint64_t writes_before = model::detail::writes;
    w.slot.register_waker(test::counting_waker(*counts));
    w.last = counts;
    if (w.events.load() == producers) return;
    model::block_until([counts, woken_before, writes_before] {
      return counts->woken() > woken_before && model::detail::writes != writes_before;
    });
    counts->woke.acquire();  // the poll a wake leads to happens after it
    if (alternate) counts = counts == &w.first ? &w.second : &w.first;
  }
}

void produce(World& w) {
  w.events.fetch_add(1);
  w.slot.wake_by_ref();
}

// Every schedule of the owner and `producers` producers within `bound`
// preemptions; reports how many ran.
void explore(int producers, int bound, bool alternate) {
  model::Checker checker(bound);
  std::uint64_t runs = checker.explore([=] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e;
    e.threads.push_back([w, producers, alternate] { own(*w, producers, alternate); });
    for (int i = 0; i < producers; ++i) e.threads.push_back([w] { produce(*w); });
    e.finish = [w] {
      // A registration that met a wake in flight is not stored: it wakes
      // the new waker instead, whose poll registers again. So the slot
      // holds the last waker, or that waker was woken.
      Waker taken = w->slot.take();
      model::check(is_waker_of(taken, *w->last) || w->last->woken() > 0,
                   "the last registered waker was neither stored nor woken");
    };
    return e;
  });
  model_task::report(runs);
}

}  // namespace

TEST_CASE("an AtomicWaker loses no wake between one producer and its owner, in any order") { explore(1, 3, false); }

TEST_CASE("an AtomicWaker loses no wake while its owner registers another waker at each poll") { explore(1, 3, true); }

TEST_CASE("an AtomicWaker loses no wake with two producers racing an owner that keeps its waker") {
  explore(2, 3, false);
}

TEST_CASE("an AtomicWaker loses no wake with two producers racing an owner that changes its waker") {
  explore(2, 3, true);
}

TEST_CASE("an AtomicWaker's take waits out a wake in flight and returns the last waker") {
  model::Checker checker(3);
  std::uint64_t runs = checker.explore([] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e;
    w->slot.register_waker(test::counting_waker(w->first));  // before the threads: the slot holds a waker
    e.threads.push_back([w] { produce(*w); });
    e.threads.push_back([w] {
      Waker taken = w->slot.take();
      model::check(is_waker_of(taken, w->first), "take() lost the registered waker");
    });
    e.finish = [w] { model::check(w->first.live() == 0, "a clone of the waker outlived take()"); };
    return e;
  });
  model_task::report(runs);
}
