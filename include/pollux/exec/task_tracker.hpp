// TaskTracker: tokio-util's, for waiting until a group of tasks has ended,
// typically a server's connections at shutdown. Each tracked future holds
// a count on the tracker while it exists; wait() completes once the tracker
// is closed and the count is zero, that is once every tracked future was
// destroyed (completed, aborted, or dropped at shutdown). It keeps no list
// of tasks: a task that ends is freed as soon as its JoinHandle is gone, so
// a server that served a million connections holds nothing for them.
//
// A tracked future's count goes when the future is destroyed (rule 5), so
// "ended" means its destructors ran. Thread-safe; wait() embeds a Notify
// waiter node (no allocation per wait).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <string_view>
#include <utility>

#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/sync/notify.hpp"
#include "pollux/task/join_handle.hpp"

namespace pollux {

namespace detail {

// The state word: bit 0 closed, bits 1.. the number of tracked futures.
// wait() is done when the word is exactly kClosed.
struct TrackerState : RefCounted<TrackerState> {
  static constexpr std::size_t kClosed = 1;
  static constexpr std::size_t kOne = 2;

  pollux::detail::Atomic<std::size_t> word{0};
  Notify idle;  // wait() futures; notified when the word becomes kClosed

  void add() noexcept { word.fetch_add(kOne, std::memory_order_relaxed); }
  void remove() noexcept {
    if (word.fetch_sub(kOne, std::memory_order_acq_rel) == (kOne | kClosed)) idle.notify_waiters();
  }
  bool close() noexcept {
    std::size_t before = word.fetch_or(kClosed, std::memory_order_acq_rel);
    if (before == 0) idle.notify_waiters();
    return (before & kClosed) == 0;
  }
  bool reopen() noexcept { return (word.fetch_and(~kClosed, std::memory_order_acq_rel) & kClosed) != 0; }
  bool done() const noexcept { return word.load(std::memory_order_acquire) == kClosed; }
};

}  // namespace detail

/// One count on a TaskTracker, held for as long as this lives: what a
/// tracked future holds, for work that is not a future.
class TaskTrackerToken {
 public:
  /// Takes a count on `state`.
  explicit TaskTrackerToken(Arc<detail::TrackerState> state) noexcept : state_(std::move(state)) { state_->add(); }
  /// Another count on the same tracker.
  TaskTrackerToken(const TaskTrackerToken& other) noexcept : TaskTrackerToken(other.state_) {}
  /// Takes `other`'s count; `other` holds none.
  TaskTrackerToken(TaskTrackerToken&& other) noexcept : state_(std::move(other.state_)) {}
  TaskTrackerToken& operator=(const TaskTrackerToken&) = delete;
  TaskTrackerToken& operator=(TaskTrackerToken&&) = delete;
  /// Gives the count back (and completes wait() if it was the last of a closed tracker).
  ~TaskTrackerToken() {
    if (state_) state_->remove();
  }

 private:
  Arc<detail::TrackerState> state_;
};

/// A future that holds a count on a TaskTracker while it exists: what
/// TaskTracker::track_future returns and TaskTracker::spawn spawns.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] TrackedFuture {
 public:
  /// The tracked future's output.
  using Output = output_t<F>;

  /// `future`, counted on the tracker whose token this is.
  TrackedFuture(F future, TaskTrackerToken token) : future_(std::move(future)), token_(std::move(token)) {}

  /// Polls the tracked future.
  Poll<Output> poll(Context & cx) { return future_.poll(cx); }

 private:
  F future_;  // destroyed before the token: its destructors count as part of the task
  TaskTrackerToken token_;
};

/// Counts the tasks spawned through it; wait() completes once it is closed
/// and all of them have ended. Copies share one tracker.
class TaskTracker {
 public:
  class Wait;

  /// An open tracker with no tasks.
  TaskTracker() : state_(make_arc<detail::TrackerState>()) {}

  /// Not a future, given to spawn: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused spawn(F, std::string_view = {}) {
    detail::not_a_future<F>();
    return {};
  }

  /// Spawns `future` on the executor running the calling task
  /// (pollux::spawn), tracked. Drop the handle to let the task's memory go
  /// as soon as it ends.
  template <Future F>
  JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
    return pollux::spawn(track_future(std::move(future)), name);
  }
  /// Spawns `future`, tracked, on `executor` (anything with spawn(future,
  /// name): a Runtime, a ThreadPool, a LocalExecutor).
  template <class Executor, Future F>
  auto spawn_on(Executor& executor, F future, std::string_view name = {}) {
    return executor.spawn(track_future(std::move(future)), name);
  }
  /// `future`, holding a count on this tracker while it exists: for an
  /// executor of one's own, or a future run inside another.
  template <Future F>
  TrackedFuture<F> track_future(F future) const {
    return TrackedFuture<F>(std::move(future), token());
  }
  /// A count on this tracker with no future: it ends when the token goes.
  TaskTrackerToken token() const noexcept { return TaskTrackerToken(state_); }

  /// Closes the tracker: wait() can complete from now on. Tasks can still
  /// be tracked. False if it was closed already.
  bool close() noexcept { return state_->close(); }
  /// Opens it again: wait() no longer completes while it stays open. False
  /// if it was open.
  bool reopen() noexcept { return state_->reopen(); }
  /// Whether close() was called (and no reopen() since).
  bool is_closed() const noexcept {
    return (state_->word.load(std::memory_order_acquire) & detail::TrackerState::kClosed) != 0;
  }
  /// The number of tracked futures that exist now.
  std::size_t len() const noexcept { return state_->word.load(std::memory_order_acquire) >> 1; }
  /// Whether no tracked future exists now.
  bool is_empty() const noexcept { return len() == 0; }

  /// A future that completes once the tracker is closed and empty.
  Wait wait() const noexcept;

 private:
  Arc<detail::TrackerState> state_;
};

/// What TaskTracker::wait returns. As tokio-util's: once the tracker was
/// seen closed and empty (when wait() was called, or at any moment after
/// its first poll), the wait is Ready for good, even if the tracker was
/// reopened or tracked a new future before the waiting task ran.
class [[nodiscard("futures do nothing unless polled")]] TaskTracker::Wait {
 public:
  using Output = void;

  /// What wait() makes; Ready at its first poll if the tracker is closed
  /// and empty now. The Notify wait is made before the word is read, so a
  /// notify_waiters after the read reaches it, even before its first poll.
  explicit Wait(Arc<detail::TrackerState> state) noexcept
      : state_(std::move(state)), notified_(state_->idle.notified()), seen_done_(state_->done()) {}
  Wait(Wait && other) noexcept
      : state_(std::move(other.state_)), notified_(std::move(other.notified_)), seen_done_(other.seen_done_) {}
  Wait& operator=(Wait&&) = delete;

  /// Ready once the tracker was closed with every tracked future ended.
  Poll<void> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Wait, !done_);
    // Notified means the word was closed-and-empty at that moment: enough,
    // whatever it is now.
    if (!seen_done_ && !state_->done() && notified_.poll(cx).is_pending()) return pending;
    done_ = true;
    return ready();
  }

 private:
  Arc<detail::TrackerState> state_;
  Notify::Notified notified_;
  bool seen_done_;
  bool done_ = false;
};

inline TaskTracker::Wait TaskTracker::wait() const noexcept { return Wait(state_); }

}  // namespace pollux
