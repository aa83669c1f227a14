// pollux/task.hpp: Tasks: the one allocation that holds a spawned future, its JoinHandle,
// task-local values and the errors a task ends with.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/task/cancelled.hpp"
#include "pollux/task/join_handle.hpp"
#include "pollux/task/lost_wake.hpp"
#include "pollux/task/make_task.hpp"
#include "pollux/task/runnable.hpp"
#include "pollux/task/task_local.hpp"
#include "pollux/task/unhandled_exception.hpp"
