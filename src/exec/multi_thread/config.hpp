// The multi-thread scheduler's tuning constants, in one place.
#pragma once

#include <cstdint>

namespace pollux::detail::multi_thread {

/// A worker looks at the inject queue first, and lets the driver fire due
/// timers and ready sockets, once every this many tasks: local work can
/// then starve neither remote wakes nor I/O. (tokio's value; prime, so it
/// does not beat in step with a program's own periods.)
inline constexpr std::uint32_t kEventInterval = 61;

/// How many tasks in a row a worker runs from its LIFO slot before the
/// next one goes to the back of its queue: two tasks that wake each other
/// run back to back while hot in the cache, but cannot hold a worker for
/// good while its queue waits.
inline constexpr std::uint32_t kMaxLifoRuns = 3;

/// Slots in a worker's local run queue (a power of two). When it is full,
/// half of it moves to the inject queue in one batch.
inline constexpr std::uint32_t kLocalQueueCapacity = 256;

}  // namespace pollux::detail::multi_thread
