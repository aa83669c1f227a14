// The inject queue: tasks woken or spawned from outside a worker, and a
// full local queue's overflow, wait here for any worker.
//
// A push is one compare-and-swap onto a stack: no lock, and a batch costs
// the same as one task, so wakes from other threads never wait for each
// other or for a worker. Workers pop under a mutex that only they take:
// whoever finds the ready list empty takes the whole stack in one exchange
// and reverses it, so tasks leave in the order they came, oldest batch
// first. Taking the whole stack (never one node) is what keeps the stack
// free of the ABA problem.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../../core/metrics.hpp"
#include "../task_list.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/task/detail/header.hpp"

namespace pollux::detail::multi_thread {

class InjectQueue {
 public:
  /// Pushes one task. False once the queue is closed: the caller keeps the
  /// task (and drops its Runnable, which cancels it).
  bool push(TaskHeader* task) noexcept { return push_chain(task, task, 1); }

  /// Pushes every task of `tasks` (the oldest first) at once. False once
  /// the queue is closed: `tasks` is left as it was.
  bool push(TaskList& tasks) noexcept {
    if (tasks.empty()) return true;
    TaskHeader* oldest = tasks.front();
    TaskHeader* newest = nullptr;
    std::uint64_t n = 0;
    while (TaskHeader* task = tasks.pop_front()) {  // relink newest first
      task->run_next = newest;
      newest = task;
      ++n;
    }
    if (push_chain(newest, oldest, n)) return true;
    oldest->run_next = nullptr;
    tasks = TaskList::from_stack(newest);
    return false;
  }

  /// The oldest task and up to `max - 1` more behind it, but no more than
  /// a `sharers`-th of what waits, so a burst is spread over the workers.
  /// Empty when nothing waits.
  TaskList pop_share(std::size_t sharers, std::size_t max) noexcept {
    TaskList out;
    if (empty()) return out;
    MutexLock lock(pop_mutex_);
    if (ready_.empty()) {
      // Until the real size is known, empty() must not see "nothing pushed,
      // nothing ready" while the stack is in our hands: the exchange that
      // takes it publishes this store first.
      ready_size_.store(1, std::memory_order_relaxed);
      ready_ = TaskList::from_stack(take_pushed());
    }
    std::size_t n = std::min(max, 1 + ready_.size() / sharers);
    while (n-- > 0 && !ready_.empty()) out.push_back(ready_.pop_front());
    ready_size_.store(ready_.size(), std::memory_order_release);
    count(popped_, out.size());  // one writer at a time: the lock's holder
    return out;
  }

  /// About how many tasks wait (pushes counted less pops), for the metrics;
  /// zero in a build without them.
  std::size_t approximate_len() const noexcept {
    std::uint64_t popped = popped_.get();  // first: a pop read after its push never makes this negative
    std::uint64_t pushed = pushed_count_.get();
    return pushed > popped ? static_cast<std::size_t>(pushed - popped) : 0;
  }

  /// True when no task waits. A task whose push has returned is seen. The
  /// push and this are seq_cst: the idle protocol (idle.hpp) needs them in
  /// one total order with its state word.
  bool empty() const noexcept {
    TaskHeader* top = pushed_.load(std::memory_order_seq_cst);
    return (top == nullptr || top == closed()) && ready_size_.load(std::memory_order_seq_cst) == 0;
  }

  /// Closes the queue and returns what waits in it: later pushes fail.
  TaskList close() noexcept {
    TaskHeader* top = pushed_.exchange(closed(), std::memory_order_acq_rel);
    MutexLock lock(pop_mutex_);
    TaskList left = std::move(ready_);
    left.append(TaskList::from_stack(top == closed() ? nullptr : top));
    ready_size_.store(0, std::memory_order_release);
    count(popped_, left.size());
    return left;
  }

 private:
  // The top of the stack once closed; never a task's address.
  static TaskHeader* closed() noexcept { return reinterpret_cast<TaskHeader*>(alignof(TaskHeader)); }

  // Links `oldest` to the current top and makes `newest` the top (`n`
  // tasks from `newest` to `oldest`).
  bool push_chain(TaskHeader* newest, TaskHeader* oldest, std::uint64_t n) noexcept {
    TaskHeader* top = pushed_.load(std::memory_order_relaxed);
    do {
      if (top == closed()) return false;
      oldest->run_next = top;
    } while (!pushed_.compare_exchange_weak(top, newest, std::memory_order_seq_cst, std::memory_order_relaxed));
    count_shared(pushed_count_, n);  // on the line the exchange just took: no extra miss
    return true;
  }

  TaskHeader* take_pushed() noexcept {
    TaskHeader* top = pushed_.load(std::memory_order_acquire);
    while (top != nullptr && top != closed()
           && !pushed_.compare_exchange_weak(top, nullptr, std::memory_order_acq_rel, std::memory_order_acquire)) {
    }
    return top == closed() ? nullptr : top;
  }

  alignas(64) Atomic<TaskHeader*> pushed_{nullptr};  // the pushes not yet taken, newest first
  Counter pushed_count_;                             // tasks pushed, ever (metrics)
  alignas(64) Mutex pop_mutex_;
  Counter popped_;                                // tasks popped or drained, ever (metrics), under pop_mutex_
  TaskList ready_ POLLUX_GUARDED_BY(pop_mutex_);  // taken from the stack, oldest first
  Atomic<std::size_t> ready_size_{0};             // ready_.size(), for empty() without the lock
};

}  // namespace pollux::detail::multi_thread
