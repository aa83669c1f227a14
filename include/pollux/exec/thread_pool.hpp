// ThreadPool: runs tasks on n worker threads.
//  - Each worker has a bounded FIFO run queue that it pushes to and others
//    steal from, and a LIFO slot for the task it just woke (a message
//    handed to a waiting task is answered while it is hot in the cache).
//  - Wakes and spawns from outside the pool go through a locked inject
//    queue; workers look there every 61 tasks, so nothing waits forever.
//  - A worker with nothing to do steals from a random other worker, and
//    otherwise parks on its own futex: an idle pool uses no CPU. Work that
//    arrives for a parked pool unparks one worker.
//  - Made with a driver (Runtime::multi_thread does this), one idle worker
//    at a time sleeps in the driver instead of its futex, so due timers
//    wake it; busy workers let the driver fire due timers every 61 tasks.
// spawn works from any thread; pollux::spawn inside a task reaches the
// pool that runs it. Destroying the pool stops the workers, then cancels
// every task that is left: each future is destroyed, handles throw Cancelled.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pollux/core/future.hpp"
#include "pollux/exec/block_on.hpp"
#include "pollux/exec/park.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/exec/task_dump.hpp"
#include "pollux/task/join_handle.hpp"

namespace pollux {

struct ThreadPoolOptions {
  Arc<Park> driver;                        // what idle workers sleep in (none: their futex)
  std::function<void()> on_thread_start;   // runs on each worker before its first task
  std::function<void()> on_thread_stop;    // runs on each worker after its last
  /// What becomes of an exception of a detached task.
  UnhandledException unhandled_exception = UnhandledException::Report;
};

class ThreadPool {
 public:
  // Throws std::invalid_argument for 0 threads.
  explicit ThreadPool(std::size_t threads, ThreadPoolOptions options = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <Future F>
  JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
    return detail::spawn_on(scheduler(), std::move(future), name);
  }

  // Drives `future` on the calling thread (parking it while the future is
  // pending) while the workers run the tasks; pollux::spawn inside it
  // spawns onto this pool. Throws std::logic_error on one of the pool's own
  // workers, which it would block (await a JoinHandle there instead).
  template <Future F>
  output_t<F> block_on(F future) {
    check_not_worker("block_on");
    detail::CurrentSchedulerScope scope(&scheduler());
    return pollux::block_on(std::move(future));
  }

  std::size_t threads() const noexcept;
  std::size_t live_tasks() const;
  std::vector<TaskInfo> tasks() const;
  std::string dump() const { return format_dump(tasks()); }

 private:
  class Shared;
  detail::Scheduler& scheduler() const noexcept;
  void check_not_worker(const char* what) const;
  Arc<Shared> shared_;
};

}  // namespace pollux
