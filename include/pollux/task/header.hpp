// The task header: the first 64 bytes of a task's single allocation, and
// everything an executor, a Waker or a JoinHandle needs without knowing the
// future's type. One atomic word holds the state bits and the reference
// count, so each transition below is one compare-and-swap.
//
// State bits:
//   kScheduled  a Runnable exists (in a queue or about to be): wakes do nothing
//   kRunning    a Runnable is polling the future right now
//   kCompleted  the future finished; the output is stored
//   kClosed     the future (or the output) is gone: aborted, or output taken
//   kHandle     the JoinHandle is alive and wants the output
//   kAwaiter    `awaiter` holds the JoinHandle's waker (the handle does not
//               write it while the bit is set; the task may read it)
// References (kRef units): the Runnable, each Waker clone, the JoinHandle,
// and an executor's registry. The allocation goes with the last one.
//
// Rules kept here: a wake schedules at most once until the task runs
// (rule 6: from any thread, any number of times, also after completion); a
// wake while running reschedules after the poll; the future is only ever
// polled or destroyed by the Runnable's owner (rule 4: it never moves).
#pragma once

#include <boost/intrusive/list_hook.hpp>
#include <boost/intrusive/slist_hook.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string_view>

#include "pollux/core/context.hpp"
#include "pollux/core/waker.hpp"

namespace pollux::detail {

struct TaskHeader;

// The operations that depend on the future's and the schedule function's
// types, filled in by make_task.
struct TaskVTable {
  void (*schedule)(TaskHeader*);       // hands a new Runnable (owning one reference) to the schedule function
  bool (*poll)(TaskHeader*, Context&) noexcept;  // polls the future; on Ready stores the output (or the exception)
  void (*drop_future)(TaskHeader*);
  void (*drop_output)(TaskHeader*);
  void* (*output)(TaskHeader*);         // the TaskOutput<T> once completed
  void (*deallocate)(TaskHeader*);
};

using RunQueueHook = boost::intrusive::slist_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;
using RegistryHook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

struct TaskHeader {
  static constexpr std::uint64_t kScheduled = 1 << 0;
  static constexpr std::uint64_t kRunning = 1 << 1;
  static constexpr std::uint64_t kCompleted = 1 << 2;
  static constexpr std::uint64_t kClosed = 1 << 3;
  static constexpr std::uint64_t kHandle = 1 << 4;
  static constexpr std::uint64_t kAwaiter = 1 << 5;
  static constexpr std::uint64_t kRef = 1 << 8;

