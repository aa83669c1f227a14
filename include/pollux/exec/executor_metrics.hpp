// What an executor's metrics() reports: its tasks, its queues and each
// worker's counts. The counts are kept by each worker on its own thread,
// with no read-modify-write and no lock, so they are always on; a snapshot
// reads them while they move, and is exact only for a quiet executor (a
// busy worker publishes its polls every 61 tasks and when it goes to sleep).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pollux/core/detail/chrono.hpp"
#include "pollux/exec/duration_histogram.hpp"

namespace pollux {

/// One worker thread's counts since it started.
struct WorkerMetrics {
  /// Tasks polled (published every 61 tasks and at each park: a busy
  /// worker's figure may lag by up to 61).
  std::uint64_t polls = 0;
  /// Tasks this worker took from other workers' queues.
  std::uint64_t steals = 0;
  /// Steals that took at least one task (each takes half of a queue).
  std::uint64_t steal_operations = 0;
  /// Times its queue was full and moved half of its tasks to the inject queue.
  std::uint64_t overflows = 0;
  /// Times it went to sleep for want of work.
  std::uint64_t parks = 0;
  /// Times it woke with work to do (fewer than parks: the rest were wakes
  /// for nothing, such as a timer that woke a task of another worker).
  std::uint64_t unparks = 0;
  /// Time it spent awake since it started, outside its park. On io_uring
  /// the kernel's work for the worker's sockets is done inside the park
  /// (the ring runs it when the worker enters it), so it counts as asleep.
  std::chrono::nanoseconds busy{0};
  /// Tasks waiting in its queue now.
  std::size_t local_queue_depth = 0;
};

/// A snapshot of an executor (ThreadPool, LocalExecutor).
struct ExecutorMetrics {
  /// False when the library was built with -Dmetrics=false: the counts are
  /// then all zero, and only workers and live_tasks are real.
  bool counted = false;
  /// Its worker threads (1 for a LocalExecutor).
  std::size_t workers = 0;
  /// How long ago it started.
  std::chrono::nanoseconds uptime{0};
  /// Tasks spawned and not yet ended.
  std::size_t live_tasks = 0;
  /// Tasks spawned since it started.
  std::uint64_t spawned_tasks = 0;
  /// Tasks that ended: their future completed, threw, or was cancelled.
  std::uint64_t finished_tasks = 0;
  /// Tasks waiting in the queue that any worker takes from: wakes and
  /// spawns from other threads, and full queues' overflow.
  std::size_t inject_queue_depth = 0;
  /// Each worker's counts, by index.
  std::vector<WorkerMetrics> worker;
  /// True when it was made to measure the two histograms below (an option:
  /// they cost two clock reads per poll); they are empty otherwise.
  bool histograms = false;
  /// How long each poll of a task took.
  DurationHistogram poll_duration;
  /// How long each task waited from its wake to its poll.
  DurationHistogram schedule_latency;

  /// The polls of every worker.
  std::uint64_t total_polls() const noexcept;
  /// The busy time of every worker.
  std::chrono::nanoseconds total_busy() const noexcept;
};

}  // namespace pollux
