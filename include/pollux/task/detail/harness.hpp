// The task's life, composed of the named transitions of task/detail/state.hpp:
// what a Runnable does when it runs or is dropped, what abort, an
// executor's shutdown and a JoinHandle do. Runnable and JoinHandle are thin
// wrappers over these functions; tests/model/task_model.cpp runs the same
// functions on a model header and checks them under every interleaving.
//
// Every function is a template over the header type H, which has `state`
// (a BasicTaskState), `vtable` (a BasicTaskVTable<H>), `awaiter` (a Waker)
// and `id`. Rules kept: the future is destroyed exactly once, by whoever
// holds RUNNING; the JoinHandle hears Cancelled only after that destructor
// returned (COMPLETE is set after it); nothing is polled after completion.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/task/detail/task_context.hpp"
#include "pollux/task/detail/state.hpp"
#include "pollux/task/detail/task_waker.hpp"

namespace pollux::detail {

/// The future is gone (`with_output`: it returned Ready and its output is
/// stored). Nobody will take an output if the handle is gone; the awaiter
/// hears of it either way.
template <class H>
inline void task_complete(H* task, bool with_output) noexcept {
  TaskSnapshot prev = task->state.to_complete(with_output);
  if (with_output && !prev.has_handle()) task->vtable->drop_detached_output(task);
  if (prev.has_awaiter()) task->awaiter.wake_by_ref();
}

/// The caller holds RUNNING on a cancelled task: the future goes now, on
/// this thread, and only then is the task complete.
template <class H>
void task_destroy_cancelled(H* task) noexcept {
  task->vtable->drop_future(task);
  task_complete(task, false);
}

/// Runs a task once (a Runnable's run). Returns true when the task is
/// finished for good (completed, failed or cancelled): the caller keeps the
/// Runnable's reference and drops it. False when it waits for a wake, or was
/// woken during the poll and handed to the schedule function again.
template <class H>
bool task_run(H* task) noexcept {
  TaskSnapshot seen = task->state.load();
  if (seen.is_running()) {
    // Queued again right after it woke itself: it never stopped running,
    // so there is no transition to make (see the self-wake below).
    if (seen.is_cancelled()) {
      task_destroy_cancelled(task);
      return true;
    }
  } else if (task->state.to_running() == StartRun::Cancel) {
    task_destroy_cancelled(task);  // aborted while it sat in a queue
    return true;
  }

  WakerRef waker(RawWaker{task, &task_waker_vtable<H>});
  Context cx(waker);
  TaskThreadContext& here = task_context();  // this thread's, for the whole run
  const void* outer_task = std::exchange(here.running_task, task);
  const bool outer_woken = std::exchange(here.running_task_woken, false);
  PendingOnPurposeScope purpose;                    // for the debug check of rule 2 below
  const bool ready = task->vtable->poll(task, cx);  // stores the output, or the exception, when Ready
  const bool woke_itself = std::exchange(here.running_task_woken, outer_woken);
  here.running_task = outer_task;

  if (ready) {
    task_complete(task, true);
    return true;
  }
  if (woke_itself) {
    // Back in the queue still marked running: no state change, so a yield
    // costs no atomic operation. Wakes from elsewhere meanwhile just set
    // SCHEDULED, and an abort sets CANCELLED, which the next run sees.
    if (task->state.load().is_cancelled()) {
      task_destroy_cancelled(task);
      return true;
    }
    task->vtable->schedule(task);  // our reference goes to the new Runnable
    return false;
  }
  Transition<AfterPoll> idle = task->state.to_idle();
  switch (idle.action) {
    case AfterPoll::Cancel:
      task_destroy_cancelled(task);  // aborted during the poll
      return true;
    case AfterPoll::Reschedule:
      task->vtable->schedule(task);  // woken during the poll: our reference goes to the new Runnable
      return false;
    case AfterPoll::Idle:
      // Rule 2: only a waker can run the task again. With no reference but
      // the handle's and the registry's left, none exists. That is legal for
      // a task that waits only to be cancelled, so the check reports (once:
      // nothing can poll the task again) rather than stops, unless asked.
      if constexpr (check_contract) {
        if (!purpose.set() && idle.after.refs() == idle.after.owner_refs()) report_lost_wake(task);
      }
      if (idle.after.refs() == 0) task_free(task, idle.after);
      return false;
  }
  return false;
}

/// A Runnable dropped without running: the task is cancelled here.
template <class H>
void task_drop_runnable(H* task) noexcept {
  task->state.to_cancelled_by_runnable();
  task_destroy_cancelled(task);
  task_release(task);
}

/// JoinHandle::abort.
template <class H>
void task_abort(H* task) noexcept {
  if (task->state.abort() == AbortAction::Schedule) {
    task->vtable->schedule(task);  // idle: its executor destroys the future
  }
}

/// An executor shutting down cancels a task it holds (its registry's
/// reference is not touched). An idle task loses its future here. A queued
/// one is only marked, and true says so: the executor must wait for its
/// Runnable (in a queue, or still on its way from a waker's thread) and
/// drop it, which destroys the future on the executor's thread.
template <class H>
bool task_shutdown(H* task) noexcept {
  switch (task->state.shutdown()) {
    case ShutdownAction::DestroyFuture:
      task_destroy_cancelled(task);
      return false;
    case ShutdownAction::AwaitRunnable:
      return true;
    case ShutdownAction::Nothing:
      return false;
  }
  return false;
}

/// What a JoinHandle's poll found.
enum class JoinPoll { Pending, Output, Cancelled };

/// The untyped half of JoinHandle::poll: leaves the waker of this poll in
/// the awaiter slot (replacing an older one unless will_wake), or says the
/// task is complete, with its output or cancelled.
template <class H>
JoinPoll task_poll_join(H* task, const Waker& waker) noexcept {
  TaskSnapshot seen = task->state.load();
  if (!seen.is_complete()) {
    bool own_slot = true;
    if (seen.has_awaiter()) {
      if (task->awaiter.will_wake(waker)) return JoinPoll::Pending;
      own_slot = task->state.unset_awaiter();  // fails only once the task is complete
    }
    if (own_slot) {
      task->awaiter = waker;
      if (task->state.set_awaiter()) return JoinPoll::Pending;
      // Complete before it could see our waker: collect now.
    }
    seen = task->state.load();
  }
  return seen.has_output() ? JoinPoll::Output : JoinPoll::Cancelled;
}

/// The handle lets go of a complete task after taking or dropping its
/// output (`had_output`), or seeing none: one atomic operation.
template <class H>
inline void task_release_complete_handle(H* task, bool had_output) noexcept {
  if (task->state.release_complete_handle(had_output) == RefsLeft::None) task->vtable->deallocate(task);
}

/// A JoinHandle destroyed before it took the output: the task is detached.
template <class H>
void task_drop_join_handle(H* task) noexcept {
  Transition<DropHandle> dropped = task->state.unset_handle();
  switch (dropped.action) {
    case DropHandle::Released:
      return;
    case DropHandle::LastRef:
      task_free(task, dropped.after);
      return;
    case DropHandle::ClearAwaiter:
      task->awaiter = Waker{};  // leave no waker of ours behind (rule 5)
      task_release(task);
      return;
    case DropHandle::Complete: {
      TaskSnapshot seen = dropped.after;  // as read: the task is complete, so only this handle changes it now
      if (seen.has_output()) task->vtable->drop_detached_output(task);  // an output nobody will take now
      task_release_complete_handle(task, seen.has_output());
      return;
    }
  }
}

}  // namespace pollux::detail
