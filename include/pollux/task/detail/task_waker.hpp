// The Waker of a task: its data pointer is the task's header, clone and drop
// are reference-count operations, and a wake schedules the task at most once
// until it runs again (rule 6: from any thread, any number of times, also
// after the task finished). No allocation and no lock per wake.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/task/detail/task_context.hpp"
#include "pollux/core/waker.hpp"
#if defined(POLLUX_SINGLE_CORE)
#include "pollux/core/detail/interrupts.hpp"
#endif
#include "pollux/task/detail/vtable.hpp"
#include "pollux/task/detail/state.hpp"

namespace pollux::detail {

// The task this thread is polling, and whether it woke itself during that
// poll, live in the thread context (running_task, running_task_woken). A
// self-wake (yield_now, a budget spent, a sibling it completed) is the
// commonest wake of all; noting it there costs no atomic operation, and the
// runner re-queues the task after the poll.

/// Frees a task whose last reference is gone: its future goes first if it
/// never completed (a task nobody can run any more). An output is never
/// left behind: the JoinHandle takes or drops it before it lets go.
template <class H>
inline void task_free(H* task, TaskSnapshot after) noexcept {
  if (!after.is_complete()) task->vtable->drop_future(task);
  task->vtable->deallocate(task);
}

/// Drops `n` references; the last one frees the task.
template <class H>
inline void task_release(H* task, TaskWord n = 1) noexcept {
  Transition<RefsLeft> dropped = task->state.ref_dec(n);
  if (dropped.action == RefsLeft::None) task_free(task, dropped.after);
}

/// An executor's registry lets go of the task and of its `n` references;
/// the last one frees the task.
template <class H>
inline void task_unregister(H* task, TaskWord n = 1) noexcept {
  Transition<RefsLeft> dropped = task->state.unregister(n);
  if (dropped.action == RefsLeft::None) task_free(task, dropped.after);
}

/// A wake of a task whose header keeps no figures (the hosted TaskHeader
/// has an overload that counts it).
template <class H>
inline void note_wake(H*, bool) noexcept {}

/// A wake; `by_val`: the caller gives up one reference (a consuming wake).
template <class H>
void task_wake(H* task, bool by_val) noexcept {
  TaskThreadContext& here = task_context();
#if defined(POLLUX_SINGLE_CORE)
  // An interrupt handler shares the core's context with the task it
  // interrupted, which may be this one: past the runner's last look at
  // running_task_woken, a self-wake noted there would be lost. A handler's
  // wake goes through the state word like any wake from outside.
  const bool by_self = task == here.running_task && !in_interrupt_handler();
#else
  const bool by_self = task == here.running_task;
#endif
  note_wake(task, by_self);
  if (by_self) {
    here.running_task_woken = true;
    if (by_val) task_release(task);  // the runner holds another: never the last
    return;
  }
  if (!by_val) {
    if (task->state.notify_by_ref() == WakeAction::Schedule) task->vtable->schedule(task);
    return;
  }
  Transition<WakeAction> woken = task->state.notify_by_val();
  switch (woken.action) {
    case WakeAction::Schedule:
      task->vtable->schedule(task);
      break;
    case WakeAction::Dealloc:
      task_free(task, woken.after);
      break;
    case WakeAction::Nothing:
      break;
  }
}

template <class H>
struct TaskWakerVTable {
  static H* self(const void* data) noexcept { return static_cast<H*>(const_cast<void*>(data)); }
  static RawWaker clone(const void* data) noexcept {
    self(data)->state.ref_inc();
    return RawWaker{data, &table};
  }
  static void wake(const void* data) noexcept { task_wake(self(data), true); }
  static void wake_by_ref(const void* data) noexcept { task_wake(self(data), false); }
  static void drop(const void* data) noexcept { task_release(self(data)); }
  static constexpr RawWakerVTable table{&clone, &wake, &wake_by_ref, &drop};
};

/// The vtable of every waker of a task with header type H.
template <class H>
inline constexpr const RawWakerVTable& task_waker_vtable = TaskWakerVTable<H>::table;

}  // namespace pollux::detail
