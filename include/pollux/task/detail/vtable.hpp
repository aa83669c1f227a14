// The operations of a task that depend on its future's type, and the
// references it is counted with: what the task harness needs from any task
// header, hosted (TaskHeader) or static (the embedded profile's).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <string_view>

#include "pollux/core/context.hpp"
#include "pollux/task/detail/state.hpp"
#include "pollux/task/lost_wake.hpp"

namespace pollux::detail {

/// The operations that depend on the future's and the schedule function's
/// types, filled in by make_task. `H` is the header type: TaskHeader, or the
/// model check's own.
template <class H>
struct BasicTaskVTable {
  void (*schedule)(H*);                 // hands a new Runnable (owning one reference) to the schedule function
  bool (*poll)(H*, Context&) noexcept;  // polls the future; on Ready stores the output (or the exception)
  void (*drop_future)(H*) noexcept;
  void (*drop_output)(H*) noexcept;
  void (*drop_detached_output)(H*) noexcept;  // drops an output no JoinHandle will take (an exception is reported)
  void* (*output)(H*) noexcept;               // the TaskOutput<T> once complete
  void (*deallocate)(H*) noexcept;
  std::string_view future_type;        // for the messages of debug checks
  LostWake (*lost_wake)(H*) noexcept;  // the schedule function's choice for a task no waker can reach
  const bool* layout = nullptr;        // kTaskLayout where the task was made: links only with a library that agrees
};

/// The references a task is counted with, by who holds them. A new task
/// starts with its first Runnable's and its JoinHandle's.
inline constexpr TaskWord kRunnableRef = 1;
/// The JoinHandle's (a detached task's handle gives it back at once).
inline constexpr TaskWord kJoinHandleRef = 1;
/// An executor's registry lists every task it runs, for tasks() and for
/// cancelling them all at shutdown, and holds one while it does.
inline constexpr TaskWord kRegistryRef = 1;
/// What an executor gives back when a poll finished its task: the
/// Runnable it ran and the registry's listing, in one step.
inline constexpr TaskWord kFinishedRunRefs = kRunnableRef + kRegistryRef;

}  // namespace pollux::detail
