// The task state word: eight state bits and a reference count in one atomic
// word (64 bits; 32 in the single-core profile, where a 32-bit core updates
// it with LDREX/STREX rather than a critical section), and the only code
// that changes it. Every change is one named
// transition below, each a single atomic read-modify-write (a fetch_* or a
// compare-and-swap loop in the style of fetch_update), with the bits it reads
// and writes drawn in its comment. The harness (task/detail/harness.hpp) composes
// them into run, wake, abort, join and shutdown.
//
// The word is a template over the atomic type so that tests/model/task_model.cpp
// can run every transition on a model atomic that yields to a deterministic
// scheduler at each operation and check the task under every interleaving.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cassert>
#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"

namespace pollux::detail {

/// The task state word's type. The single-core profile's is 32 bits: one
/// core runs few tasks, and 2^24 references to one task is far beyond any.
#if defined(POLLUX_SINGLE_CORE)
using TaskWord = std::uint32_t;
#else
using TaskWord = std::uint64_t;
#endif

/// A value of the task state word, read at one instant.
///
///     63 (31) ....................... 8   7     6     5     4     3     2     1     0
///     [       reference count        ]  [REG] [OUT] [AWT] [HDL] [CAN] [CMP] [RUN] [SCH]
///
/// - SCH scheduled: a Runnable exists (queued, or being handed over); wakes do nothing.
/// - RUN running: somebody owns the future right now: a Runnable polling it, or
///   whoever destroys it on cancellation. Nobody else touches the future.
///   A task that woke itself during its poll goes back to its queue with RUN
///   still set and SCH clear (a yield costs no atomic operation): its Runnable
///   owns the future while it waits there, wakes meanwhile set SCH as for a
///   running task, and its next run finds RUN set and polls at once.
/// - CMP complete: the future is gone (it returned Ready, threw, or was destroyed
///   by cancellation), and its destructor has returned. Set once, never cleared.
/// - CAN cancelled: cancellation was asked for (abort, executor shutdown, a Runnable
///   dropped unrun). Set once. The future is destroyed by whoever owns it next.
/// - HDL handle: the JoinHandle is alive and may take the output.
/// - AWT awaiter: the JoinHandle's waker is in the header's slot; while set, only
///   the task reads the slot, and only the handle clears the bit (before CMP).
/// - OUT output: the future returned Ready and its output waits for the handle.
///   Set with CMP while HDL is set; the handle takes or drops the output and
///   clears the bit in the same operation that drops its reference.
/// - REG registered: an executor's registry holds one of the references (so the
///   lost-wake check knows how many references are not wakers).
///
/// References: each Runnable, each Waker clone, the JoinHandle, a registry.
/// The allocation is freed by whoever drops the last one.
class TaskSnapshot {
 public:
  static constexpr TaskWord kScheduled = 1 << 0;
  static constexpr TaskWord kRunning = 1 << 1;
  static constexpr TaskWord kComplete = 1 << 2;
  static constexpr TaskWord kCancelled = 1 << 3;
  static constexpr TaskWord kHandle = 1 << 4;
  static constexpr TaskWord kAwaiter = 1 << 5;
  static constexpr TaskWord kOutput = 1 << 6;
  static constexpr TaskWord kRegistered = 1 << 7;
  static constexpr TaskWord kRef = 1 << 8;

  constexpr TaskSnapshot() noexcept = default;
  constexpr explicit TaskSnapshot(TaskWord bits) noexcept : bits_(bits) {}

  constexpr TaskWord bits() const noexcept { return bits_; }
  constexpr bool is_scheduled() const noexcept { return (bits_ & kScheduled) != 0; }
  constexpr bool is_running() const noexcept { return (bits_ & kRunning) != 0; }
  constexpr bool is_complete() const noexcept { return (bits_ & kComplete) != 0; }
  constexpr bool is_cancelled() const noexcept { return (bits_ & kCancelled) != 0; }
  constexpr bool has_handle() const noexcept { return (bits_ & kHandle) != 0; }
  constexpr bool has_awaiter() const noexcept { return (bits_ & kAwaiter) != 0; }
  constexpr bool has_output() const noexcept { return (bits_ & kOutput) != 0; }
  constexpr bool is_registered() const noexcept { return (bits_ & kRegistered) != 0; }
  /// Neither scheduled, running nor complete: the future waits for a wake.
  constexpr bool is_idle() const noexcept { return (bits_ & (kScheduled | kRunning | kComplete)) == 0; }
  constexpr TaskWord refs() const noexcept { return bits_ / kRef; }
  /// The references that are not wakers: the handle's and the registry's.
  constexpr TaskWord owner_refs() const noexcept { return (has_handle() ? 1 : 0) + (is_registered() ? 1 : 0); }

