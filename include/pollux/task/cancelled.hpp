// Cancelled: the error a JoinHandle gives for a task that will never
// finish: it was aborted, or its executor shut down first (rule 8: lost
// work gets a clear message, not a hang). A plain value like Elapsed and
// Closed, so that a JoinHandle's Result<T, Cancelled> costs nothing to move
// on the path where the task finished.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <string>

namespace pollux {

/// The error a JoinHandle (or spawn_blocking's handle) gives when its task will never finish: it
/// was aborted, or its executor shut down first.
struct Cancelled {
  /// The id of the cancelled task, as its JoinHandle and dumps show it.
  std::uint64_t task_id = 0;

  /// A message for logs, naming the task.
  std::string what() const {
    return "task " + std::to_string(task_id)
           + " was cancelled before it finished (JoinHandle::abort, or its executor shut down)";
  }
  /// Equal when they name the same task.
  friend bool operator==(Cancelled, Cancelled) noexcept = default;
};

}  // namespace pollux
