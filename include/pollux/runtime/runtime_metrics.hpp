// RuntimeMetrics: one snapshot of a whole runtime, from Runtime::metrics():
// its executor's tasks, queues and workers, its driver's events and timers,
// and its blocking pool. Each part is read as its owner's metrics() reads
// it; together they are a view of a moving runtime, not one instant.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include "pollux/driver/driver_metrics.hpp"
#include "pollux/exec/executor_metrics.hpp"
#include "pollux/runtime/blocking_pool.hpp"

namespace pollux {

/// A snapshot of a runtime.
struct RuntimeMetrics {
  /// The executor: tasks, queues, each worker's counts, histograms.
  ExecutorMetrics executor;
  /// The driver: socket events, io_uring completions, timers fired.
  DriverMetrics driver;
  /// The blocking pool: threads, idle threads, queued jobs.
  BlockingPoolMetrics blocking;
};

}  // namespace pollux
