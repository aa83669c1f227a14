// JoinHandle<T>: a future of a spawned task's output, Result<T, Cancelled>
// (core/result.hpp's rule): Cancelled when the task was aborted or its
// executor shut down before it finished; by then the task's future has been
// destroyed (its destructor returned, on whichever thread ran it). The
// task's exception is a bug, not a failure: it is rethrown (rule 7).
// Destroying the handle detaches the task: it runs on, and its output is
// dropped.
// Cancellation safety: a JoinHandle lost in a select is just destroyed,
// which detaches the task; select over by_ref(handle) to keep it.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <exception>
#include <utility>
#include <variant>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/result.hpp"
#include "pollux/task/cancelled.hpp"
#include "pollux/task/detail/harness.hpp"
#include "pollux/task/detail/header.hpp"

namespace pollux {

namespace detail {
/// The output a task stores in place of its future: a value or an exception.
template <class T>
using TaskOutput = std::variant<unit_if_void_t<T>, std::exception_ptr>;

template <class T>
TaskOutput<T>* output_of(TaskHeader* task) noexcept {
  return static_cast<TaskOutput<T>*>(task->vtable->output(task));
}
}  // namespace detail

/// The output of a spawned task, as a future of Result<T, Cancelled>; owns one reference to the
/// task.
template <class T>
class JoinHandle {
  using Header = detail::TaskHeader;

 public:
  /// The task's output, or Cancelled.
  using Output = Result<T, Cancelled>;

  /// Takes over `other`'s interest in the task; `other` is empty afterwards.
  JoinHandle(JoinHandle&& other) noexcept : task_(std::exchange(other.task_, nullptr)), id_(other.id_) {}
  /// Detaches from this handle's task, then takes over `other`'s.
  JoinHandle& operator=(JoinHandle&& other) noexcept {
    if (this != &other) {
      detach();
      task_ = std::exchange(other.task_, nullptr);
      id_ = other.id_;
    }
    return *this;
  }
  /// Detaches the task: it runs on, and its output is dropped when it ends.
  ~JoinHandle() { detach(); }

  /// Ready with the task's output (its exception rethrown), or with
  /// Cancelled once the task was cancelled and its future destroyed.
  Poll<Output> poll(Context& cx) {
    POLLUX_CHECK_NOT_DONE(JoinHandle, task_ != nullptr);
    if (!coop::poll_proceed(cx)) return pending;
    switch (detail::task_poll_join(task_, cx.waker())) {
      case detail::JoinPoll::Pending:
        return pending;
      case detail::JoinPoll::Output:
        return take_output();
      case detail::JoinPoll::Cancelled:
        break;
    }
    detail::task_release_complete_handle(std::exchange(task_, nullptr), false);
    return Poll<Output>(std::in_place, Cancelled{id_});
  }

  /// Cancels the task: its future is destroyed on the executor's thread (as
  /// soon as the executor runs it if it is idle, after the current poll if
  /// it is running) and awaiting this handle then gives Cancelled. No
  /// effect once it finished.
  void abort() noexcept {
    if (task_ != nullptr) detail::task_abort(task_);
  }

  /// True once the task completed, failed or was cancelled (and its future
  /// is gone).
  bool is_finished() const noexcept { return task_ == nullptr || task_->state.load().is_complete(); }

  /// The task's id, as a dump shows it.
  std::uint64_t id() const noexcept { return id_; }

  /// For make_task: takes over the handle's reference to `task`.
  static JoinHandle adopt(Header* task) noexcept { return JoinHandle(task); }

 private:
  explicit JoinHandle(Header* task) noexcept : task_(task), id_(task->id) {}

  // Moves the output out, then destroys it and lets go of the task in one
  // atomic operation (OUTPUT, HANDLE and the reference together), also when
  // the move throws.
  Poll<Output> take_output() {
    struct Release {
      Header* task;
      ~Release() {
        task->vtable->drop_output(task);
        detail::task_release_complete_handle(task, true);
      }
    } release{std::exchange(task_, nullptr)};
    detail::TaskOutput<T>& output = *detail::output_of<T>(release.task);
    if (output.index() == 1) std::rethrow_exception(std::get<1>(output));
    if constexpr (std::is_void_v<T>) {
      return Poll<Output>(std::in_place);
    } else {
      return Poll<Output>(std::in_place, std::move(std::get<0>(output)));
    }
  }

  void detach() noexcept {
    if (task_ != nullptr) detail::task_drop_join_handle(std::exchange(task_, nullptr));
  }

  Header* task_;  // null once the output was taken or the cancellation seen (polled again: rule 3)
  std::uint64_t id_;
};

}  // namespace pollux
