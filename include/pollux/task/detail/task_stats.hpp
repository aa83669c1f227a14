// Per-task figures for dumps and the console: wakes by the task itself and
// by others, time busy in polls, time queued after a wake, the longest poll
// and the poll in progress. Counted only in a build configured with
// `-Dtask_metrics=true` (POLLUX_TASK_METRICS=1, which the library passes on
// to its consumers through meson, pkg-config and CMake): they add 56 bytes to
// every task, and two reads of the TickClock to every poll and one to every
// queueing. Times are kept in ticks, and become nanoseconds in a dump.
//
// Every field is written by one side at a time, as the task's state word
// orders them (the runner, which holds RUNNING; the waker that scheduled it,
// before the queue's hand-over), and read by a dump from any thread: hence
// relaxed atomics, loaded and stored, never read-modify-written, except
// wakes by others, which come from any thread at once.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/tick_clock.hpp"

#ifndef POLLUX_TASK_METRICS
#define POLLUX_TASK_METRICS 0
#endif

namespace pollux::detail {

/// Whether tasks carry TaskStats (the build's `task_metrics` option).
inline constexpr bool kTaskMetrics = POLLUX_TASK_METRICS != 0;

/// The library defines exactly one of these, the one of the layout it was
/// built with. Every task's vtable points at the one its own translation unit
/// expects, so a program whose code and library disagree on the option fails
/// to link, naming the symbol, instead of reading one layout as the other.
extern const bool tasks_carry_stats;
extern const bool tasks_carry_no_stats;

/// The layout tag of this translation unit's tasks.
inline constexpr const bool* kTaskLayout = kTaskMetrics ? &tasks_carry_stats : &tasks_carry_no_stats;

/// One task's figures; they live after its TaskMeta.
struct TaskStats {
  Atomic<std::uint64_t> wakes_by_self{0};          // runner only: wakes during its own poll
  Atomic<std::uint64_t> wakes_by_others{0};        // any thread
  Atomic<std::uint64_t> busy_ticks{0};             // runner only: the polls' time, added up
  Atomic<std::uint64_t> scheduled_ticks{0};        // runner only: queued after a wake until polled, added up
  Atomic<std::uint64_t> longest_poll_ticks{0};     // runner only
  Atomic<std::uint64_t> poll_started{0};           // runner only: the poll in progress began; 0 outside a poll
  Atomic<std::uint64_t> queued{TickClock::now()};  // when it was last queued (spawned, at first)

  /// The task is being queued (its first Runnable at spawn, or a wake).
  void on_queued() noexcept { store(queued, TickClock::now()); }

  /// A wake; `by_self`: during the task's own poll, on its runner's thread.
  void on_wake(bool by_self) noexcept {
    if (by_self) {
      store(wakes_by_self, load(wakes_by_self) + 1);
    } else {
      wakes_by_others.fetch_add(1, std::memory_order_relaxed);
    }
  }

  /// The runner begins a poll; returns when, for on_poll_end.
  std::uint64_t on_poll_begin() noexcept {
    std::uint64_t now = TickClock::now();
    store(scheduled_ticks, load(scheduled_ticks) + (now - load(queued)));
    store(poll_started, now | 1);  // never 0, "outside a poll"
    return now;
  }

  void on_poll_end(std::uint64_t began) noexcept {
    std::uint64_t took = TickClock::now() - began;
    store(busy_ticks, load(busy_ticks) + took);
    store(longest_poll_ticks, std::max(load(longest_poll_ticks), took));
    store(poll_started, std::uint64_t{0});
  }

 private:
  template <class T>
  static T load(const Atomic<T>& a) noexcept {
    return a.load(std::memory_order_relaxed);
  }
  template <class T>
  static void store(Atomic<T>& a, T v) noexcept {
    a.store(v, std::memory_order_relaxed);
  }
};

/// In a build without them: no bytes, no work.
struct NoTaskStats {
  void on_queued() noexcept {}
  void on_wake(bool) noexcept {}
  std::uint64_t on_poll_begin() noexcept { return 0; }
  void on_poll_end(std::uint64_t) noexcept {}
};

/// What a task carries in this build.
using TaskStatsSlot = std::conditional_t<kTaskMetrics, TaskStats, NoTaskStats>;

}  // namespace pollux::detail
