// pollux/runtime.hpp: The Runtime (a driver, an executor and a blocking pool in one), signals,
// spawn_blocking, host lookup, and the runtime's metrics and console.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/runtime/blocking_pool.hpp"
#include "pollux/runtime/console_snapshot.hpp"
#include "pollux/runtime/lookup_host.hpp"
#include "pollux/runtime/runtime.hpp"
#include "pollux/runtime/runtime_metrics.hpp"
#include "pollux/runtime/signal.hpp"
#include "pollux/runtime/spawn_blocking.hpp"
