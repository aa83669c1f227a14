// LocalExecutor: runs tasks on one thread, in FIFO order. Wakes from that
// thread go straight to an intrusive run queue; wakes from other threads go
// through a locked inject queue and unpark the thread, which otherwise
// sleeps without using CPU. Destroying the executor cancels every task: each
// future is destroyed, on this thread, and JoinHandles give Cancelled.
//
// spawn is for the executor's own thread (from outside or inside its
// tasks; pollux::spawn inside a task reaches it too).
//
// Made with a driver (an IdleDriver: Runtime::current_thread does this), it sleeps
// in the driver instead of its futex when idle, and lets the driver fire
// due timers every 61 tasks while busy.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pollux/core/detail/chrono.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/exec/executor_metrics.hpp"
#include "pollux/exec/parker.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/exec/task_dump.hpp"
#include "pollux/core/coop.hpp"
#include "pollux/exec/detail/exec_context.hpp"
#include "pollux/task/join_handle.hpp"
#include "pollux/task/lost_wake.hpp"

namespace pollux {

/// How a LocalExecutor is made, beyond what it sleeps in.
struct LocalExecutorOptions {
  /// What becomes of an exception of a detached task.
  UnhandledException unhandled_exception = UnhandledException::Report;
  /// What a debug build does with a task that returned Pending and kept no waker.
  LostWake lost_wake = LostWake::Report;
  /// Also measure each poll's duration and each task's wait from wake to
  /// poll, for metrics()'s histograms: three clock reads per poll, so off
  /// unless asked for.
  bool histograms = false;
};

/// Runs tasks on one thread, in FIFO order.
class LocalExecutor {
 public:
  /// An executor of the calling thread, which parks on its futex when idle.
  LocalExecutor();
  /// An executor that sleeps in `driver` when idle (timers and sockets wake
  /// it); `unhandled`: what becomes of an exception of a detached task;
  /// `lost_wake`: what a debug build does with a task that kept no waker.
  explicit LocalExecutor(Arc<IdleDriver> driver, UnhandledException unhandled = UnhandledException::Report,
                         LostWake lost_wake = LostWake::Report);
  /// An executor that sleeps in `driver` when idle (none: on the calling
  /// thread's futex), made as `options` say.
  LocalExecutor(Arc<IdleDriver> driver, LocalExecutorOptions options);
  /// Destroys every task's future on this thread, waiting for a Runnable
  /// that a wake on another thread is still handing over. Stops the
  /// program if called from inside one of its own tasks.
  ~LocalExecutor();
  LocalExecutor(const LocalExecutor&) = delete;
  LocalExecutor& operator=(const LocalExecutor&) = delete;

  /// Not a future, given to spawn: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused spawn(F, std::string_view = {}) {
    detail::not_a_future<F>();
    return {};
  }

