// LateArrivals: where a Runnable goes when a wake hands it to an executor
// that is shutting down, and how the destroying thread waits for it. An
// executor destroys every future on its own thread: a future destroyed
// inside the wake that carried it could wait on the very waker slot that
// wake holds (a blocking job's), or outlive the driver it uses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/task/runnable.hpp"
#include "task_list.hpp"

namespace pollux::detail {

class LateArrivals {
 public:
  /// From a waking thread, once the executor's queues refuse tasks: hands
  /// the Runnable over to drop_until.
  void push(TaskHeader* task) noexcept {
    {
      MutexLock lock(mutex_);
      list_.push_back(task);
    }
    // Bumped after the push, and read by drop_until before its look at the
    // list: an arrival it did not see changes the word, and its wait
    // returns at once.
    arrivals_.fetch_add(1, std::memory_order_release);
    futex_wake_one(arrivals_);
  }

  /// On the destroying thread, after its sweep: drops arriving Runnables
  /// (destroying their tasks' futures here) until `dropped`, the count
  /// dropped so far, reaches `awaited`, the count of Runnables the sweep
  /// found still in flight. Sleeps on the futex word while none is here.
  void drop_until(std::size_t dropped, std::size_t awaited) noexcept {
    while (dropped < awaited) {
      std::int32_t seen = arrivals_.load(std::memory_order_acquire);
      TaskList arrived;
      {
        MutexLock lock(mutex_);
        arrived = std::move(list_);
      }
      if (arrived.empty()) {
        futex_wait(arrivals_, seen);
        continue;
      }
      for (; TaskHeader* task = arrived.pop_front(); ++dropped) (void)Runnable::adopt(task);
    }
  }

 private:
  Mutex mutex_;
  TaskList list_ POLLUX_GUARDED_BY(mutex_);
  Atomic<std::int32_t> arrivals_{0};  // a futex word: bumped after each push
};

}  // namespace pollux::detail
