// ThreadPool: runs tasks on n worker threads (tokio's multi-thread
// scheduler, one part per file under src/exec/multi_thread/).
//  - Each worker has a bounded FIFO run queue that it pushes to and others
//    steal half of at a time, and a LIFO slot for the task it just woke (a
//    message handed to a waiting task is answered while it is hot in the
//    cache; up to 3 in a row, and the slot is not stealable).
//  - Wakes and spawns from outside the pool, and a full queue's overflow,
//    go through an inject queue whose push takes no lock; workers look
//    there every 61 tasks, so nothing waits forever.
//  - A worker with nothing to do searches (steals), at most half of them
//    at once, and otherwise parks: an idle pool uses no CPU. New work wakes
//    one sleeper, and only when nobody is searching.
//  - Made with a driver (Runtime::multi_thread does this), the first idle
//    worker sleeps in the driver instead of its futex, so sockets and due
//    timers wake it and it runs what they woke; busy workers let the driver
//    fire what is due every 61 tasks.
// spawn works from any thread; pollux::spawn inside a task reaches the
// pool that runs it. Destroying the pool stops the workers, then cancels
// every task that is left: each future is destroyed, handles give Cancelled.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/exec/block_on.hpp"
#include "pollux/exec/executor_metrics.hpp"
#include "pollux/exec/idle_driver.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/exec/task_dump.hpp"
#include "pollux/task/join_handle.hpp"
#include "pollux/task/lost_wake.hpp"

namespace pollux {

/// How a ThreadPool is made, beyond its number of threads.
struct ThreadPoolOptions {
  /// What one idle worker at a time sleeps in (none: every worker sleeps on its futex).
  Arc<IdleDriver> driver;
  /// Runs on each worker before its first task.
  std::function<void()> on_thread_start;
  /// Runs on each worker after its last.
  std::function<void()> on_thread_stop;
  /// What becomes of an exception of a detached task.
  UnhandledException unhandled_exception = UnhandledException::Report;
  /// What a debug build does with a task that returned Pending and kept no waker.
  LostWake lost_wake = LostWake::Report;
  /// Also measure each poll's duration and each task's wait from wake to
  /// poll, for metrics()'s histograms: three clock reads per poll, so off
  /// unless asked for.
  bool histograms = false;
};

/// A work-stealing executor on `threads` worker threads.
class ThreadPool {
 public:
  /// Starts the workers. Throws std::invalid_argument for 0 threads (or
  /// more than 65,535).
  explicit ThreadPool(std::size_t threads, ThreadPoolOptions options = {});
  /// Stops the workers, then destroys every task's future on this thread,
  /// waiting for a Runnable that a wake on another thread is still handing
  /// over. Stops the program if called on one of the pool's own workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Not a future, given to spawn: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused spawn(F, std::string_view = {}) {
    detail::not_a_future<F>();
    return {};
  }

  /// Spawns a task from any thread (to the inject queue from outside the
  /// pool; from a worker, to its LIFO slot).
  template <Future F>
  JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
    return detail::spawn_on(scheduler(), std::move(future), name);
  }

  /// Not a future, given to block_on: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused block_on(F) {
    detail::not_a_future<F>();
    return {};
  }

  /// Drives `future` on the calling thread (parking it while the future is
  /// pending) while the workers run the tasks; pollux::spawn inside it
  /// spawns onto this pool. Throws std::logic_error on one of the pool's own
  /// workers, which it would block (await a JoinHandle there instead).
  template <Future F>
  output_t<F> block_on(F future) {
    check_not_worker("block_on");
    detail::CurrentSchedulerScope scope(&scheduler());
    return pollux::block_on(std::move(future));
  }

  /// The number of worker threads.
  std::size_t threads() const noexcept;
  /// Tasks spawned and not yet finished.
  std::size_t live_tasks() const;
  /// A snapshot of the live tasks, for dump().
  std::vector<TaskInfo> tasks() const;
  /// The live tasks as text: id, name, state, polls, age.
  std::string dump() const { return format_dump(tasks()); }
  /// A snapshot of the pool's counts: tasks, queues, each worker's polls,
  /// steals, parks and busy time. Any thread, at any time.
  ExecutorMetrics metrics() const;

 private:
  class Shared;
  detail::Scheduler& scheduler() const noexcept;
  void check_not_worker(const char* what) const;
  Arc<Shared> shared_;
};

}  // namespace pollux