 private:
  TaskWord bits_ = 0;
};

/// What the runner does after to_running.
enum class StartRun { Poll, Cancel };
/// What the runner does after the future returned Pending (to_idle).
enum class AfterPoll { Idle, Reschedule, Cancel };
/// What a wake asks of the waker (notify_by_ref / notify_by_val).
enum class WakeAction { Nothing, Schedule, Dealloc };
/// What the abort transition asks of its caller (JoinHandle::abort, a task set).
enum class AbortAction { Nothing, Schedule };
/// What the shutdown transition asks of the executor that shuts down.
enum class ShutdownAction { Nothing, DestroyFuture, AwaitRunnable };
/// What the JoinHandle does before it lets go (unset_handle).
enum class DropHandle { Released, LastRef, ClearAwaiter, Complete };
/// Whether a drop of references (ref_dec, unregister) left any.
enum class RefsLeft { Some, None };

/// What a transition tells its caller: the action to take, and the word as
/// the transition left it (unchanged where it declined). One value, so no
/// caller reads an action that a retried compare-and-swap made stale.
template <class Action>
struct Transition {
  Action action;
  TaskSnapshot after;
};

/// Stops the program: a task's reference count reached kMaxRefs. Only a
/// Waker cloned and never dropped in a loop gets there; wrapping would free
/// the task under its live references.
[[noreturn, gnu::cold, gnu::noinline]] inline void task_refcount_overflow() noexcept {
  contract_violation_text("a task's reference count overflowed (a Waker cloned in a loop and never dropped?)");
}

/// The state word of one task over an atomic type (the model check names its own).
///
/// Each transition asserts its precondition in debug builds: a failure is a
/// bug in the task harness or an executor, not in the user's code.
template <template <class> class Atomic>
class BasicTaskState {
  using S = TaskSnapshot;

 public:
  /// References above this stop the program (task_refcount_overflow), a
  /// quarter of what the word holds (2^56, or 2^24 in the single-core
  /// profile), so no increment that races the check can wrap it.
  static constexpr TaskWord kMaxRefs = TaskWord{1} << (sizeof(TaskWord) * 8 - 10);

  /// A new task: its first Runnable exists, its JoinHandle is alive
  /// (unless `handle` is false: a task made with no handle at all).
  ///     [refs] . . . . HDL . . . SCH      (+ REG for a registered task)
  constexpr explicit BasicTaskState(TaskWord refs, bool registered = false, bool handle = true) noexcept
      : word_(S::kScheduled | (handle ? S::kHandle : 0) | (registered ? S::kRegistered : 0) | refs * S::kRef) {}

  /// The word now (acquire): for decisions that the transitions re-check.
  TaskSnapshot load() const noexcept { return TaskSnapshot(word_.load(std::memory_order_acquire)); }

  // ---- the Runnable's side -------------------------------------------

  /// A Runnable starts its run.
  ///     SCH=1 RUN=0  ->  SCH=0 RUN=1
  /// With CAN set the runner owns the future just the same, to destroy it.
  /// Precondition: SCH=1 RUN=0 (a self-woken task, queued with RUN set,
  /// skips this transition).
  StartRun to_running() noexcept {
    return update([](S s) {
             assert(s.is_scheduled() && !s.is_running() && "to_running: the task is not queued to run");
             return write(s.is_cancelled() ? StartRun::Cancel : StartRun::Poll,
                          S((s.bits() & ~S::kScheduled) | S::kRunning));
           })
        .action;
  }

