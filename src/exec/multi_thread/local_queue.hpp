// A worker's local run queue: a fixed ring of task pointers. Only the
// owner pushes, at the tail; the owner and thieves take from the head, each
// claim one compare-and-swap of `head_`. A claimer whose CAS succeeds read
// slots the owner could not have reused: the owner writes slot `tail` only
// while tail - head < capacity, and `head_` could not move under the claim.
//
//   head_            tail_
//     v                v
//   [ a | b | c | d |   |   |  ...  ]   a..d queued; the owner writes at tail_
//
// Every store that publishes a task is seq_cst, as is empty(): the idle
// protocol (idle.hpp) needs them in one total order with its state word.
//
// A thief takes half of what is queued at once (steal_into), and a full
// queue sends half of itself to the inject queue in one push, so neither
// costs one synchronisation per task.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "../task_list.hpp"
#include "config.hpp"
#include "inject_queue.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/task/detail/header.hpp"

namespace pollux::detail::multi_thread {

/// `Capacity`: task slots, a power of two (a worker's is
/// kLocalQueueCapacity; the model tests use a few, so that pushes wrap and
/// overflow).
template <std::uint32_t Capacity>
class BasicLocalQueue {
 public:
  static constexpr std::uint32_t kCapacity = Capacity;
  static_assert(kCapacity >= 2 && (kCapacity & (kCapacity - 1)) == 0, "the capacity must be a power of two");

  /// Where push_back_or_overflow put the task.
  enum class Pushed {
    Here,        // in this queue
    Overflowed,  // with half of this queue, to the inject queue
    Refused,     // nowhere: the inject queue is closed; the caller keeps it
  };

  /// Owner only. Queues `task`; a full queue first moves half of itself,
  /// and `task`, to `overflow` in one push. Refused only when that push
  /// failed (the pool is shutting down).
  Pushed push_back_or_overflow(TaskHeader* task, InjectQueue& overflow) noexcept {
    for (;;) {
      std::uint32_t tail = tail_.load(std::memory_order_relaxed);
      std::uint32_t head = head_.load(std::memory_order_acquire);
      if (tail - head < kCapacity) {
        slots_[tail % kCapacity].store(task, std::memory_order_relaxed);
        tail_.store(tail + 1, std::memory_order_seq_cst);  // seq_cst: see idle.hpp
        return Pushed::Here;
      }
      switch (push_overflow(task, head, overflow)) {
        case Overflow::Pushed:
          return Pushed::Overflowed;
        case Overflow::Closed:
          return Pushed::Refused;
        case Overflow::Retry:
          break;  // a thief took some meanwhile: there is room again
      }
    }
  }

  /// Owner only: pushes into room the caller knows is there (a batch no
  /// larger than free_slots()).
  void push_back_unchecked(TaskHeader* task) noexcept {
    std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    slots_[tail % kCapacity].store(task, std::memory_order_relaxed);
    tail_.store(tail + 1, std::memory_order_seq_cst);
  }

  /// Owner only.
  std::uint32_t free_slots() const noexcept {
    return kCapacity - (tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_acquire));
  }

  /// Owner (or anyone): the oldest task, or nullptr when empty.
  TaskHeader* pop() noexcept {
    std::uint32_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      std::uint32_t tail = tail_.load(std::memory_order_acquire);
      if (head == tail) return nullptr;
      TaskHeader* task = slots_[head % kCapacity].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, head + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return task;
      }
    }
  }

  /// Thief: takes half of this queue (rounded up) into `into`, the thief's
  /// own queue, and returns one of them to run now; nullptr when empty.
  /// The tasks are copied into `into` before the claim and published only
  /// after it, so a failed claim leaves nothing behind. `taken`, if given,
  /// receives how many it took (the one returned included).
  TaskHeader* steal_into(BasicLocalQueue& into, std::uint32_t* taken = nullptr) noexcept {
    std::uint32_t into_tail = into.tail_.load(std::memory_order_relaxed);
    std::uint32_t room = into.free_slots();
    std::uint32_t head = head_.load(std::memory_order_acquire);
    std::uint32_t n = 0;
    for (;;) {
      std::uint32_t tail = tail_.load(std::memory_order_acquire);
      std::uint32_t queued = tail - head;
      if (queued == 0) return nullptr;
      if (queued > kCapacity) {  // `head` went stale while the queue moved: look again
        head = head_.load(std::memory_order_acquire);
        continue;
      }
      n = std::min(queued - queued / 2, room + 1);
      for (std::uint32_t i = 0; i + 1 < n; ++i) {
        into.slots_[(into_tail + i) % kCapacity].store(slots_[(head + i) % kCapacity].load(std::memory_order_relaxed),
                                                       std::memory_order_relaxed);
      }
      TaskHeader* run_now = slots_[(head + n - 1) % kCapacity].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, head + n, std::memory_order_acq_rel, std::memory_order_acquire)) {
        into.tail_.store(into_tail + n - 1, std::memory_order_seq_cst);
        if (taken != nullptr) *taken = n;
        return run_now;
      }
    }
  }

  bool empty() const noexcept { return head_.load(std::memory_order_seq_cst) == tail_.load(std::memory_order_seq_cst); }

  /// Anyone: about how many tasks wait (exact only while nobody pushes or
  /// takes), for the metrics.
  std::uint32_t approximate_len() const noexcept {
    std::uint32_t head = head_.load(std::memory_order_relaxed);
    std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    return std::min(tail - head, kCapacity);  // a stale head reads as a huge length: clamped
  }

 private:
  enum class Overflow { Pushed, Retry, Closed };

  // The owner claims [head, head + kCapacity / 2) as a thief would, then
  // pushes those tasks, and `task` after them, to the inject queue.
  Overflow push_overflow(TaskHeader* task, std::uint32_t head, InjectQueue& overflow) noexcept {
    constexpr std::uint32_t kHalf = kCapacity / 2;
    std::array<TaskHeader*, kHalf> taken;
    for (std::uint32_t i = 0; i < kHalf; ++i) taken[i] = slots_[(head + i) % kCapacity].load(std::memory_order_relaxed);
    if (!head_.compare_exchange_strong(head, head + kHalf, std::memory_order_acq_rel, std::memory_order_acquire)) {
      return Overflow::Retry;
    }
    // Ours now: linking them touches tasks no one else can reach.
    TaskList batch;
    for (TaskHeader* t : taken) batch.push_back(t);
    batch.push_back(task);
    if (overflow.push(batch)) return Overflow::Pushed;
    // Closed (the pool is shutting down and drains this queue later): the
    // taken half goes back, `task` to the caller.
    while (TaskHeader* t = batch.pop_front()) {
      if (t != task) push_back_unchecked(t);
    }
    return Overflow::Closed;
  }

  alignas(64) Atomic<std::uint32_t> head_{0};
  alignas(64) Atomic<std::uint32_t> tail_{0};
  std::array<Atomic<TaskHeader*>, kCapacity> slots_{};
};

/// A worker's run queue.
using LocalQueue = BasicLocalQueue<kLocalQueueCapacity>;

}  // namespace pollux::detail::multi_thread
