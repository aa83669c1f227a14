// TaskList: an intrusive FIFO of tasks linked through their headers'
// `run_next`, so queuing a task never allocates. A task is in at most one
// run queue at a time (it is queued only by whoever holds its Runnable), so
// one link per task serves every executor's queues.
#pragma once

#include <cstddef>
#include <utility>

#include "pollux/task/detail/header.hpp"

namespace pollux::detail {

class TaskList {
 public:
  TaskList() = default;
  TaskList(TaskList&& other) noexcept
      : head_(std::exchange(other.head_, nullptr)),
        tail_(std::exchange(other.tail_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  TaskList& operator=(TaskList&& other) noexcept {
    head_ = std::exchange(other.head_, nullptr);
    tail_ = std::exchange(other.tail_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  /// The list whose front is the bottom of a stack linked newest first
  /// (`top` is the newest): reversing it restores the order of the pushes.
  static TaskList from_stack(TaskHeader* top) noexcept {
    TaskList list;
    list.tail_ = top;
    while (top != nullptr) {
      TaskHeader* next = top->run_next;
      top->run_next = list.head_;
      list.head_ = top;
      ++list.size_;
      top = next;
    }
    return list;
  }

  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }
  TaskHeader* front() const noexcept { return head_; }

  void push_back(TaskHeader* task) noexcept {
    task->run_next = nullptr;
    if (head_ == nullptr) {
      head_ = task;
    } else {
      tail_->run_next = task;
    }
    tail_ = task;
    ++size_;
  }

  /// The oldest task, or nullptr when empty. Its link is left as it was
  /// (every push sets it), and so is `tail_` once the list is empty: an
  /// empty list is told by its head alone.
  TaskHeader* pop_front() noexcept {
    TaskHeader* task = head_;
    if (task == nullptr) return nullptr;
    head_ = task->run_next;
    --size_;
    return task;
  }

  /// Moves every task of `other` to the back of this list.
  void append(TaskList&& other) noexcept {
    if (other.empty()) return;
    if (head_ == nullptr) {
      head_ = other.head_;
    } else {
      tail_->run_next = other.head_;
    }
    tail_ = other.tail_;
    size_ += other.size_;
    other.head_ = other.tail_ = nullptr;
    other.size_ = 0;
  }

 private:
  TaskHeader* head_ = nullptr;
  TaskHeader* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pollux::detail