  /// The poll returned Pending. The Runnable's reference goes with RUN when
  /// the task goes idle; woken meanwhile (SCH) it is kept for the new Runnable.
  ///     RUN=1 SCH=0        ->  RUN=0, refs-1        Idle (after.refs() == 0: that was the last)
  ///     RUN=1 SCH=1        ->  RUN=0 SCH=1          Reschedule
  ///     RUN=1 CAN=1        ->  unchanged            Cancel: the runner destroys the future
  /// Precondition: RUN=1, held by the caller.
  Transition<AfterPoll> to_idle() noexcept {
    return update([](S s) {
      assert(s.is_running() && !s.is_complete() && "to_idle: the caller does not hold RUNNING");
      if (s.is_cancelled()) return write(AfterPoll::Cancel, s);
      if (s.is_scheduled()) return write(AfterPoll::Reschedule, S(s.bits() & ~S::kRunning));
      return write(AfterPoll::Idle, S((s.bits() & ~S::kRunning) - S::kRef));
    });
  }

  /// The future is gone: it returned Ready (`with_output`: the output is
  /// stored) or its owner destroyed it after a cancellation. Returns the
  /// word as it left it: with HDL clear nobody will take the output, so the
  /// caller drops it; with AWT set the caller wakes the awaiter.
  ///     RUN=1  ->  RUN=0 SCH=0 CMP=1 (+ OUT=1 if with_output and HDL=1)
  /// Precondition: RUN=1 CMP=0, held by the caller.
  TaskSnapshot to_complete(bool with_output) noexcept {
    return update([&](S s) {
             assert(s.is_running() && !s.is_complete() && "to_complete: the caller does not hold RUNNING");
             TaskWord next = (s.bits() & ~(S::kRunning | S::kScheduled)) | S::kComplete;
             if (with_output && s.has_handle()) next |= S::kOutput;
             return write(S(next));
           })
        .after;
  }

  /// A Runnable is dropped without running (an executor that shuts down
  /// drops its queues): the task is cancelled and the dropper owns the future.
  ///     SCH=1 or RUN=1  ->  SCH=0 RUN=1 CAN=1
  /// Precondition: SCH=1 or RUN=1 (the Runnable's), CMP=0.
  void to_cancelled_by_runnable() noexcept {
    update([](S s) {
      assert((s.is_scheduled() || s.is_running()) && !s.is_complete()
             && "to_cancelled_by_runnable: no Runnable owns the task");
      return write(S((s.bits() & ~S::kScheduled) | S::kRunning | S::kCancelled));
    });
  }

  // ---- wakers ----------------------------------------------------------

  /// A wake through a reference (wake_by_ref). An idle task is scheduled
  /// and its new Runnable gets a new reference; a running one is marked so
  /// that its runner reschedules it after the poll.
  ///     idle            ->  SCH=1, refs+1     Schedule
  ///     RUN=1 SCH=0     ->  SCH=1             Nothing
  ///     SCH, CMP or CAN ->  unchanged         Nothing
  /// Precondition: the caller holds a reference.
  WakeAction notify_by_ref() noexcept {
    return update([](S s) {
             assert(s.refs() > 0 && "notify_by_ref: the waker holds no reference");
             if (s.bits() & (S::kScheduled | S::kComplete | S::kCancelled)) return keep(WakeAction::Nothing);
             if (s.is_running()) return write(WakeAction::Nothing, S(s.bits() | S::kScheduled));
             return write(WakeAction::Schedule, S((s.bits() | S::kScheduled) + S::kRef));
           })
        .action;
  }

  /// A wake that consumes the waker's reference (wake). As notify_by_ref,
  /// but the reference goes to the new Runnable, or is dropped here.
  ///     idle            ->  SCH=1             Schedule (the reference is the Runnable's)
  ///     RUN=1 SCH=0     ->  SCH=1, refs-1     Nothing
  ///     otherwise       ->  refs-1            Nothing (Dealloc: that was the last)
  /// Precondition: the caller holds a reference.
  Transition<WakeAction> notify_by_val() noexcept {
    return update([](S s) {
      assert(s.refs() > 0 && "notify_by_val: the waker holds no reference");
      if (s.is_idle() && !s.is_cancelled()) return write(WakeAction::Schedule, S(s.bits() | S::kScheduled));
      TaskWord next = s.bits() - S::kRef;
      if (s.is_running() && !(s.bits() & (S::kScheduled | S::kCancelled))) next |= S::kScheduled;
      return write(s.refs() == 1 ? WakeAction::Dealloc : WakeAction::Nothing, S(next));
    });
  }

  // ---- the JoinHandle's side -------------------------------------------