  /// Throws std::logic_error from any thread but the executor's.
  template <Future F>
  JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
    check_owner("spawn");
    return detail::spawn_on(scheduler(), std::move(future), name);
  }

  /// Runs tasks until none is left.
  void run();

  /// Not a future, given to block_on: a compile error that says what it is.
  template <class F>
  requires(!Future<F>) detail::Misused block_on(F) {
    detail::not_a_future<F>();
    return {};
  }

  /// Drives `future` on this thread, running the spawned tasks in between,
  /// until it is Ready; returns its output (or rethrows its exception).
  /// Throws std::logic_error from inside one of the executor's own tasks.
  template <Future F>
  output_t<F> block_on(F future);

  /// For a loop that is not pollux's (an Asio io_context on this thread):
  /// one turn that never blocks. Dispatches the driver's due timers and
  /// ready sockets, then runs at most `max_tasks` ready tasks. True when
  /// more is ready: turn again soon. False when the executor waits: turn
  /// again once wait_fd() is readable, which it becomes when a timer falls
  /// due, a socket is ready, or a task is woken from anywhere. Owner's
  /// thread only, outside block_on and run(); throws std::logic_error on an
  /// executor whose driver has no wait_fd().
  bool turn(std::size_t max_tasks = 61);

  /// For an outside loop that can be handed work directly (AsioRuntime
  /// posts a turn to its io_context): while turn() waits, a task woken
  /// from this thread is queued and `waker` woken (once per wait, on this
  /// thread), instead of the driver's wait_fd() being made readable, which
  /// saves the eventfd's write and read. Wakes from other threads still
  /// go through wait_fd(). nullopt goes back to wait_fd() alone. Owner's
  /// thread only.
  void set_outside_waker(std::optional<Waker> waker);

  /// The driver's fd that turn() waits on (see IdleDriver::wait_fd), or -1.
  int wait_fd() const noexcept;

  /// How many tasks were spawned and have not finished.
  std::size_t live_tasks() const;
  /// A snapshot of every live task.
  std::vector<TaskInfo> tasks() const;
  /// tasks() as text, one line per task.
  std::string dump() const { return format_dump(tasks()); }
  /// tasks() from any thread (a console's): the executor's thread lists
  /// them between its turns, 256 tasks a turn, so that listing many tasks
  /// never holds the other tasks up for long. Nothing when it did not
  /// answer within `wait`: it is inside a poll that has not returned, not
  /// running (no block_on or run() in progress), or has more tasks than it
  /// lists in that time (the answer then comes to the next ask).
  std::optional<std::vector<TaskInfo>> tasks_within(std::chrono::nanoseconds wait) const;
  /// A snapshot of the executor's counts: tasks, queues, polls, parks and
  /// busy time. Any thread, at any time.
  ExecutorMetrics metrics() const;

 private:
  class Shared;
  struct MainWake;

  detail::Scheduler& scheduler() const noexcept;
  void check_owner(const char* what) const;
  void check_not_running(const char* what) const;
  // Ends the wait on wait_fd() that turn() left in progress, if any (then
  // true): the loop that runs next is pollux's own, or another turn.
  bool end_outside_wait();
  // Runs up to `max` queued tasks; returns how many ran.
  std::size_t run_queued(std::size_t max);
  // Sleeps until a wake arrives, unless one already did.
  void wait_for_work();
  // Between batches of tasks: lets the driver fire due timers.
  void poll_driver();
  const Arc<Parker>& parker() const noexcept;

  // The thread's parker stays marked as polling for the whole loop, so
  // wakes from this thread never touch the futex word.
  class LoopScope {
   public:
    explicit LoopScope(LocalExecutor& executor);

   private:
    detail::CurrentSchedulerScope scheduler_;
    detail::ContextScope<&detail::ExecThreadContext::polling_parker> parker_;
  };

  Arc<Shared> shared_;
  std::thread::id owner_;
};

/// The waker of block_on's own future: notes the wake and unparks the
/// thread (which may be asleep in the driver).
struct LocalExecutor::MainWake : RefCounted<MainWake> {
  /// Wakes through `p`.
  explicit MainWake(Arc<Parker> p) noexcept : parker(std::move(p)) {}
  /// Set by a wake; block_on polls its future again when it finds it set.
  detail::Atomic<bool> woken{true};
  /// The thread to unpark.
  Arc<Parker> parker;
  /// The Wake concept: notes the wake and unparks the thread.
  void wake() noexcept {
    woken.store(true, std::memory_order_release);
    parker->wake();
  }
};

template <Future F>
output_t<F> LocalExecutor::block_on(F future) {
  check_owner("block_on");
  check_not_running("block_on");
  end_outside_wait();
  LoopScope loop(*this);
  Arc<MainWake> main = make_arc<MainWake>(parker());
  const Waker waker = waker_from(main);
  Context cx(waker);
  for (;;) {
    if (main->woken.load(std::memory_order_relaxed) && main->woken.exchange(false, std::memory_order_acquire)) {
      coop::BudgetScope budget;
      detail::PendingOnPurposeScope purpose;
      auto result = future.poll(cx);
      if (result.is_ready()) return std::move(result).value();  // also for Poll<void>
      if constexpr (detail::check_contract) {
        // Rule 2, as in pollux::block_on: `main` and `waker` are the only
        // references left, and no wake came; the count is read first.
        if (!purpose.set() && main->use_count() == 2 && !main->woken.load(std::memory_order_acquire)) {
          detail::kept_no_waker_in_block_on<F>();
        }
      }
    }
    if (run_queued(61) != 0 || main->woken.load(std::memory_order_acquire)) {
      poll_driver();
    } else {
      wait_for_work();
    }
  }
}

}  // namespace pollux
