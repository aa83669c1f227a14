// An eventfd as a wake-up: the threads that signal it write it once per
// wake-up, however many they are (`notified` says a write is on its way),
// and the sleeper drains it, after which the next signal writes again.
// The driver's unpark and each worker ring's use it.
#pragma once

#include <unistd.h>

#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

// Any thread.
inline void signal_event_fd(int fd, Atomic<bool>& notified) noexcept {
  if (notified.exchange(true, std::memory_order_acq_rel)) return;
  std::uint64_t one = 1;
  ssize_t written = write(fd, &one, sizeof one);
  (void)written;  // fails only if the counter would overflow, which leaves it readable anyway
}

// The sleeper, once the eventfd is readable.
inline void drain_event_fd(int fd, Atomic<bool>& notified) noexcept {
  std::uint64_t count;
  ssize_t got = read(fd, &count, sizeof count);
  (void)got;  // EAGAIN: drained already
  notified.exchange(false, std::memory_order_acq_rel);
}

}  // namespace pollux::detail
