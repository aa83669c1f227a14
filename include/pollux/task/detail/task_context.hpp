// The task layer's per-thread fields (see core/detail/thread_context.hpp):
// the task being polled here, its self-wake mark, the innermost TaskLocal
// scope, and this thread's block of task ids.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>

#include "pollux/core/detail/thread_context.hpp"

namespace pollux::detail {

struct TaskLocalFrame;

/// What the task layer keeps per thread.
struct TaskThreadContext {
  /// The task being polled on this thread (a wake compares against it).
  const void* running_task = nullptr;
  /// Whether running_task woke itself during its poll: its wake is then
  /// noted, not queued (see task_waker.hpp).
  bool running_task_woken = false;
  /// The innermost TaskLocal scope in force.
  TaskLocalFrame* task_locals = nullptr;
  /// The next id of this thread's block of task ids.
  std::uint64_t next_task_id = 0;
  /// The end of that block: [next_task_id, task_id_end) is still free.
  std::uint64_t task_id_end = 0;
};

/// This thread's task-layer fields.
inline TaskThreadContext& task_context() noexcept { return per_thread<TaskThreadContext>; }

}  // namespace pollux::detail
