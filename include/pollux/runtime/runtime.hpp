// Runtime: an executor plus a Driver, so that tasks can sleep, time out and
// do I/O, plus a BlockingPool for spawn_blocking. Runtime::current_thread() runs tasks on
// the thread that calls block_on; Runtime::multi_thread(n) on n workers
// (multi_thread() on one per core).
// Inside block_on and inside tasks, pollux::spawn and the timers find the
// runtime by themselves. Destroying the runtime cancels and destroys every
// task first (their timers unlink, their sockets close), then waits for the
// blocking functions running, then destroys the driver.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/exec/local_executor.hpp"
#include "pollux/exec/task_dump.hpp"
#include "pollux/exec/thread_pool.hpp"
#include "pollux/runtime/blocking_pool.hpp"
#include "pollux/runtime/detail/console_server.hpp"
#include "pollux/runtime/runtime_metrics.hpp"
#include "pollux/task/join_handle.hpp"
#include "pollux/task/lost_wake.hpp"
#include "pollux/task/unhandled_exception.hpp"
#include "pollux/driver/driver.hpp"

namespace pollux {

/// Settings of a runtime that are not its shape.
struct RuntimeOptions {
  /// What becomes of an exception thrown by a task whose JoinHandle was
  /// destroyed: Report (stderr, the default), Ignore, or Terminate.
  UnhandledException unhandled_exception = UnhandledException::Report;
  /// What a debug build does with a task that returned Pending and kept no
  /// waker: legal for a task that waits only to be cancelled, usually a bug.
  LostWake lost_wake = LostWake::Report;
  /// What the sockets run on. Auto (the default): io_uring where the
  /// kernel allows it (a multi-thread runtime gives each worker a ring of
  /// its own), epoll otherwise; the environment variable
  /// POLLUX_IO=epoll|uring chooses instead. Epoll or Uring force one; a
  /// Uring that cannot be had runs on epoll with a line on stderr.
  IoBackend io_backend = IoBackend::Auto;
  /// Also measure each poll's duration and each task's wait from wake to
  /// poll, for metrics()'s histograms: three clock reads per poll, so off
  /// unless asked for. The counts are kept either way.
  bool histograms = false;
  /// A Unix socket path where the runtime answers pollux-console (its
  /// metrics and live tasks, one snapshot per connection, from a thread of
  /// its own; mode 0600). Empty (the default): the environment variable
  /// POLLUX_CONSOLE's path, if set, else no console. A path given here that
  /// cannot be had throws; POLLUX_CONSOLE's is skipped with a line on
  /// stderr (the program runs on without a console).
  std::string console_socket{};
};

/// An executor with a driver (timers, sockets) and a blocking pool: what a
/// program runs its futures on. Current-thread or multi-thread; destroying
/// it cancels the tasks still running, and every task's future is destroyed
/// on the destroying thread before the destructor returns (also those a
/// wake from another thread was handing over at that moment).
class Runtime {
 public:
  /// Tasks run on the thread that calls block_on, while it does.
  static Runtime current_thread(RuntimeOptions options = {});
  /// Tasks run on `workers` threads; throws std::invalid_argument for 0.
  static Runtime multi_thread(std::size_t workers, RuntimeOptions options = {});
  /// Tasks run on one worker per core (std::thread::hardware_concurrency,
  /// or one where that is unknown).
  static Runtime multi_thread(RuntimeOptions options = {});

  /// Takes over `other`'s executor, driver, pool and console.
  Runtime(Runtime&&) noexcept = default;
  /// Shuts this runtime down exactly as its destructor does (its tasks
  /// cancelled, its workers and blocking threads joined, then its driver
  /// gone), then takes over `other`'s.
  Runtime& operator=(Runtime&& other) noexcept;
  /// Cancels every task still running, then stops the threads and the driver.
  ~Runtime();

  /// Not a future, given to block_on: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused block_on(F) {
    detail::not_a_future<F>();
    return {};
  }

  /// Drives `future` on the calling thread to its output (or rethrows its
  /// exception), with this runtime's driver installed, so it may sleep and
  /// spawn. On a current-thread runtime the spawned tasks run meanwhile.
  template <Future F>
  output_t<F> block_on(F future) {
    check_alive("block_on");
    Guard guard = enter();
    if (local_) return local_->block_on(std::move(future));
    return pool_->block_on(std::move(future));
  }

