// The single-core executor's sleep (embedded/executor.hpp) and the wakes
// that interrupts deliver, compiled over the model checker's atomics
// (POLLUX_MODEL with POLLUX_SINGLE_CORE): the core's thread runs the real
// SingleCoreExecutor and its static tasks; an interrupt is a second thread
// that becomes pending at any point, and whose handler runs only while the
// core has interrupts unmasked (it takes the model's mask, as the core's
// critical sections do). WFI is modelled as the hardware does it: it
// returns once an interrupt is pending, masked or not. The invariant: every
// wake a handler delivers gets its task polled, so run() returns; a lost
// wake leaves the core asleep for ever, which the checker reports as a
// deadlock.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "model.hpp"
#include "pollux/core/atomic_waker.hpp"
#include "pollux/embedded/executor.hpp"
#include "pollux/sync/static_channel.hpp"

namespace {

// Reports how many schedules a checker explored, and fails a scenario whose
// threads never met (model_task.hpp's, which this build cannot include: it
// brings the hosted library, which the single-core profile refuses).
void report(std::uint64_t runs) {
  MESSAGE(runs << " executions");
  CHECK(runs > 1);
}

// The interrupt line: pending from its request until its handler starts.
// A plain flag, read by the checker's scheduler in block_until: the
// scheduling points are the model's own (block_until, the mask's mutex).
std::atomic<bool> interrupt_pending{false};

// The hardware takes a pending interrupt as soon as the core unmasks: the
// core's thread does not go on until the handler has started.
void take_pending_interrupt() {
  if (model::detail::self == 0) model::block_until([] { return !interrupt_pending.load(); });
}

}  // namespace

namespace pollux::board {

// WFI: sleeps until an interrupt is pending (the caller holds the mask, so
// the handler itself runs after the caller unmasks).
void wait_for_interrupt() noexcept {
  model::block_until([] { return interrupt_pending.load(); });
}
void write(std::string_view) noexcept {}
void exit(int) noexcept { std::abort(); }  // nothing in these scenarios exits

}  // namespace pollux::board

namespace {

// An interrupt: it becomes pending, then its handler runs inside a masked
// section (the core runs nothing else meanwhile), clearing the pending
// bit as the NVIC does on entry.
template <class Handler>
void interrupt(Handler handler) {
  interrupt_pending.store(true);
  model::yield();  // the request is visible to the core from here
  pollux::detail::InterruptGuard in_handler;
  interrupt_pending.store(false);
  pollux::detail::model_in_handler = true;
  handler();
  pollux::detail::model_in_handler = false;
}

// A task that waits until the interrupt set `flag`, through an AtomicWaker.
struct WaitForFlag {
  using Output = void;
  pollux::AtomicWaker* waker;
  pollux::detail::Atomic<int>* flag;
  pollux::Poll<void> poll(pollux::Context& cx) {
    waker->register_waker(cx.waker());
    if (flag->load() == 0) return pollux::pending;
    return pollux::ready();
  }
};

// A task that receives `count` values from a channel an interrupt fills.
struct Receive {
  using Output = void;
  pollux::StaticChannel<int, 2>* channel;
  int count;
  int* received;
  int got = 0;
  std::optional<pollux::StaticChannel<int, 2>::Recv> recv;  // kept while it waits: its waker is in the channel
  pollux::Poll<void> poll(pollux::Context& cx) {
    while (got < count) {
      if (!recv) recv.emplace(channel->recv());
      auto value = recv->poll(cx);
      if (value.is_pending()) return pollux::pending;
      if (*value.value() != got) return pollux::ready();  // out of order: finish sees it short
      recv.reset();
      ++got;
      ++*received;
    }
    return pollux::ready();
  }
};

// One scenario's state. The task's storage is declared first, so that it
// is destroyed last: the AtomicWaker may still hold a waker of the task (a
// StaticTask must outlive every waker of the tasks it held, as a global does).
struct FlagScenario {
  pollux::StaticTask<WaitForFlag> task;
  pollux::AtomicWaker waker;
  pollux::detail::Atomic<int> flag{0};
};

void explore_flag(int bound) {
  model::Checker checker(bound);
  std::uint64_t runs = checker.explore([] {
    interrupt_pending.store(false);
    pollux::detail::model_after_unmask = &take_pending_interrupt;
    auto state = std::make_shared<FlagScenario>();
    model::Checker::Execution e;
    e.threads.push_back([=] {
      pollux::SingleCoreExecutor executor;
      model::check(executor.spawn(state->task, WaitForFlag{&state->waker, &state->flag}), "the spawn was refused");
      executor.run();  // returns only once the task saw the flag
    });
    e.threads.push_back([=] {
      interrupt([&] {
        state->flag.store(1);
        state->waker.wake_by_ref();
      });
    });
    // run() returning is the proof: the task ends only once it saw the flag.
    e.finish = [=] { model::check(state->flag.load() == 1, "the interrupt did not run"); };
    return e;
  });
  report(runs);
}

// As FlagScenario: the task's storage outlives the channel, which may hold
// a waker of the task.
struct ChannelScenario {
  pollux::StaticTask<Receive> task;
  pollux::StaticChannel<int, 2> channel;
  int received = 0;
};

void explore_channel(int values, int bound) {
  model::Checker checker(bound);
  std::uint64_t runs = checker.explore([=] {
    interrupt_pending.store(false);
    pollux::detail::model_after_unmask = &take_pending_interrupt;
    auto state = std::make_shared<ChannelScenario>();
    model::Checker::Execution e;
    e.threads.push_back([=] {
      pollux::SingleCoreExecutor executor;
      model::check(executor.spawn(state->task, Receive{&state->channel, values, &state->received, 0, std::nullopt}),
                   "the spawn was refused");
      executor.run();
    });
    e.threads.push_back([=] {
      // One interrupt per value, into a channel with room for all of them.
      for (int i = 0; i < values; ++i) {
        interrupt([&] { model::check(state->channel.try_send(i), "try_send refused with a slot free"); });
      }
    });
    e.finish = [=] { model::check(state->received == values, "the receiver did not get every value, in order"); };
    return e;
  });
  report(runs);
}

}  // namespace

TEST_CASE("a wake delivered by an interrupt is never lost by the single-core executor's sleep") { explore_flag(4); }

TEST_CASE("an interrupt feeding a StaticChannel wakes its receiver task for every value") { explore_channel(2, 3); }
