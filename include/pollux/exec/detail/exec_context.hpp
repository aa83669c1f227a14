// The executors' per-thread fields (see core/detail/thread_context.hpp):
// which scheduler's task this thread runs, which ThreadPool worker it is,
// and the parker of the block_on polling here.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/thread_context.hpp"

namespace pollux {

class Parker;

namespace detail {

class Scheduler;
struct ScopeFrame;
namespace multi_thread {
struct Worker;
}

/// What the exec layer keeps per thread.
struct ExecThreadContext {
  /// The scheduler whose task this thread is running: pollux::spawn spawns there.
  Scheduler* scheduler = nullptr;
  /// On a ThreadPool worker: its pool. A wake compares it, so a task of
  /// pool A woken on a worker of pool B goes to A's inject queue.
  const Scheduler* worker_pool = nullptr;
  /// On a ThreadPool worker: which worker of worker_pool this thread is.
  multi_thread::Worker* worker = nullptr;
  /// The parker of the block_on (or LocalExecutor loop) polling here.
  Parker* polling_parker = nullptr;
  /// The executor whose turn() left it waiting in an outside loop on this
  /// thread (LocalExecutor::set_outside_waker): a wake from this thread
  /// queues the task and wakes that loop directly.
  const Scheduler* waiting_outside = nullptr;
  /// Debug builds: the innermost scope body or scoped child this thread polls.
  const ScopeFrame* scope_frames = nullptr;
};

/// This thread's exec-layer fields.
inline ExecThreadContext& exec_context() noexcept { return per_thread<ExecThreadContext>; }

}  // namespace detail
}  // namespace pollux
