// Whether this build of the library counts for the runtime's metrics, and
// the one way every layer counts. meson's `-Dmetrics=false` defines
// POLLUX_METRICS=0 for the library's own sources: each count below then
// compiles to nothing, and every snapshot says `counted = false`. Only the
// library's .cpp files include this, so a program that uses the headers
// never depends on the choice.
#pragma once

#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"

#ifndef POLLUX_METRICS
#define POLLUX_METRICS 1
#endif

namespace pollux::detail {

/// True unless the library was built with -Dmetrics=false.
inline constexpr bool kMetrics = POLLUX_METRICS != 0;

/// Counts `n` on a counter only the calling thread writes.
inline void count(Counter& counter, std::uint64_t n = 1) noexcept {
  if constexpr (kMetrics) counter.add_owned(n);
}

/// Counts `n` on a counter several threads write.
inline void count_shared(Counter& counter, std::uint64_t n = 1) noexcept {
  if constexpr (kMetrics) counter.add_shared(n);
}

}  // namespace pollux::detail