  /// abort(): asks for cancellation. An idle task is scheduled so that its
  /// executor destroys the future on its own thread; a scheduled or running
  /// one is destroyed by its next owner, which sees CAN.
  ///     idle            ->  CAN=1 SCH=1, refs+1   Schedule
  ///     SCH=1 or RUN=1  ->  CAN=1                 Nothing
  ///     CMP or CAN      ->  unchanged             Nothing
  /// Precondition: the caller holds a reference (the handle's, or a task
  /// set's).
  AbortAction abort() noexcept {
    return update([](S s) {
             assert(s.refs() > 0 && "abort: the caller holds no reference");
             if (s.is_complete() || s.is_cancelled()) return keep(AbortAction::Nothing);
             if (s.is_idle())
               return write(AbortAction::Schedule, S((s.bits() | S::kCancelled | S::kScheduled) + S::kRef));
             return write(AbortAction::Nothing, S(s.bits() | S::kCancelled));
           })
        .action;
  }

  /// The handle stores its waker: it owns the slot while AWT is clear, and
  /// hands it to the task here. Fails (returns false) once the task is complete.
  ///     CMP=0 AWT=0  ->  AWT=1
  /// Precondition: HDL=1 AWT=0.
  bool set_awaiter() noexcept {
    return update([](S s) {
             assert(s.has_handle() && !s.has_awaiter() && "set_awaiter: the handle does not own the slot");
             if (s.is_complete()) return keep(false);
             return write(true, S(s.bits() | S::kAwaiter));
           })
        .action;
  }

  /// The handle takes its slot back to store a different waker. Fails once
  /// the task is complete: the task may be reading the slot.
  ///     CMP=0 AWT=1  ->  AWT=0
  /// Precondition: HDL=1 AWT=1.
  bool unset_awaiter() noexcept {
    return update([](S s) {
             assert(s.has_handle() && s.has_awaiter() && "unset_awaiter: the slot holds no waker of the handle");
             if (s.is_complete()) return keep(false);
             return write(true, S(s.bits() & ~S::kAwaiter));
           })
        .action;
  }

  /// The handle is done with a complete task: it took or dropped the output
  /// (`had_output`: OUT was set) and drops its reference, all in one
  /// operation.
  ///     CMP=1 HDL=1 (OUT=1)  ->  HDL=0 OUT=0, refs-1
  /// Precondition: CMP=1 HDL=1, and OUT=1 exactly when had_output.
  RefsLeft release_complete_handle(bool had_output) noexcept {
    TaskWord drop = S::kHandle | (had_output ? S::kOutput : 0) | S::kRef;
    S prev(word_.fetch_sub(drop, std::memory_order_acq_rel));
    assert(prev.is_complete() && prev.has_handle() && prev.has_output() == had_output && prev.refs() > 0
           && "release_complete_handle: the task is not complete, or the handle is not its own");
    return prev.refs() == 1 ? RefsLeft::None : RefsLeft::Some;
  }

  /// The handle is destroyed. If the slot holds its waker, the handle takes
  /// the slot back first (ClearAwaiter: it clears the waker, then drops its
  /// reference with ref_dec); otherwise its reference goes in this same
  /// operation. A complete task is left unchanged (Complete): the handle
  /// drops the output, if any, then calls release_complete_handle.
  ///     CMP=0 HDL=1 AWT=1  ->  HDL=0 AWT=0            ClearAwaiter
  ///     CMP=0 HDL=1 AWT=0  ->  HDL=0, refs-1          Released (LastRef: that was the last)
  ///     CMP=1              ->  unchanged              Complete
  /// Precondition: HDL=1.
  Transition<DropHandle> unset_handle() noexcept {
    return update([](S s) {
      assert(s.has_handle() && s.refs() > 0 && "unset_handle: the task has no handle");
      if (s.is_complete()) return keep(DropHandle::Complete);
      if (s.has_awaiter()) return write(DropHandle::ClearAwaiter, S(s.bits() & ~(S::kHandle | S::kAwaiter)));
      return write(s.refs() == 1 ? DropHandle::LastRef : DropHandle::Released, S((s.bits() & ~S::kHandle) - S::kRef));
    });
  }

  // ---- executors ---------------------------------------------------------

