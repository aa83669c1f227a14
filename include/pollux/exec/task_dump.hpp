// What executors' dump() reports: one line per live task, so that a user
// whose program hangs can see which task waits, how often it was polled,
// for how long it has been alive, whether anything can still wake it, and
// (in a build with per-task figures) where its time went.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pollux/core/detail/chrono.hpp"
#include "pollux/task/detail/header.hpp"

namespace pollux {

/// Where one task's time went, and who woke it: counted only when the
/// library is built with `-Dtask_metrics=true` (see TaskInfo::figures).
struct TaskFigures {
  /// Wakes during its own poll (a yield, a spent budget, a sibling).
  std::uint64_t wakes_by_self = 0;
  /// Wakes from anywhere else: a socket, a timer, another task.
  std::uint64_t wakes_by_others = 0;
  /// Time inside its polls, added up.
  std::chrono::nanoseconds busy{0};
  /// Time queued, from each wake (or the spawn) until the poll it led to.
  std::chrono::nanoseconds scheduled{0};
  /// The rest of its age: waiting for a wake.
  std::chrono::nanoseconds idle{0};
  /// Its longest poll.
  std::chrono::nanoseconds longest_poll{0};
  /// How long the poll in progress has run; zero outside a poll.
  std::chrono::nanoseconds current_poll{0};
};

/// One live task, as dump() reports it.
struct TaskInfo {
  /// Running: being polled, or queued again after it woke itself.
  enum class State { Idle, Scheduled, Running };
  /// The task id, as its JoinHandle and Cancelled show it.
  std::uint64_t id;
  /// The name given at spawn (may be empty).
  std::string name;
  /// Idle (waiting for a wake), Scheduled or Running.
  State state;
  /// How many times it was polled.
  std::uint64_t polls;
  /// How long ago it was spawned.
  std::chrono::steady_clock::duration age;
  /// Clones of its Waker alive: whatever it waits on holds one. An idle
  /// task with none can never be woken; only cancellation ends it.
  std::uint64_t wakers = 0;
  /// Its figures, in a library built with `-Dtask_metrics=true`; empty
  /// otherwise.
  std::optional<TaskFigures> figures{};
};

/// The state as dump() prints it: "idle", "scheduled", "running".
const char* to_string(TaskInfo::State state) noexcept;

/// What format_dump() and pollux-console warn about.
struct TaskWarnings {
  /// A poll that ran this long blocks its worker: the task should yield
  /// (or move the work to spawn_blocking).
  std::chrono::nanoseconds slow_poll = std::chrono::milliseconds(10);
};

/// The warnings `task` deserves, one sentence each: idle with no waker
/// alive (it can never run again), a poll in progress for longer than
/// `slow_poll` (it never yields), a past poll longer than `slow_poll`.
/// The last two need the task's figures.
std::vector<std::string> task_warnings(const TaskInfo& task, const TaskWarnings& limits = {});

/// "N live tasks" and a line per task: id, name, state, polls, age, wakers,
/// the figures where counted, and each task's warnings on the lines below it.
std::string format_dump(const std::vector<TaskInfo>& tasks, const TaskWarnings& limits = {});

namespace detail {
/// `now_ns`: coarse_now_ns(), read once for the whole dump.
TaskInfo task_info(TaskHeader* task, std::int64_t now_ns);
}  // namespace detail

}  // namespace pollux
