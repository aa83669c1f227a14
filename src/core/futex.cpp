// The futex under the shim's futex_wait/futex_wake_one (a model build has
// its own, in the checker).
#include "pollux/core/detail/concurrency.hpp"

#if !defined(POLLUX_MODEL)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <ctime>

namespace pollux::detail {

// std::atomic<std::int32_t> is the int32_t itself (standard layout, lock
// free), which is what the kernel's futex word must be.
static_assert(sizeof(Atomic<std::int32_t>) == sizeof(std::int32_t) && Atomic<std::int32_t>::is_always_lock_free);

void futex_wait(Atomic<std::int32_t>& word, std::int32_t expected) noexcept {
  // Returns on a wake, a spurious wake, EINTR, or EAGAIN when the word has
  // already changed.
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_one(Atomic<std::int32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void futex_wait_until(Atomic<std::int32_t>& word, std::int32_t expected,
                      std::chrono::steady_clock::time_point deadline) noexcept {
  if (deadline == std::chrono::steady_clock::time_point::max()) return futex_wait(word, expected);
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time: steady_clock's.
  auto since_epoch = deadline.time_since_epoch();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  timespec at{};
  at.tv_sec = static_cast<time_t>(seconds.count());
  at.tv_nsec = static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
  if (at.tv_sec < 0) return;
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAIT_BITSET_PRIVATE, expected, &at, nullptr,
          FUTEX_BITSET_MATCH_ANY);
}

void futex_wake_all(Atomic<std::int32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace pollux::detail

#endif
