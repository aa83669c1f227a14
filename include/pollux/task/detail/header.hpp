// The task header: the first 64 bytes of a task's single allocation, and
// everything an executor, a Waker or a JoinHandle needs without knowing the
// future's type. The state bits and the reference count share one atomic
// word (task/detail/state.hpp), so each transition is one atomic operation.
//
// Rules kept here: the future is only ever polled or destroyed by whoever
// holds the RUNNING bit (rule 4: it never moves, it lives in the allocation);
// the allocation goes with the last reference, so a waker woken or dropped
// after the task finished never reaches freed memory (rule 6).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string_view>
#include <type_traits>

#include "pollux/core/detail/chrono.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/task/detail/state.hpp"
#include "pollux/task/detail/task_stats.hpp"
#include "pollux/task/detail/vtable.hpp"
#include "pollux/task/lost_wake.hpp"

namespace pollux::detail {

struct TaskHeader;
using TaskVTable = BasicTaskVTable<TaskHeader>;

using RegistryHook = ListHook<TaskHeader>;

/// The part of a task every executor sees. `awaiter` is the JoinHandle's
/// waker, owned by the handle while AWAITER is clear and read by the task
/// while it is set.
struct TaskHeader {
  TaskHeader(const TaskVTable* table, std::uint64_t refs, bool registered, std::uint64_t task_id,
             bool handle = true) noexcept
      : state(refs, registered, handle), vtable(table), id(task_id) {}

  TaskState state;
  const TaskVTable* vtable;
  TaskHeader* run_next = nullptr;  // the link of the run queue that holds the task, if any
  RegistryHook registry_hook;      // an executor's list of live tasks
  Waker awaiter;
  std::uint64_t id;
};
static_assert(sizeof(TaskHeader) <= 64, "the task header must fit one cache line");

/// A cheap monotonic clock (a few ms of resolution) for task ages: reading
/// it costs a fraction of a precise clock, and it is read at every spawn.
inline std::int64_t coarse_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// What a task dump shows besides the state; lives right after the header.
/// Kept to 32 bytes: a trivial task then fits glibc's 128-byte fast bins,
/// which reuse freed tasks without coalescing or returning pages.
struct TaskMeta {
  Atomic<std::uint64_t> polls{0};  // written by the runner only
  std::int64_t spawned_ns = coarse_now_ns();
  // The name, not copied: a literal, or storage that outlives the task.
  // Kept as a pointer and a 32-bit size so that scheduled_us fits too.
  const char* name_data = nullptr;
  std::uint32_t name_size = 0;
  // When it was last scheduled (microseconds, wrapping), for an executor
  // that measures schedule latency. Written by whoever holds its Runnable
  // as it queues the task, read by the runner that took it from the queue,
  // before the poll: the queue's hand-over orders the two.
  std::uint32_t scheduled_us = 0;

  std::string_view name() const noexcept { return {name_data, name_size}; }
  void set_name(std::string_view name) noexcept {
    name_data = name.data();
    name_size = static_cast<std::uint32_t>(std::min<std::size_t>(name.size(), UINT32_MAX));
  }
};
static_assert(sizeof(TaskMeta) == 32);

struct TaskPrefix {
  TaskPrefix(const TaskVTable* table, std::uint64_t refs, bool registered, std::uint64_t task_id,
             bool handle = true) noexcept
      : header(table, refs, registered, task_id, handle) {}

  TaskHeader header;
  TaskMeta meta;
  [[no_unique_address]] TaskStatsSlot stats;  // nothing unless tasks carry their figures
};

inline TaskMeta& meta_of(TaskHeader* task) noexcept { return reinterpret_cast<TaskPrefix*>(task)->meta; }

/// The task's figures (an empty NoTaskStats in a build without them).
inline TaskStatsSlot& stats_of(TaskHeader* task) noexcept { return reinterpret_cast<TaskPrefix*>(task)->stats; }

/// A wake of `task` for its figures (task_wake finds this overload by
/// argument-dependent lookup; other headers have no figures).
inline void note_wake(TaskHeader* task, bool by_self) noexcept { stats_of(task).on_wake(by_self); }

/// Debug builds: a task returned Pending and no waker of it exists any more
/// (rule 2 broken). Stops the program with the task's id, name and type.
// Debug builds: `task` returned Pending and no waker of it exists. Carries
// out its LostWake choice (returns unless that is Terminate).
void report_lost_wake(TaskHeader* task) noexcept;

}  // namespace pollux::detail
