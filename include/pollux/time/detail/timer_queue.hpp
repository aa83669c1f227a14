// TimerQueue: the timers of one driver: the wheel, the lock around it and
// the clock, which a test may pause. Sleep arms its entry here, found
// through the thread's handle (TimeThreadContext::timers) that the driver
// installs; the driver asks it how long to sleep and fires what came due.
// It knows nothing of epoll: the one thing it needs from the thread that
// sleeps on it is a way to wake it (its IdleDriver), when a timer is armed that
// is due before that thread would wake by itself.
//
// Rules it keeps: wakers run with the lock released (nothing is woken
// while a lock is held), and destroying an armed Sleep unlinks its entry
// (rule 5). A queue that goes away first orphans its entries and wakes
// them; their next poll throws NoRuntime.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/thread_context.hpp"
#include "pollux/core/waker.hpp"
#include "pollux/exec/idle_driver.hpp"
#include "pollux/time/detail/timer_entry.hpp"
#include "pollux/time/detail/timer_wheel.hpp"
#include "pollux/time/instant.hpp"

namespace pollux::detail {

class TimerQueue {
 public:
  /// A time that never comes (steady_clock nanoseconds).
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  // `park` is the driver whose thread sleeps on this queue: arming a timer
  // due before that thread wakes unparks it. It must outlive the queue.
  explicit TimerQueue(IdleDriver& park);
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // The clock: steady_clock, or the paused time while paused.
  std::int64_t now_ns() const noexcept {
    if (paused_.load(std::memory_order_acquire)) return paused_ns_.load(std::memory_order_acquire);
    return to_ns(std::chrono::steady_clock::now());
  }
  void pause();
  void resume();
  // Moves the paused clock `d` ahead and fires what came due; throws
  // std::logic_error unless paused, std::invalid_argument if `d` < 0.
  void advance(Duration d);
  bool paused() const noexcept { return paused_.load(std::memory_order_acquire); }

  // arm() links an Idle entry whose deadline_ns is set and stores the
  // waker; arm_after() one whose delay_ns is set, counted from the queue's
  // next look at the clock (when the busy thread that drives it next polls
  // or parks), so arming reads no clock; refresh() replaces an armed
  // entry's waker if it changed and returns the state it found; cancel()
  // unlinks an armed entry.
  void arm(TimerEntry& entry, const Waker& waker);
  void arm_after(TimerEntry& entry, const Waker& waker);
  TimerState refresh(TimerEntry& entry, const Waker& waker);
  void cancel(TimerEntry& entry) noexcept;

  // How the thread about to sleep on this queue should wait: for at most
  // `timeout_ns` (nullopt: until an event; 0: not at all), until the
  // absolute `wake_at_ns` (kNever: no timer).
  struct Wait {
    std::optional<std::int64_t> timeout_ns;
    std::int64_t wake_at_ns = kNever;
  };
  // The driver's thread is about to sleep, at most until `limit_ns`:
  // settles delays, says how long to wait, and records when the thread
  // wakes by itself, so that arming an earlier timer unparks it. With the
  // clock paused the wait is 0 and the clock jumps to the next deadline
  // (nothing else can happen while time stands still).
  Wait begin_wait(std::optional<std::int64_t> limit_ns);
  // The thread woke up: arming no longer needs to unpark it.
  void end_wait() noexcept;

  // Moves the wheel to `now_ns` and wakes what expired, in batches, with
  // the lock released while waking.
  void fire(std::int64_t now_ns);
  // Fires due timers, unless none can be due (then: no lock, no clock read).
  void fire_if_due();

  // The driver is going: orphans every armed entry and wakes its waker.
  void shut_down() noexcept;

  // Timers fired so far (for the driver's metrics).
  std::uint64_t fired() const noexcept { return fired_.get(); }

 private:
  static constexpr std::int64_t kNotWaiting = std::numeric_limits<std::int64_t>::min();

  // Under the lock: settles the deadlines of entries armed with a delay.
  void resolve(std::int64_t now_ns) noexcept POLLUX_REQUIRES(mutex_);
  void refresh_next_deadline() noexcept POLLUX_REQUIRES(mutex_);
  // Under the lock, after linking an entry whose deadline is `earliest`:
  // true if the thread sleeping on us must wake to re-arm.
  bool note_armed(std::int64_t earliest) noexcept POLLUX_REQUIRES(mutex_);

  IdleDriver& park_;
  mutable Mutex mutex_;
  TimerWheel wheel_ POLLUX_GUARDED_BY(mutex_);
  std::int64_t waiting_until_ns_ POLLUX_GUARDED_BY(mutex_) = kNotWaiting;  // when the sleeping thread wakes by itself
  // The wheel's next deadline, for fire_if_due's lock-free check; may be early.
  Atomic<std::int64_t> next_deadline_ns_{kNever};
  Atomic<bool> unresolved_{false};  // entries armed with a delay wait for resolve()

  Atomic<bool> paused_{false};
  Atomic<std::int64_t> paused_ns_{0};
  Counter fired_;  // written under the lock
};

/// The timers of the driver installed on this thread; throws NoRuntime
/// naming `what` if there is none.
TimerQueue& require_timers(const char* what);

/// The time layer's per-thread field (see core/detail/thread_context.hpp):
/// the timers of the driver installed on this thread, which sleeps arm.
struct TimeThreadContext {
  /// The installed driver's timers (null outside a runtime).
  TimerQueue* timers = nullptr;
};

/// This thread's time-layer field.
inline TimeThreadContext& time_context() noexcept { return per_thread<TimeThreadContext>; }

}  // namespace pollux::detail
