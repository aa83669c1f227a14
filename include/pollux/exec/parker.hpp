// Parker: puts a thread to sleep until another thread unparks it, with no
// busy loop (a futex). An unpark that comes before the park is remembered,
// so the pair never loses a wake-up. A Parker is also a Wake, so a Waker
// can stand for a parked thread: that is all block_on's waker is.
#pragma once

#include <atomic>
#include <cstdint>

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

  void wake() noexcept { unpark(); }  // the Wake concept

  // The calling thread's parker, made on first use.
  static const Arc<Parker>& current();

 private:
  static constexpr std::int32_t kEmpty = 0;
  static constexpr std::int32_t kNotified = 1;
  static constexpr std::int32_t kParked = -1;

  std::atomic<std::int32_t> state_{kEmpty};
};

}  // namespace pollux
