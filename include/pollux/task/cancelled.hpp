// Cancelled: what awaiting the JoinHandle of a task that will never finish
// throws: it was aborted, or its executor shut down first (rule 8: misuse
// and lost work get a clear message, not a hang).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pollux {

/// What awaiting the JoinHandle of a task that will never finish throws: it was aborted, or its
/// executor shut down first (rule 8: misuse and lost work get a clear message, not a hang).
class Cancelled : public std::runtime_error {
 public:
  /// The task `task_id` was cancelled.
  explicit Cancelled(std::uint64_t task_id)
      : std::runtime_error("pollux: task " + std::to_string(task_id) +
                           " was cancelled before it finished (JoinHandle::abort, or its executor shut down)"),
        task_id_(task_id) {}

  /// The id of the cancelled task, as its JoinHandle and dumps show it.
  std::uint64_t task_id() const noexcept { return task_id_; }

 private:
  std::uint64_t task_id_;
};

}  // namespace pollux
