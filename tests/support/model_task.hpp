// A model thread that behaves as a task polling one future: it polls, and
// while the future is Pending it sleeps until its waker is woken. A wake
// that is lost leaves it asleep for ever, which the checker reports as a
// deadlock; a waker that leaks shows in its Counts.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "model.hpp"
#include "support.hpp"

namespace model_task {

/// A task's waker and what was done to it. It keeps the original waker,
/// so `leaked()` is true while any clone of it is alive.
struct TaskWaker {
  test::Counts counts;
  pollux::Waker waker = test::counting_waker(counts);

  bool leaked() const { return counts.live() != 1; }
  int woken() const { return counts.woken(); }
};

/// Polls `future` with `task`'s waker until it is Ready and returns its
/// output, sleeping between polls until the waker was woken.
template <class F>
typename F::Output run_to_completion(F& future, TaskWaker& task) {
  pollux::Context cx{task.waker};
  for (;;) {
    int woken_before = task.woken();
    auto poll = future.poll(cx);
    if (poll.is_ready()) {
      if constexpr (std::is_void_v<typename F::Output>) {
        return;
      } else {
        return std::move(poll).value();
      }
    }
    model::block_until([&task, woken_before] { return task.woken() > woken_before; });
    task.counts.woke.acquire();  // the poll that a wake leads to happens after it
  }
}

/// Polls `future` once with `task`'s waker; returns whether it was Ready.
template <class F>
bool poll_once(F& future, TaskWaker& task) {
  pollux::Context cx{task.waker};
  return future.poll(cx).is_ready();
}

/// Reports how many schedules a checker explored, and fails a scenario
/// that explored only one (its threads never met).
inline void report(std::uint64_t runs) {
  MESSAGE(runs << " executions");
  CHECK(runs > 1);
}

}  // namespace model_task
