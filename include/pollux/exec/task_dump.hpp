// What executors' dump() reports: one line per live task, so that a user
// whose program hangs can see which task waits, how often it was polled
// and for how long it has been alive.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "pollux/task/detail/header.hpp"

namespace pollux {

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
};

/// The state as dump() prints it: "idle", "scheduled", "running".
const char* to_string(TaskInfo::State state) noexcept;

/// "N live tasks" and a line per task: id, name, state, polls, age.
std::string format_dump(const std::vector<TaskInfo>& tasks);

namespace detail {
/// `now_ns`: coarse_now_ns(), read once for the whole dump.
TaskInfo task_info(TaskHeader* task, std::int64_t now_ns);
}  // namespace detail

}  // namespace pollux
