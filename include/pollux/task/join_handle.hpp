// JoinHandle<T>: a future of a spawned task's output. It rethrows the
// task's exception (rule 7) and throws pollux::Cancelled when the task was
// aborted or its executor shut down before it finished. Destroying the
// handle detaches the task: it runs on, and its output is dropped.
// Cancellation safety: a JoinHandle lost in a select is just destroyed,
// which detaches the task; select over by_ref(handle) to keep it.
#pragma once

#include <cstdint>
#include <exception>
#include <utility>
#include <variant>

#include "pollux/core/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/task/cancelled.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/task/header.hpp"

namespace pollux {

namespace detail {
// The output a task stores in place of its future: a value or an exception.
template <class T>
using TaskOutput = std::variant<unit_if_void_t<T>, std::exception_ptr>;

template <class T>
TaskOutput<T>* output_of(TaskHeader* task) noexcept {
  return static_cast<TaskOutput<T>*>(task->vtable->output(task));
}
}  // namespace detail

template <class T>
class JoinHandle {
  using Header = detail::TaskHeader;

 public:
  using Output = T;

  JoinHandle(JoinHandle&& other) noexcept
      : task_(std::exchange(other.task_, nullptr)), id_(other.id_), done_(other.done_) {}
  JoinHandle& operator=(JoinHandle&& other) noexcept {
    if (this != &other) {
      detach();
      task_ = std::exchange(other.task_, nullptr);
      id_ = other.id_;
      done_ = other.done_;
    }
    return *this;
  }
  ~JoinHandle() { detach(); }

  Poll<T> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(JoinHandle, task_ != nullptr && !done_);
    if (!coop::poll_proceed(cx)) return pending;
    std::uint64_t state = task_->state.load(std::memory_order_acquire);
    for (;;) {
      if ((state & (Header::kCompleted | Header::kClosed)) == Header::kCompleted) {
        if (!task_->state.compare_exchange_weak(state, state | Header::kClosed, std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
          continue;
        }
        return take_output();
      }
      if (state & Header::kClosed) {
        done_ = true;
        throw Cancelled(task_->id);
      }
      if (state & Header::kAwaiter) {
        if (task_->awaiter.will_wake(cx.waker())) return pending;
        // Take the slot back before writing a new waker into it.
        if (!task_->state.compare_exchange_weak(state, state & ~Header::kAwaiter, std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
          continue;
        }
        state &= ~Header::kAwaiter;
      }
      task_->awaiter = cx.waker();
      state = task_->state.fetch_or(Header::kAwaiter, std::memory_order_acq_rel) | Header::kAwaiter;
      if (!(state & (Header::kCompleted | Header::kClosed))) return pending;
      // Finished before it could see our waker: collect now.
    }
  }

  // Cancels the task: its future is destroyed on the executor's thread (at
  // once if it is idle, after the current poll if it is running) and
  // awaiting this handle throws Cancelled. No effect once it finished.
  void abort() noexcept {
    if (task_ == nullptr) return;  // its output was taken: it finished
    std::uint64_t state = task_->state.load(std::memory_order_acquire);
    for (;;) {
      if (state & (Header::kCompleted | Header::kClosed)) return;
      if (state & (Header::kScheduled | Header::kRunning)) {
        // Whoever runs it next sees kClosed and destroys the future.
        if (task_->state.compare_exchange_weak(state, state | Header::kClosed, std::memory_order_acq_rel,
                                               std::memory_order_acquire)) {
          return;
        }
        continue;
      }
      std::uint64_t next = state | Header::kClosed | Header::kScheduled;
      if (task_->state.compare_exchange_weak(state, next + Header::kRef, std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
        task_->vtable->schedule(task_);  // idle: have its executor destroy the future
        return;
      }
    }
  }

  // True once the task completed, failed or was cancelled.
  bool is_finished() const noexcept {
    return task_ == nullptr || (task_->state.load(std::memory_order_acquire) & (Header::kCompleted | Header::kClosed));
  }

  std::uint64_t id() const noexcept { return id_; }

  // For make_task: takes over the handle's reference to `task`.
  static JoinHandle adopt(Header* task) noexcept { return JoinHandle(task); }

 private:
  explicit JoinHandle(Header* task) noexcept : task_(task), id_(task->id) {}

  // Moves the output out, then lets go of the task at once: with kClosed
  // set nothing reads kHandle any more, so one release is all it takes.
  Poll<T> take_output() {
    done_ = true;
    Header* task = std::exchange(task_, nullptr);
    detail::TaskOutput<T>* output = detail::output_of<T>(task);
    if (output->index() == 1) {
      std::exception_ptr error = std::get<1>(*output);
      task->vtable->drop_output(task);
      detail::task_release(task);
      std::rethrow_exception(error);
    }
    if constexpr (std::is_void_v<T>) {
      task->vtable->drop_output(task);
      detail::task_release(task);
      return ready();
    } else {
      Poll<T> result(std::in_place, std::move(std::get<0>(*output)));
      task->vtable->drop_output(task);
      detail::task_release(task);
      return result;
    }
  }

  void detach() noexcept {
    if (task_ == nullptr) return;
    std::uint64_t state = task_->state.fetch_and(~Header::kHandle, std::memory_order_acq_rel);
    if ((state & (Header::kCompleted | Header::kClosed)) == Header::kCompleted) {
      // Completed with an output nobody will take now: drop it here.
      task_->state.fetch_or(Header::kClosed, std::memory_order_acq_rel);
      task_->vtable->drop_output(task_);
    } else if ((state & (Header::kAwaiter | Header::kCompleted | Header::kClosed)) == Header::kAwaiter) {
      // Leave no waker of ours behind (rule 5), unless the task is reading it.
      state = task_->state.fetch_and(~Header::kAwaiter, std::memory_order_acq_rel);
      if (!(state & (Header::kCompleted | Header::kClosed))) task_->awaiter = Waker{};
    }
    detail::task_release(std::exchange(task_, nullptr));
  }

  Header* task_;  // null once the output was taken
  std::uint64_t id_;
  bool done_ = false;
};

}  // namespace pollux
