// Runnable: the right to poll a task once. The schedule function of
// make_task receives one each time the task is woken; an executor queues it
// and later calls run(). Destroying a Runnable that was never run cancels
// the task (its future is destroyed, its JoinHandle throws Cancelled), so
// an executor that shuts down just drops its queues.
#pragma once

#include <cstdint>
#include <utility>

#include "pollux/task/header.hpp"

namespace pollux {

class Runnable {
  using Header = detail::TaskHeader;

 public:
  Runnable(Runnable&& other) noexcept : task_(std::exchange(other.task_, nullptr)) {}
  Runnable& operator=(Runnable&& other) noexcept {
    if (this != &other) {
      cancel();
      task_ = std::exchange(other.task_, nullptr);
    }
    return *this;
  }
  ~Runnable() { cancel(); }

  // Polls the task's future once, with the task's own waker. Returns true
  // when the task is finished for good (completed, failed or cancelled);
  // false when it waits for a wake, or was woken during the poll, in which
  // case it was handed to the schedule function again already.
  bool run();

  // run(), except that when it returns true the caller keeps the Runnable's
  // reference to the task and must drop it (detail::task_release): an
  // executor that also drops its registry's reference does both in one
  // atomic operation.
  bool run_retaining();

  std::uint64_t id() const noexcept { return task_->id; }

  // For executors that queue tasks intrusively: give up the Runnable's
  // reference to the queue (release), and take it back (adopt).
  Header* release() noexcept { return std::exchange(task_, nullptr); }
  static Runnable adopt(Header* task) noexcept { return Runnable(task); }
  Header* header() const noexcept { return task_; }

 private:
  explicit Runnable(Header* task) noexcept : task_(task) {}
  void cancel() noexcept;
  static bool close_after_run(Header* task, std::uint64_t state) noexcept;

  Header* task_;
};

inline bool Runnable::run() {
  Header* task = task_;
  bool finished = run_retaining();
  if (finished) detail::task_release(task);
  return finished;
}

inline bool Runnable::run_retaining() {
  Header* task = std::exchange(task_, nullptr);
  std::uint64_t state = task->state.load(std::memory_order_acquire);
  std::uint64_t running;
  if (state & Header::kRunning) {
    // Queued again right after it woke itself: it never stopped running,
    // so there is no transition to make (see the end of this function).
    if (state & Header::kClosed) return close_after_run(task, state);
    running = state;
  } else {
    for (;;) {
      if (state & Header::kClosed) {
        // Aborted while it sat in a queue: the future goes here, on the
        // executor's thread.
        if (!task->state.compare_exchange_weak(state, state & ~Header::kScheduled, std::memory_order_acq_rel,
                                               std::memory_order_acquire)) {
          continue;
        }
        task->vtable->drop_future(task);
        detail::notify_awaiter(task, state);
        return true;
      }
      running = (state & ~Header::kScheduled) | Header::kRunning;
      if (task->state.compare_exchange_weak(state, running, std::memory_order_acq_rel, std::memory_order_acquire)) {
        break;
      }
    }
  }
  // Only the runner writes the count; a dump reads it.
  auto& polls = detail::meta_of(task).polls;
  polls.store(polls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);

  WakerRef waker(RawWaker{task, &detail::task_waker_vtable});
  Context cx(waker);
  Header* outer_task = std::exchange(detail::running_task, task);
  bool outer_woken = std::exchange(detail::running_task_woken, false);
  const bool ready = task->vtable->poll(task, cx);  // stores the output, or the exception, when Ready
  const bool woke_itself = std::exchange(detail::running_task_woken, outer_woken);
  detail::running_task = outer_task;

  state = running;
  if (ready) {
    std::uint64_t done;
    do {
      done = (state & ~(Header::kRunning | Header::kScheduled)) | Header::kCompleted;
      if (!(state & Header::kHandle)) done |= Header::kClosed;  // nobody will take the output
    } while (!task->state.compare_exchange_weak(state, done, std::memory_order_acq_rel, std::memory_order_acquire));
    if (!(state & Header::kHandle)) task->vtable->drop_output(task);
    detail::notify_awaiter(task, state);
    return true;
  }
  if (woke_itself) {
    // Back in the queue still marked running: no state change, so a yield
    // costs no atomic operation. Wakes from elsewhere meanwhile just set
    // kScheduled, and an abort sets kClosed, which the next run sees.
    state = task->state.load(std::memory_order_acquire);
    if (state & Header::kClosed) return close_after_run(task, state);
    task->vtable->schedule(task);  // our reference goes to the new Runnable
    return false;
  }
  for (;;) {
    if (state & Header::kClosed) return close_after_run(task, state);  // aborted during the poll
    if (task->state.compare_exchange_weak(state, state & ~Header::kRunning, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      break;
    }
  }
  if (state & Header::kScheduled) {
    task->vtable->schedule(task);  // woken during the poll: our reference goes to the new Runnable
  } else {
    detail::task_release(task);
  }
  return false;
}

// The task was aborted while it ran (or between a self-wake and its next
// run): the future goes now, on the executor's thread.
inline bool Runnable::close_after_run(Header* task, std::uint64_t state) noexcept {
  while (!task->state.compare_exchange_weak(state, state & ~(Header::kRunning | Header::kScheduled),
                                            std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
  task->vtable->drop_future(task);
  detail::notify_awaiter(task, state);
  return true;
}

inline void Runnable::cancel() noexcept {
  Header* task = std::exchange(task_, nullptr);
  if (task == nullptr) return;
  std::uint64_t state = task->state.load(std::memory_order_acquire);
  while (!task->state.compare_exchange_weak(state, (state | Header::kClosed) & ~(Header::kScheduled | Header::kRunning),
                                            std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
  // A Runnable exists only for a task that has not completed: we own its future.
  task->vtable->drop_future(task);
  detail::notify_awaiter(task, state);
  detail::task_release(task);
}

}  // namespace pollux
