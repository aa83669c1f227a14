// Runnable: the right to poll a task once. The schedule function of
// make_task receives one each time the task is woken; an executor queues it
// and later calls run(). Destroying a Runnable that was never run cancels
// the task (its future is destroyed, its JoinHandle gives Cancelled), so
// an executor that shuts down just drops its queues. The protocol itself
// lives in task/detail/harness.hpp.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <utility>

#include "pollux/task/detail/harness.hpp"
#include "pollux/task/detail/header.hpp"

namespace pollux {

/// The right to poll a task once; owns one reference to the task.
class Runnable {
  using Header = detail::TaskHeader;

 public:
  /// Takes over `other`'s reference to the task.
  Runnable(Runnable&& other) noexcept : task_(std::exchange(other.task_, nullptr)) {}
  /// Cancels this Runnable's task if never run, then takes over `other`'s.
  Runnable& operator=(Runnable&& other) noexcept {
    if (this != &other) {
      cancel();
      task_ = std::exchange(other.task_, nullptr);
    }
    return *this;
  }
  /// Cancels the task if the Runnable was never run: its future is destroyed here.
  ~Runnable() { cancel(); }

  /// Polls the task's future once, with the task's own waker. Returns true
  /// when the task is finished for good (completed, failed or cancelled);
  /// false when it waits for a wake, or was woken during the poll, in which
  /// case it was handed to the schedule function again already.
  bool run() noexcept {
    Header* task = task_;
    bool finished = run_retaining();
    if (finished) detail::task_release(task);
    return finished;
  }

  /// run(), except that when it returns true the caller keeps the Runnable's
  /// reference to the task and must drop it (detail::task_release): an
  /// executor that also drops its registry's reference does both in one
  /// atomic operation.
  bool run_retaining() noexcept { return detail::task_run(std::exchange(task_, nullptr)); }

  /// The task's id, as its JoinHandle and a dump show it.
  std::uint64_t id() const noexcept { return task_->id; }

  /// For executors that queue tasks intrusively: give up the Runnable's
  /// reference to the queue (release), and take it back (adopt).
  Header* release() noexcept { return std::exchange(task_, nullptr); }
  /// Takes over a reference released by release().
  static Runnable adopt(Header* task) noexcept { return Runnable(task); }
  /// The task, still owned by this Runnable.
  Header* header() const noexcept { return task_; }

 private:
  explicit Runnable(Header* task) noexcept : task_(task) {}
  void cancel() noexcept {
    if (Header* task = std::exchange(task_, nullptr)) detail::task_drop_runnable(task);
  }

  Header* task_;
};

}  // namespace pollux
