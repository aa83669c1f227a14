// BlockingPool: the threads that run spawn_blocking's functions, apart from
// the executor's workers, so a blocking call (a file read, a DNS lookup, a
// long computation) never stalls the tasks. Threads start on demand up to a
// bound, and one that stays idle for keep_alive exits; jobs beyond the
// bound wait in a queue. Destroying the pool waits for the jobs running and
// cancels those still queued (their handles give Cancelled).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "pollux/core/detail/chrono.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/thread_context.hpp"
#include "pollux/core/wake.hpp"

namespace pollux {

/// How many threads a BlockingPool may start, and how long an idle one waits
/// for work before it ends.
struct BlockingPoolOptions {
  /// The most threads alive at once (tokio's default: 512).
  std::size_t max_threads = 512;
  /// How long an idle thread waits for work before it ends.
  std::chrono::nanoseconds keep_alive = std::chrono::seconds(10);
};

/// A snapshot of a BlockingPool.
struct BlockingPoolMetrics {
  /// Live threads.
  std::size_t threads = 0;
  /// Live threads waiting for a job.
  std::size_t idle_threads = 0;
  /// Jobs waiting for a thread.
  std::size_t queue_depth = 0;
  /// Jobs submitted since the pool was made.
  std::uint64_t jobs_submitted = 0;
};

namespace detail {

/// One submitted function; spawn_blocking's state implements it.
class BlockingJob : public RefCounted<BlockingJob> {
 public:
  virtual ~BlockingJob() = default;
  // On a pool thread: runs the function, publishes its result, wakes.
  virtual void run() noexcept = 0;
  // The pool shut down before it ran: tell the waiting future.
  virtual void cancel() noexcept = 0;
};

}  // namespace detail

/// The threads that run spawn_blocking's functions, apart from the executor's workers, so a
/// blocking call (a file read, a DNS lookup, a long computation) never stalls the tasks.
class BlockingPool {
 public:
  /// Throws std::invalid_argument for max_threads == 0.
  explicit BlockingPool(BlockingPoolOptions options = {});
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  /// Runs `job` on an idle thread, a new one, or the first to free up.
  /// When no new thread can start (EAGAIN) but one lives, the job waits in
  /// the queue for it; when none lives, throws std::system_error and the
  /// job never runs. Either way a job runs at most once.
  void submit(Arc<detail::BlockingJob> job);

  /// Live threads: started on demand, gone after keep_alive idle.
  std::size_t threads() const;
  /// Its threads, idle threads, queue and jobs, at one instant (under its lock).
  BlockingPoolMetrics metrics() const;

 private:
  void run_worker();
  void join_exited() POLLUX_REQUIRES(mutex_);

  const BlockingPoolOptions options_;
  mutable pollux::detail::Mutex mutex_;
  pollux::detail::CondVar work_;
  std::deque<Arc<detail::BlockingJob>> queue_ POLLUX_GUARDED_BY(mutex_);
  std::size_t idle_ POLLUX_GUARDED_BY(mutex_) = 0;      // waiting on work_
  std::size_t notified_ POLLUX_GUARDED_BY(mutex_) = 0;  // idle threads told to take a job
  bool shutdown_ POLLUX_GUARDED_BY(mutex_) = false;
  std::uint64_t submitted_ POLLUX_GUARDED_BY(mutex_) = 0;
  std::vector<std::thread> workers_ POLLUX_GUARDED_BY(mutex_);  // the live threads (until shutdown takes them to join)
  std::vector<std::thread> exited_ POLLUX_GUARDED_BY(mutex_);   // idle ones that left, to join
};

namespace detail {

/// The runtime layer's per-thread field (see core/detail/thread_context.hpp):
/// where spawn_blocking sends its jobs.
struct RuntimeThreadContext {
  /// The runtime's blocking pool (null outside a runtime).
  BlockingPool* blocking_pool = nullptr;
};

/// This thread's runtime-layer fields.
inline RuntimeThreadContext& runtime_context() noexcept { return per_thread<RuntimeThreadContext>; }

}  // namespace detail

}  // namespace pollux