  /// An executor shuts down and cancels a task it holds. An idle task's
  /// future is destroyed by the caller, now (it owns RUN). A scheduled one
  /// has a Runnable, in one of the executor's queues or on its way there
  /// from a waker's thread: the executor waits for it (AwaitRunnable) and
  /// destroys the future when it drops it, so that no future is destroyed
  /// inside a wake, on a thread that may hold what its destructor takes.
  ///     CMP=1           ->  unchanged       Nothing
  ///     CAN=1           ->  unchanged       AwaitRunnable (aborted: its Runnable is out)
  ///     idle            ->  CAN=1 RUN=1     DestroyFuture
  ///     SCH=1 or RUN=1  ->  CAN=1           AwaitRunnable
  /// Precondition: the caller holds a reference (its registry's), and no
  /// thread runs the task (the executor's workers have stopped).
  ShutdownAction shutdown() noexcept {
    return update([](S s) {
             assert(s.refs() > 0 && "shutdown: the executor holds no reference");
             if (s.is_complete()) return keep(ShutdownAction::Nothing);
             if (s.is_cancelled()) return keep(ShutdownAction::AwaitRunnable);
             if (s.is_idle()) return write(ShutdownAction::DestroyFuture, S(s.bits() | S::kCancelled | S::kRunning));
             return write(ShutdownAction::AwaitRunnable, S(s.bits() | S::kCancelled));
           })
        .action;
  }

  // ---- references --------------------------------------------------------

  /// A new reference (a Waker clone). Relaxed: the cloner already holds one.
  /// Stops the program at kMaxRefs rather than wrap.
  /// Precondition: the caller holds a reference.
  void ref_inc() noexcept {
    S prev(word_.fetch_add(S::kRef, std::memory_order_relaxed));
    assert(prev.refs() > 0 && "ref_inc: the cloner holds no reference");
    if (prev.refs() >= kMaxRefs) [[unlikely]]
      task_refcount_overflow();
  }

  /// Drops `n` references.
  ///     refs  ->  refs-n        None: they were the last ones
  /// Precondition: the caller holds the `n` references.
  Transition<RefsLeft> ref_dec(TaskWord n) noexcept {
    S prev(word_.fetch_sub(n * S::kRef, std::memory_order_acq_rel));
    assert(prev.refs() >= n && "ref_dec: more references dropped than held");
    return {prev.refs() == n ? RefsLeft::None : RefsLeft::Some, S(prev.bits() - n * S::kRef)};
  }

  /// Drops `n` references and clears REG: the executor's registry lets go.
  ///     REG=1  ->  REG=0, refs-n
  /// Precondition: REG=1, and the registry holds the `n` references.
  Transition<RefsLeft> unregister(TaskWord n) noexcept {
    S prev(word_.fetch_sub(n * S::kRef + S::kRegistered, std::memory_order_acq_rel));
    assert(prev.is_registered() && prev.refs() >= n && "unregister: the task is not registered");
    return {prev.refs() == n ? RefsLeft::None : RefsLeft::Some, S(prev.bits() - n * S::kRef - S::kRegistered)};
  }

 private:
  // One step of a transition, as its function decides it: the action, and
  // the word to write (with `write`) or no write at all (`keep`: the
  // transition declines and the word stays as read).
  template <class Action>
  struct Step {
    Action action;
    S next;
    bool writes;
  };
  template <class Action>
  static Step<Action> write(Action action, S next) noexcept {
    return {action, next, true};
  }
  // A transition whose caller needs only the word it leaves.
  static Step<bool> write(S next) noexcept { return {true, next, true}; }
  template <class Action>
  static Step<Action> keep(Action action) noexcept {
    return {action, S(), false};
  }

  // fetch_update: applies `f` to the word until its compare-and-swap
  // succeeds, or `f` declines. Only the last attempt's action counts.
  template <class F>
  auto update(F f) noexcept {
    using Action = decltype(f(S()).action);
    TaskWord current = word_.load(std::memory_order_acquire);
    for (;;) {
      Step<Action> step = f(S(current));
      if (!step.writes) return Transition<Action>{step.action, S(current)};
      if (word_.compare_exchange_weak(current, step.next.bits(), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        return Transition<Action>{step.action, step.next};
      }
    }
  }

  Atomic<TaskWord> word_;
};

/// The state word of every real task.
using TaskState = BasicTaskState<Atomic>;

}  // namespace pollux::detail
