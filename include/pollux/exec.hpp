// pollux/exec.hpp: Executors: block_on, the single-thread LocalExecutor, the multi-thread
// ThreadPool, JoinSet, TaskTracker and their metrics.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/exec/block_on.hpp"
#include "pollux/exec/duration_histogram.hpp"
#include "pollux/exec/executor_metrics.hpp"
#include "pollux/exec/join_map.hpp"
#include "pollux/exec/join_set.hpp"
#include "pollux/exec/local_executor.hpp"
#include "pollux/exec/idle_driver.hpp"
#include "pollux/exec/parker.hpp"
#include "pollux/exec/scheduler.hpp"
#include "pollux/exec/scope.hpp"
#include "pollux/exec/task_dump.hpp"
#include "pollux/exec/task_tracker.hpp"
#include "pollux/exec/thread_pool.hpp"
