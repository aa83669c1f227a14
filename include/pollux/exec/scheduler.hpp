// The part of an executor that its tasks hold on to: where a woken task's
// Runnable goes (schedule), and the registry of live tasks that a shutdown
// cancels and a dump lists (bind). Tasks keep it alive through an Arc, so a
// wake that races an executor's destruction never reaches freed memory
// (rule 6). pollux::spawn finds the scheduler of the task it runs in through
// a thread-local pointer that executors set while they run tasks.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <stdexcept>
#include <string_view>
#include <utility>

#include "pollux/exec/detail/exec_context.hpp"
#include "pollux/core/detail/diagnose.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/task/make_task.hpp"
#include "pollux/task/lost_wake.hpp"
#include "pollux/task/unhandled_exception.hpp"

namespace pollux {

namespace detail {

class Scheduler : public RefCounted<Scheduler> {
 public:
  virtual ~Scheduler() = default;

  // Queues a woken task. Any thread.
  virtual void schedule(Runnable runnable) = 0;

  // Records a new task (which holds one extra reference for the registry)
  // and queues its first Runnable. Called by spawn.
  virtual void bind(Runnable runnable) = 0;

  // What becomes of an exception of a detached task (set once, at construction).
  UnhandledException unhandled_exception = UnhandledException::Report;
  // What a debug build does with a task no waker can reach (likewise).
  LostWake lost_wake = LostWake::Report;
};

/// The schedule function stored in each task.
struct SchedulerRef {
  Arc<Scheduler> scheduler;
  void operator()(Runnable runnable) const { scheduler->schedule(std::move(runnable)); }
  UnhandledException unhandled_exception() const noexcept { return scheduler->unhandled_exception; }
  LostWake lost_wake() const noexcept { return scheduler->lost_wake; }
};

/// Makes `scheduler` the one whose task this thread runs, for a scope.
using CurrentSchedulerScope = ContextScope<&ExecThreadContext::scheduler>;

template <Future F>
JoinHandle<output_t<F>> spawn_on(Scheduler& scheduler, F future, std::string_view name) {
  // Three references: the first Runnable, the JoinHandle, the registry.
  auto [runnable, handle] =
      make_task_with_refs(std::move(future), SchedulerRef{Arc<Scheduler>(&scheduler)}, name, true);
  scheduler.bind(std::move(runnable));
  return std::move(handle);
}

}  // namespace detail

/// Not a future, given to spawn: a compile error that says what it is.
template <class F>
requires(!Future<F>) detail::Misused spawn(F, std::string_view = {}) {
  detail::not_a_future<F>();
  return {};
}

/// Spawns a task on the executor that runs the calling task. Throws
/// std::logic_error outside any executor.
template <Future F>
JoinHandle<output_t<F>> spawn(F future, std::string_view name = {}) {
  detail::Scheduler* scheduler = detail::exec_context().scheduler;
  if (scheduler == nullptr) {
    throw std::logic_error(
        "pollux::spawn: called outside any executor; spawn from inside a task, or call spawn on an "
        "executor (LocalExecutor::spawn, ThreadPool::spawn)");
  }
  return detail::spawn_on(*scheduler, std::move(future), name);
}

}  // namespace pollux
