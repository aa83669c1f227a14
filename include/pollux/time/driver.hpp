// Driver: what a runtime's idle thread sleeps in. It owns the timer wheel,
// an epoll instance, an eventfd and a timerfd. park() blocks until the
// earliest timer is due (a timerfd: to the microsecond, where epoll's
// timeout would add 50 µs of timer slack), until an event,
// or until unpark() from any thread, and then wakes every timer that
// expired. One thread at a time parks a driver; any thread arms timers. An
// executor calls it when it has nothing to run (Runtime does this for you;
// examples/custom_executor shows a hand-written executor doing it).
//
// The reactor (io/detail/reactor.hpp) shares the epoll instance: park() also
// returns on socket events and wakes the sockets' waiters, and poll() asks
// epoll without blocking for them while any socket is registered.
//
// Leaf futures (sleep, timeout, Interval, sockets) find the driver through a
// thread-local handle that Driver::enter() installs for a scope. Polling
// one with none installed throws NoRuntime (rule 8).
//
// The clock can be paused for tests (tokio's time::pause): now() stands
// still, advance(d) moves it and fires what came due, and a park() with
// timers armed jumps straight to the earliest one instead of sleeping, so
// timer tests are exact and take no time.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "pollux/core/detail/thread_context.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/core/waker.hpp"

struct epoll_event;
#include "pollux/exec/park.hpp"
#include "pollux/io/detail/reactor.hpp"
#include "pollux/time/instant.hpp"
#include "pollux/time/detail/timer_entry.hpp"
#include "pollux/time/detail/timer_wheel.hpp"

namespace pollux {

/// Thrown when a timer or a socket is polled on a thread where no
/// runtime is running.
class NoRuntime : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {

/// The shared part of a Driver: executors and their parkers hold it (to
/// unpark), timers point at it while armed.
class DriverCore final : public Park {
 public:
  DriverCore();
  ~DriverCore() override;

  void park() override { park_until(std::nullopt); }
  void poll() override;
  void unpark() noexcept override;
  void park_timeout(Duration max_wait);

  std::int64_t now_ns() const noexcept {
    if (paused_.load(std::memory_order_acquire)) return paused_ns_.load(std::memory_order_acquire);
    return to_ns(std::chrono::steady_clock::now());
  }
  void pause();
  /// Lets the clock run again from where it stood.
  void resume();
  /// Moves the paused clock `d` ahead and fires what came due.
  void advance(Duration d);
  bool paused() const noexcept { return paused_.load(std::memory_order_acquire); }

  // Timers. arm() links an Idle entry whose deadline_ns is set and stores
  // the waker; arm_after() one whose delay_ns is set, counted
  // from the driver's next look at the clock (when the busy thread that
  // drives it next polls or parks it), so arming reads no clock;
  // refresh() replaces an armed entry's waker if it changed and returns
  // the state it found; cancel() unlinks an armed entry.
  void arm(TimerEntry& entry, const Waker& waker);
  void arm_after(TimerEntry& entry, const Waker& waker);
  TimerState refresh(TimerEntry& entry, const Waker& waker);
  void cancel(TimerEntry& entry) noexcept;

  // Orphans every armed timer and shuts every socket's registration, and
  // wakes their wakers (the Driver is going).
  void shut_down() noexcept;

  Reactor& reactor() noexcept { return reactor_; }

 private:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  static constexpr std::int64_t kNotParked = std::numeric_limits<std::int64_t>::min();

  // Sleeps until the next timer, `limit_ns` (if any), an event or unpark.
  void park_until(std::optional<std::int64_t> limit_ns);
  // Moves the wheel to now_ns and wakes what expired, in batches, with the
  // lock released while waking.
  void fire(std::int64_t now_ns);
  void refresh_next_deadline() noexcept;
  // Under the lock: settles the deadlines of entries armed with a delay.
  void resolve(std::int64_t now_ns) noexcept;
  // Under the lock, after linking `entry` whose earliest deadline is
  // `earliest`: true if the thread parked in us must wake to re-arm.
  bool note_armed(std::int64_t earliest) noexcept;