  /// Not a future, given to spawn: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused spawn(F, std::string_view = {}) {
    detail::not_a_future<F>();
    return {};
  }

  /// On a current-thread runtime: from its thread only (std::logic_error
  /// otherwise); the task runs during block_on.
  template <Future F>
  JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
    check_alive("spawn");
    if (local_) return local_->spawn(std::move(future), name);
    return pool_->spawn(std::move(future), name);
  }

  /// For a loop that is not pollux's (an Asio io_context on this thread,
  /// see pollux/interop/asio_runtime.hpp): one turn of a current-thread
  /// runtime that never blocks, as LocalExecutor::turn: due timers and
  /// ready sockets, then at most `max_tasks` tasks. True when more is
  /// ready; false when it waits until wait_fd() is readable. From the
  /// runtime's thread, outside block_on; throws std::logic_error on a
  /// multi-thread runtime or one on io_uring (turn needs the epoll backend).
  bool turn(std::size_t max_tasks = 61);

  /// See LocalExecutor::set_outside_waker: a waker for an outside loop
  /// that can be handed work directly. Current-thread runtimes only
  /// (std::logic_error otherwise), from the runtime's thread.
  void set_outside_waker(std::optional<Waker> waker);

  /// The fd turn() waits on: readable when a timer falls due, a socket is
  /// ready or a task is woken. -1 unless current-thread on epoll.
  int wait_fd() const noexcept { return local_ ? local_->wait_fd() : -1; }

  /// Installs the runtime's driver and blocking pool on this thread for the
  /// guard's lifetime, so that sleep(d) made outside block_on reads the
  /// runtime's clock (a paused one, say) and spawn_blocking finds the pool.
  class [[nodiscard]] Guard {
   public:
    /// Installs `driver` and `pool`; the previous ones come back after.
    Guard(const Driver& driver, BlockingPool* pool) noexcept : driver_(driver.enter()), pool_(pool) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    // Destroyed in reverse: the pool first, then the driver, each put back.
    Driver::Guard driver_;
    detail::ContextScope<&detail::RuntimeThreadContext::blocking_pool> pool_;
  };
  /// See Guard.
  Guard enter() const noexcept { return Guard(*driver_, blocking_.get()); }

  /// The threads that run spawn_blocking's jobs.
  BlockingPool& blocking_pool() noexcept { return *blocking_; }

  /// The timers' and sockets' driver (pause() its clock in tests).
  Driver& driver() noexcept { return *driver_; }
  /// What the sockets run on: Epoll or Uring (see RuntimeOptions::io_backend).
  IoBackend io_backend() const noexcept { return driver_->io_backend(); }
  /// The threads that run tasks: 1 on a current-thread runtime.
  std::size_t workers() const noexcept { return local_ ? 1 : pool_->threads(); }
  /// How many tasks were spawned and have not finished.
  std::size_t live_tasks() const { return local_ ? local_->live_tasks() : pool_->live_tasks(); }
  /// A snapshot of every live task: id, name, state, polls, age.
  std::vector<TaskInfo> tasks() const { return local_ ? local_->tasks() : pool_->tasks(); }
  /// tasks() from any thread: at once on a multi-thread runtime; on a
  /// current-thread one its thread answers between tasks, and nothing
  /// comes back if it did not within `wait` (see LocalExecutor::tasks_within).
  std::optional<std::vector<TaskInfo>> tasks_within(Duration wait) const {
    if (local_) return local_->tasks_within(wait);
    return pool_->tasks();
  }
  /// tasks() as text, one line per task, for a debugging dump.
  std::string dump() const { return format_dump(tasks()); }
  /// A snapshot of the runtime's counts: its tasks, queues and workers,
  /// its driver and its blocking pool. Any thread, at any time (a task of
  /// this runtime, a thread of the program's own).
  RuntimeMetrics metrics() const;
  /// The path of its console socket; empty when it has none.
  std::string console_socket() const { return console_ ? console_->path() : std::string(); }

 private:
  Runtime() = default;
  // Throws std::logic_error when this runtime was moved from, or is being
  // destroyed (a task's destructor spawning during shutdown).
  void check_alive(const char* what) const;
  // What the destructor does; leaves every member empty.
  void shut_down() noexcept;
  // Opens the console socket that `options` or POLLUX_CONSOLE names.
  void open_console(const RuntimeOptions& options);

  // Declared first, destroyed last: the executors cancel their tasks, whose
  // timers unlink from the driver, before the driver goes.
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<BlockingPool> blocking_;
  std::unique_ptr<LocalExecutor> local_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<detail::ConsoleServer> console_;  // reads the others: goes first
};

}  // namespace pollux
