// Parker: puts a thread to sleep until another thread unparks it, with no
// busy loop (a futex). An unpark that comes before the park is remembered,
// so the pair never loses a wake-up. A Parker is also a Wake, so a Waker
// can stand for a parked thread: that is all block_on's waker is.
//
// A wake from the owning thread while it polls (a future that wakes itself,
// or a sibling it just completed) needs no atomic operation: it sets a flag
// that only the owner reads, and the owner polls again instead of parking.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "pollux/core/wake.hpp"

namespace pollux {

class Parker : public RefCounted<Parker> {
 public:
  // Blocks until unpark() was called since the last park() returned.
  // Returns at once if it already was. Only the owning thread parks.
  void park() noexcept;

  // Wakes the parked thread, or makes its next park() return at once.
  // Any thread, any number of times.
  void unpark() noexcept;

  // The Wake concept. From the thread that is polling on this parker it
  // only notes the wake; from anywhere else it unparks.
  void wake() noexcept;

  // Owner only: the wakes noted while polling since the last call.
  bool take_wake_during_poll() noexcept { return std::exchange(woken_during_poll_, false); }

  // The calling thread's parker, made on first use.
  static const Arc<Parker>& current();

 private:
  static constexpr std::int32_t kEmpty = 0;
  static constexpr std::int32_t kNotified = 1;
  static constexpr std::int32_t kParked = -1;

  std::atomic<std::int32_t> state_{kEmpty};
  bool woken_during_poll_ = false;  // touched by the owning thread only
};

namespace detail {
// The parker of the block_on that is polling on this thread, if any.
inline thread_local Parker* polling_parker = nullptr;
}  // namespace detail

inline void Parker::wake() noexcept {
  if (detail::polling_parker == this) {
    woken_during_poll_ = true;
  } else {
    unpark();
  }
}

}  // namespace pollux