  // Applies the events epoll returned: drains the eventfd and timerfd
  // when `own` (the parking thread's), dispatches socket events.
  void dispatch(const ::epoll_event* events, int n, bool own);
  // Fires due timers, unless none can be due (no lock, no clock read).
  void fire_if_due();

  // Sets the timerfd to expire at deadline_ns (absolute, CLOCK_MONOTONIC).
  void set_timer(std::int64_t deadline_ns);
  // epoll_wait for at most timeout_ns (nullopt: no limit), until wake_at_ns.
  int wait_for_events(::epoll_event* events, int max, std::optional<std::int64_t> timeout_ns,
                      std::int64_t wake_at_ns);

  int epoll_fd_ = -1;
  int event_fd_ = -1;
  int timer_fd_ = -1;
  std::int64_t timer_set_ns_ = 0;      // the parking thread's: when the timerfd expires (0: not set)
  bool last_wait_short_ = false;       // the parking thread's: the last timed wait was under 1 ms
  std::atomic<bool> notified_{false};  // an unpark is on its way through the eventfd

  mutable std::mutex mutex_;
  TimerWheel wheel_;                        // guarded by mutex_
  std::int64_t parked_until_ns_ = kNotParked;  // guarded by mutex_: when the parked thread wakes by itself
  // The wheel's next deadline, for poll()'s lock-free check; may be early.
  std::atomic<std::int64_t> next_deadline_ns_{kNever};
  std::atomic<bool> unresolved_{false};  // entries armed with a delay wait for resolve()

  std::atomic<bool> paused_{false};
  std::atomic<std::int64_t> paused_ns_{0};

  Reactor reactor_;  // shares epoll_fd_
};


/// Throws NoRuntime naming `what` unless a driver is installed.
DriverCore& require_driver(const char* what);

}  // namespace detail

/// What a runtime's idle thread sleeps in.
class Driver {
 public:
  // Throws std::system_error if epoll or the eventfd cannot be created.
  Driver();
  // Timers still armed on it are woken and throw NoRuntime when polled.
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Blocks until a timer is due, an event comes or unpark() is called;
  /// then wakes every timer that expired.
  void park() { core_->park(); }
  /// As park(), for at most `max_wait`.
  void park_timeout(Duration max_wait) { core_->park_timeout(max_wait); }
  /// Wakes the timers that expired, without blocking.
  void poll() { core_->poll(); }
  /// Makes a park() in progress, or the next one, return. Any thread.
  void unpark() noexcept { core_->unpark(); }

  /// The driver's clock: paused time when paused.
  Instant now() const noexcept { return detail::from_ns(core_->now_ns()); }
  /// Stops the clock (for tests): now() stands still until advance() moves
  /// it or resume() lets it run, and a park() with timers armed jumps to the
  /// earliest instead of sleeping.
  void pause() { core_->pause(); }
  /// Lets the clock run again from where it stood.
  void resume() { core_->resume(); }
  /// Moves the paused clock `d` ahead and fires what came due; throws
  /// std::logic_error unless paused.
  void advance(Duration d) { core_->advance(d); }
  /// True between pause() and resume().
  bool is_paused() const noexcept { return core_->paused(); }

  /// Installs this driver as the thread's for the guard's lifetime (the
  /// previous one comes back after).
  class [[nodiscard]] Guard {
   public:
    /// Installs `core` as this thread's driver.
    explicit Guard(detail::DriverCore* core) noexcept : scope_(core) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    detail::ContextScope<&detail::ThreadContext::driver> scope_;
  };
  /// See Guard.
  Guard enter() const noexcept { return Guard(core_.get()); }

  /// For executors: the Park to sleep in (LocalExecutor, ThreadPool).
  Arc<Park> park_handle() const noexcept { return core_; }
  /// For executors and the runtime: the shared part.
  detail::DriverCore& core() const noexcept { return *core_; }

 private:
  Arc<detail::DriverCore> core_;
};

}  // namespace pollux
