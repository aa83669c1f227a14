// The header of a static task: the hosted task's state word and harness
// (task/detail/state.hpp, harness.hpp) over storage that the user declares,
// with what a single-core executor needs beside them. 28 bytes on a 32-bit
// core: the 32-bit state word, the vtable, the run queue's link, the queue
// itself, the in-use flag and the awaiter slot that the harness reads.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/interrupts.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/task/detail/state.hpp"
#include "pollux/task/detail/vtable.hpp"

namespace pollux::detail {

struct StaticTaskHeader;
class RunQueue;

/// The vtable of a static task.
using StaticTaskVTable = BasicTaskVTable<StaticTaskHeader>;

/// What the harness and the executor see of a static task. It lives as
/// long as the StaticTask that holds it; each spawn starts a new task in it.
struct StaticTaskHeader {
  /// A header holding no task (constant, for constinit storage).
  constexpr StaticTaskHeader() noexcept : state(0, false, false) {}

  TaskState state;
  const StaticTaskVTable* vtable = nullptr;
  StaticTaskHeader* run_next = nullptr;  // the run queue's link, under its critical section
  RunQueue* queue = nullptr;             // where a wake schedules the task
  /// A task is in it: from spawn until its last reference is gone (which
  /// may be a waker dropped in an interrupt handler, hence atomic).
  Atomic<bool> in_use{false};
  Waker awaiter;  // never set: a static task has no JoinHandle
};

static_assert(sizeof(void*) != 4 || sizeof(StaticTaskHeader) == 28,
              "a static task's header is 28 bytes on a 32-bit core: its RAM is its future's size + 28");

/// The ready tasks of one executor, in FIFO order. Interrupt handlers push
/// (a wake); only the executor pops. Each operation is a critical section
/// of a few instructions.
class RunQueue {
 public:
  /// Queues a task whose Runnable reference the queue now holds.
  void push(StaticTaskHeader* task) noexcept {
    InterruptGuard guard;
    task->run_next = nullptr;
    if (tail_ != nullptr) {
      tail_->run_next = task;
    } else {
      head_ = task;
    }
    tail_ = task;
  }
  /// The next ready task, or nullptr.
  StaticTaskHeader* pop() noexcept {
    InterruptGuard guard;
    StaticTaskHeader* task = head_;
    if (task != nullptr) {
      head_ = task->run_next;
      if (head_ == nullptr) tail_ = nullptr;
    }
    return task;
  }
  /// Whether no task is ready. Precondition: interrupts masked, so that
  /// the answer holds until the caller sleeps.
  bool empty_masked() const noexcept { return head_ == nullptr; }

 private:
  StaticTaskHeader* head_ = nullptr;
  StaticTaskHeader* tail_ = nullptr;
};

/// Debug builds: a static task returned Pending and no waker of it exists
/// (rule 2): it can never run again, and its storage stays in use.
inline void report_lost_wake(StaticTaskHeader* task) noexcept {
  if (task->vtable->lost_wake(task) == LostWake::Ignore) return;
  contract_violation(task->vtable->future_type, "returned Pending but kept no waker: nothing can wake it (rule 2)");
}

}  // namespace pollux::detail
