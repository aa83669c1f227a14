// What Driver::metrics() reports: the socket events and io_uring
// completions it handled and the timers it fired. Each is counted by the
// thread that handles it, with no read-modify-write.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>

namespace pollux {

/// A snapshot of a driver's counts since it was made.
struct DriverMetrics {
  /// False when the library was built with -Dmetrics=false: the counts are zero.
  bool counted = false;
  /// Socket readiness events dispatched from epoll.
  std::uint64_t socket_events = 0;
  /// io_uring completions reaped, over the driver's ring or its workers' rings.
  std::uint64_t uring_completions = 0;
  /// Timers that fired (sleeps, timeouts, intervals' ticks).
  std::uint64_t timers_fired = 0;
};

}  // namespace pollux
