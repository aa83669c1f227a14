// pollux/driver.hpp: The I/O and timer driver that a runtime runs on each worker (epoll or
// io_uring), for a user who builds an executor of their own.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/driver/driver.hpp"
#include "pollux/driver/driver_metrics.hpp"
#include "pollux/driver/io_backend.hpp"
