// The wake side of pollux::awaitable (interop/detail/await_bridge.hpp and
// the waker's turn in interop/future_awaitable.hpp), compiled over the
// model checker's atomics and futex and run under every schedule within
// the bound. The coroutine's own thread polls and suspends while wakers
// come from other threads. The invariants: the future is never polled by
// two threads at once; the coroutine is resumed exactly once when the
// future's event comes; a frame destroyed while suspended returns only
// when no poll is in flight, and no poll starts after it; the output a
// poll stores happens-before the frame's destruction on another thread.
#include <doctest/doctest.h>

#include <memory>

#include "model_task.hpp"
#include "pollux/interop/future_awaitable.hpp"

namespace {

using pollux::detail::AwaitBlock;
using pollux::detail::AwaitBridge;

struct World {
  AwaitBlock block{{}, this, &poll, &resume};
  pollux::detail::Atomic<bool> event{false};
  // The checks' own counters are relaxed: they must not order what the
  // protocol under test has to order.
  pollux::detail::Atomic<int> polling{0};
  pollux::detail::Atomic<int> resumed{0};
  pollux::detail::Atomic<bool> detached{false};
  model::Cell<int> output{0};  // the future's output, stored in the frame's awaiter

  // The awaited future: Ready once the event came.
  static bool poll(void* self) {
    auto& w = *static_cast<World*>(self);
    model::check(!w.detached.load(std::memory_order_relaxed), "a poll started after the frame was destroyed");
    model::check(w.polling.fetch_add(1, std::memory_order_relaxed) == 0, "two threads polled the future at once");
    bool ready = w.event.load();
    if (ready) w.output.write() = 1;
    w.polling.fetch_sub(1, std::memory_order_relaxed);
    return ready;
  }
  // The coroutine resumes on the poller's own thread, which wrote the
  // output: only a frame destroyed on another thread needs it published.
  static void resume(void* self) { static_cast<World*>(self)->resumed.fetch_add(1, std::memory_order_relaxed); }
};

// The coroutine's await_suspend: its first poll made the block (the word
// starts at kPolling); it suspends, or polls again, or resumes itself.
void suspend(World& w) {
  bool done = World::poll(&w);
  for (;;) {
    if (done) {
      if (w.block.bridge.ready() == AwaitBridge::Next::Resume)
        w.resumed.fetch_add(1, std::memory_order_relaxed);  // not suspended at all
      return;
    }
    if (w.block.bridge.pending() == AwaitBridge::Next::Suspend) return;
    done = World::poll(&w);
  }
}

void event_and_wake(World& w) {
  w.event.store(true);
  pollux::detail::await_block_wake(w.block);
}

std::uint64_t explore(model::Checker::Execution (*scenario)(std::shared_ptr<World>), void (*check)(World&)) {
  model::Checker checker(3);
  return checker.explore([scenario, check] {
    auto w = std::make_shared<World>();
    model::Checker::Execution e = scenario(w);
    e.finish = [w, check] { check(*w); };
    return e;
  });
}

}  // namespace

TEST_CASE("a future awaited in a coroutine is polled by one thread at a time and resumes it exactly once") {
  model_task::report(explore(
      [](std::shared_ptr<World> w) {
        model::Checker::Execution e;
        e.threads.push_back([w] { suspend(*w); });
        e.threads.push_back([w] { event_and_wake(*w); });
        e.threads.push_back([w] { pollux::detail::await_block_wake(w->block); });  // a spurious wake
        return e;
      },
      [](World& w) { model::check(w.resumed.load() == 1, "the coroutine was not resumed exactly once"); }));
}

TEST_CASE("a frame destroyed while a waker polls its future waits for that poll, and no poll follows") {
  model_task::report(explore(
      [](std::shared_ptr<World> w) {
        suspend(*w);  // suspended before the scenario starts
        model::Checker::Execution e;
        e.threads.push_back([w] { event_and_wake(*w); });
        e.threads.push_back([w] { pollux::detail::await_block_wake(w->block); });
        e.threads.push_back([w] {
          w->block.bridge.detach();
          model::check(w->polling.load(std::memory_order_relaxed) == 0,
                       "the frame's destruction returned during a poll");
          w->detached.store(true, std::memory_order_relaxed);
          w->output.write() = 0;  // the frame, and the output in it, destroyed
        });
        return e;
      },
      [](World& w) {
        model::check(w.resumed.load() <= 1, "the coroutine was resumed twice");
        model::check(w.block.bridge.done(), "the bridge did not end");
      }));
}
