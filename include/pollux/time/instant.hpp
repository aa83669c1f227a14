// Instant and Duration: points and spans of the monotonic clock
// (std::chrono::steady_clock, CLOCK_MONOTONIC on Linux), nanosecond
// resolution. now() reads the running runtime's clock, which a test may
// pause and advance (Driver::pause); outside a runtime it reads steady_clock.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <limits>

#include "pollux/core/detail/chrono.hpp"

namespace pollux {

/// A point in time on the monotonic clock (steady_clock), as the driver counts it.
using Instant = std::chrono::steady_clock::time_point;
/// A span of time, in nanoseconds.
using Duration = std::chrono::nanoseconds;

/// The current time of the driver installed on this thread (paused time
/// when it is paused), else steady_clock::now().
Instant now() noexcept;

namespace detail {

/// `t + d`, clamped to the clock's range instead of overflowing, so that
/// sleep(Duration::max()) means "never" rather than "long ago".
inline Instant saturating_add(Instant t, Duration d) noexcept {
  if (d > Duration::zero() && t > Instant::max() - d) return Instant::max();
  if (d < Duration::zero() && t < Instant::min() - d) return Instant::min();
  return t + d;
}

/// `t + d` for a clock reading `t` and a delay `d`, both in nanoseconds
/// and not negative, held at INT64_MAX (never) instead of overflowing.
inline std::int64_t saturating_add_ns(std::int64_t t, std::int64_t d) noexcept {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return d > kMax - t ? kMax : t + d;
}

inline std::int64_t to_ns(Instant t) noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

inline Instant from_ns(std::int64_t ns) noexcept { return Instant(std::chrono::nanoseconds(ns)); }

}  // namespace detail

}  // namespace pollux
