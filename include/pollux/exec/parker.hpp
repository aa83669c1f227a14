// Parker: puts a thread to sleep until another thread unparks it, with no
// busy loop (a futex). An unpark that comes before the park is remembered,
// so the pair never loses a wake-up. A Parker is also a Wake, so a Waker
// can stand for a parked thread: that is all block_on's waker is.
//
// A wake from the owning thread while it polls (a future that wakes itself,
// or a sibling it just completed) needs no atomic operation: it sets a flag
// that only the owner reads, and the owner polls again instead of parking.
//
// A parker made with a driver (a runtime's IdleDriver) can also sleep in the
// driver instead of the futex, so that due timers wake the thread too; an
// unpark then reaches whichever of the two the owner sleeps in.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstdint>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/exec/detail/exec_context.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/exec/idle_driver.hpp"

namespace pollux {

/// Puts a thread to sleep until another thread unparks it, with no busy loop (a futex).
class Parker : public RefCounted<Parker> {
 public:
  Parker() = default;
  /// The parker holds on to `driver`, so an unpark never outlives it.
  explicit Parker(Arc<IdleDriver> driver) noexcept : driver_(std::move(driver)) {}

  /// Blocks until unpark() was called since the last park() returned.
  /// Returns at once if it already was. Only the owning thread parks. With
  /// a thread park attached it sleeps there, and may also return when
  /// that park dispatched something (a completion woke a task); it throws
  /// what the thread park throws.
  void park();

  /// As park(), but sleeps in the driver: it also returns when a timer is
  /// due, after waking it. With an unpark already waiting it still lets the
  /// driver dispatch what is ready, without blocking. Needs a driver.
  void park_in_driver();

  /// For an executor that an outside loop runs (LocalExecutor::turn): the
  /// state park_in_driver() sleeps in, entered without sleeping, so that an
  /// unpark from now on reaches the driver, and with it the loop's wait on
  /// the driver's wait_fd(). False when an unpark came already (consumed
  /// here): the loop must not wait. Owner only; needs a driver.
  bool begin_external_park() noexcept;
  /// Leaves that state, consuming an unpark that came during it. Owner only.
  void end_external_park() noexcept { state_.exchange(kEmpty, std::memory_order_acquire); }

  /// A worker thread's own IdleDriver (IdleDriver::make_thread_park), which park()
  /// sleeps in from now on instead of the futex, and poll_thread() polls.
  /// Owner only, before any park.
  void attach_thread_park(Arc<IdleDriver> thread_park) noexcept { thread_park_ = std::move(thread_park); }
  /// Closes the thread park (IdleDriver::end_thread): the owner's last call.
  void close_thread_park() noexcept;
  /// Lets the thread park dispatch what is ready, without blocking. Owner only.
  void poll_thread() {
    if (thread_park_) thread_park_->poll();
  }

  /// True when park() sleeps in a driver rather than on a futex.
  bool has_driver() const noexcept { return driver_ != nullptr; }
  /// The driver park() sleeps in, if any.
  IdleDriver& driver() const noexcept { return *driver_; }

  /// Wakes the parked thread, or makes its next park() return at once.
  /// Any thread, any number of times.
  void unpark() noexcept;

  /// The Wake concept. From the thread that is polling on this parker it
  /// only notes the wake; from anywhere else it unparks.
  void wake() noexcept;

  /// True while an unpark waits to be consumed by the next park().
  bool notified() const noexcept { return state_.load(std::memory_order_acquire) == kNotified; }

  /// Owner only: the wakes noted while polling since the last call.
  bool take_wake_during_poll() noexcept { return std::exchange(woken_during_poll_, false); }

  /// The calling thread's parker, made on first use.
  static const Arc<Parker>& current();

 private:
  void park_in_thread_park();

  static constexpr std::int32_t kEmpty = 0;
  static constexpr std::int32_t kNotified = 1;
  static constexpr std::int32_t kParked = -1;
  static constexpr std::int32_t kParkedInDriver = -2;
  static constexpr std::int32_t kParkedInThreadPark = -3;

  detail::Atomic<std::int32_t> state_{kEmpty};
  Arc<IdleDriver> driver_;
  // Set before the owner's first park and kept to the parker's end, so an
  // unpark that read kParkedInThreadPark always finds it alive.
  Arc<IdleDriver> thread_park_;
  bool thread_park_closed_ = false;  // the owner's
  bool woken_during_poll_ = false;   // touched by the owning thread only
};

inline void Parker::wake() noexcept {
  if (detail::exec_context().polling_parker == this) {
    woken_during_poll_ = true;
  } else {
    unpark();
  }
}

}  // namespace pollux