  std::atomic<std::uint64_t> state;
  const TaskVTable* vtable;
  RunQueueHook run_hook;        // an executor's run queue
  RegistryHook registry_hook;   // an executor's list of live tasks
  Waker awaiter;                // the JoinHandle's waker, see kAwaiter
  std::uint64_t id;
};
static_assert(sizeof(TaskHeader) <= 64, "the task header must fit one cache line");

// A cheap monotonic clock (a few ms of resolution) for task ages: reading
// it costs a fraction of a precise clock, and it is read at every spawn.
inline std::int64_t coarse_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// What a task dump shows besides the state; lives right after the header.
// Kept to 32 bytes: a trivial task then fits glibc's 128-byte fast bins,
// which reuse freed tasks without coalescing or returning pages.
struct TaskMeta {
  std::atomic<std::uint64_t> polls{0};  // written by the runner only
  std::int64_t spawned_ns = coarse_now_ns();
  std::string_view name;  // not copied: a literal, or storage that outlives the task
};
static_assert(sizeof(TaskMeta) == 32);

struct TaskPrefix {
  TaskHeader header;
  TaskMeta meta;
};

inline TaskMeta& meta_of(TaskHeader* task) noexcept { return reinterpret_cast<TaskPrefix*>(task)->meta; }

inline std::uint64_t refs_of(std::uint64_t state) noexcept { return state / TaskHeader::kRef; }

inline void task_acquire(TaskHeader* task) noexcept { task->state.fetch_add(TaskHeader::kRef, std::memory_order_relaxed); }

// Drops `n` references; the last one destroys what is left (the future of
// a task nobody can run any more, or an output nobody took) and frees it.
inline void task_release(TaskHeader* task, std::uint64_t n = 1) noexcept {
  std::uint64_t before = task->state.fetch_sub(n * TaskHeader::kRef, std::memory_order_acq_rel);
  if (refs_of(before) != n) return;
  std::uint64_t state = before - n * TaskHeader::kRef;
  if (!(state & TaskHeader::kClosed)) {
    if (state & TaskHeader::kCompleted) {
      task->vtable->drop_output(task);
    } else {
      task->vtable->drop_future(task);
    }
  }
  task->vtable->deallocate(task);
}

// Wakes the JoinHandle after the state change that completed or closed the
// task was published (the caller saw kAwaiter in the state it replaced).
inline void notify_awaiter(TaskHeader* task, std::uint64_t replaced) noexcept {
  if (replaced & TaskHeader::kAwaiter) task->awaiter.wake_by_ref();
}

// The task this thread is polling, and whether it woke itself during that
// poll. A self-wake (yield_now, a budget spent, a sibling it completed) is
// the commonest wake of all; noting it here costs no atomic operation, and
// the Runnable re-queues the task after the poll.
inline thread_local TaskHeader* running_task = nullptr;
inline thread_local bool running_task_woken = false;

// An executor shutting down closes each task it still holds. An idle task
// loses its future here; a queued or running one is only marked closed, and
// whoever holds its Runnable destroys the future (run sees kClosed, and
// dropping a Runnable cancels). Does not touch the reference counts.
inline void close_for_shutdown(TaskHeader* task) noexcept {
  std::uint64_t state = task->state.load(std::memory_order_acquire);
  bool idle = false;
  for (;;) {
    if (state & (TaskHeader::kClosed | TaskHeader::kCompleted)) return;
    idle = !(state & (TaskHeader::kScheduled | TaskHeader::kRunning));
    if (task->state.compare_exchange_weak(state, state | TaskHeader::kClosed, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      break;
    }
  }
  if (idle) {
    task->vtable->drop_future(task);
    notify_awaiter(task, state);
  }
}

// Schedules the task unless it is scheduled, running (then the Runnable
// re-queues it after the poll), finished or closed. `own_ref`: the caller
// gives up one reference (a consuming wake), which the new Runnable takes
// over or which is dropped.
inline void task_wake(TaskHeader* task, bool own_ref) noexcept {
  if (task == running_task) {
    running_task_woken = true;
    if (own_ref) task_release(task);  // the Runnable holds another: never the last
    return;
  }
  std::uint64_t state = task->state.load(std::memory_order_acquire);
  for (;;) {
    if (state & (TaskHeader::kCompleted | TaskHeader::kClosed | TaskHeader::kScheduled)) break;
    std::uint64_t next = state | TaskHeader::kScheduled;
    bool schedule_now = !(state & TaskHeader::kRunning);
    if (schedule_now && !own_ref) next += TaskHeader::kRef;  // the Runnable's reference
    if (task->state.compare_exchange_weak(state, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
      if (schedule_now) {
        task->vtable->schedule(task);
        return;
      }
      break;
    }
  }
  if (own_ref) task_release(task);
}

inline constexpr RawWakerVTable task_waker_vtable{
    [](const void* data) {
      task_acquire(static_cast<TaskHeader*>(const_cast<void*>(data)));
      return RawWaker{data, &task_waker_vtable};
    },
    [](const void* data) { task_wake(static_cast<TaskHeader*>(const_cast<void*>(data)), true); },
    [](const void* data) { task_wake(static_cast<TaskHeader*>(const_cast<void*>(data)), false); },
    [](const void* data) { task_release(static_cast<TaskHeader*>(const_cast<void*>(data))); },
};

}  // namespace pollux::detail
