// SingleCoreExecutor: runs static tasks on one core, woken by interrupt
// handlers. Its run queue is the only shared structure, and each of its
// operations is a critical section; when nothing is ready it sleeps in
// board::wait_for_interrupt with interrupts masked, so a wake delivered
// between its last look and the sleep ends the sleep (rule 6: no lost
// wake). Polls run with interrupts enabled.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <cstddef>
#include <cstdint>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/interrupts.hpp"
#include "pollux/embedded/board.hpp"
#include "pollux/embedded/detail/static_header.hpp"
#include "pollux/embedded/static_task.hpp"
#include "pollux/task/detail/harness.hpp"

namespace pollux {

/// The executor of the embedded profile: one per program, on the core's
/// main stack. Tasks live in user-declared storage (StaticTask, TaskPool);
/// any interrupt handler may wake them.
class SingleCoreExecutor {
 public:
  SingleCoreExecutor() = default;
  /// Debug builds stop here if a task it spawned has not completed: the
  /// task's storage keeps the address of this executor's queue, where its
  /// next wake would go.
  ~SingleCoreExecutor() {
    if (detail::check_contract && live_ != 0) {
      detail::contract_violation_text(
          "a SingleCoreExecutor was destroyed while a task it spawned had not completed: the task's next wake "
          "would reach a queue that is gone (run() returns only once every task completed)");
    }
  }
  SingleCoreExecutor(const SingleCoreExecutor&) = delete;
  SingleCoreExecutor& operator=(const SingleCoreExecutor&) = delete;

  /// Starts `future` as a task in `storage`; false (the future dropped)
  /// while the storage still holds a task. Call it from the executor's own code (main,
  /// or a task), not from an interrupt handler.
  template <Future F>
  [[nodiscard]] bool spawn(StaticTask<F>& storage, F future) noexcept {
    if (!storage.start(std::move(future), queue_)) return false;
    ++live_;
    queue_.push(storage.header());
    return true;
  }

  /// Starts `future` in a free slot of `pool`; false when every slot holds a task.
  template <Future F, std::size_t N>
  [[nodiscard]] bool spawn(TaskPool<F, N>& pool, F future) noexcept {
    for (auto& slot : pool.slots_) {
      if (!slot.in_use()) return spawn(slot, std::move(future));
    }
    return false;
  }

  /// Runs the ready tasks, then sleeps until an interrupt wakes one, and
  /// so on; returns once every task spawned has completed.
  void run() noexcept {
    for (;;) {
      run_ready();
      if (live_ == 0) return;
      detail::InterruptGuard masked;
      if (queue_.empty_masked()) board::wait_for_interrupt();
    }  // unmasked here: the handler of the interrupt that woke the core runs
  }

  /// Polls every ready task once, and those woken meanwhile, until none
  /// is ready; returns the number of polls (a board's own main loop, tests).
  std::size_t run_ready() noexcept {
    std::size_t polls = 0;
    while (detail::StaticTaskHeader* task = queue_.pop()) {
      ++polls;
      if (detail::task_run(task)) {
        --live_;
        detail::task_release(task);  // the Runnable's reference
      }
    }
    return polls;
  }

  /// The tasks spawned and not yet complete.
  std::size_t live() const noexcept { return live_; }

 private:
  detail::RunQueue queue_;
  std::size_t live_ = 0;  // touched only by the executor's own code
};

}  // namespace pollux
