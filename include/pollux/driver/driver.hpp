// Driver: what a runtime's idle thread sleeps in. It owns the timers and
// the reactor (sockets), and waits on the reactor's epoll instance, where
// it registers an eventfd and a timerfd of its own. park() blocks until the earliest timer is due (a timerfd: to the
// microsecond, where epoll's timeout would add 50 µs of timer slack), until
// a socket event, or until unpark() from any thread, and then wakes every
// timer that expired and every socket's waiter. One thread at a time parks
// a driver; any thread arms timers. An executor calls it when it has
// nothing to run (Runtime does this for you; examples/custom_executor
// shows a hand-written executor doing it).
//
// Leaf futures (sleep, timeout, Interval, sockets) find the driver's timers
// and reactor through per-thread handles that enter() installs for a
// scope. Polling one with none installed throws NoRuntime (rule 8).
//
// The clock can be paused for tests (tokio's time::pause): now() stands
// still, advance(d) moves it and fires what came due, and a park() with
// timers armed jumps straight to the earliest one instead of sleeping, so
// timer tests are exact and take no time.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include "pollux/core/no_runtime.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/driver/detail/driver_core.hpp"
#include "pollux/driver/driver_metrics.hpp"
#include "pollux/driver/io_backend.hpp"
#include "pollux/exec/idle_driver.hpp"
#include "pollux/io/detail/io_context.hpp"
#include "pollux/time/detail/timer_queue.hpp"
#include "pollux/time/instant.hpp"

namespace pollux {

/// What a runtime's idle thread sleeps in: timers, sockets and unpark, on
/// one epoll instance.
class Driver {
 public:
  /// A driver several threads may run. On io_uring (`backend` Auto where
  /// the kernel allows it, or Uring) the ring is per thread: each worker of
  /// a ThreadPool that sleeps in this driver makes its own, and its
  /// streams run on it; any other thread's streams run on epoll. Throws
  /// std::system_error if epoll, the eventfd or the timerfd cannot be
  /// created, std::invalid_argument for a POLLUX_IO that is neither epoll
  /// nor uring.
  explicit Driver(IoBackend backend = IoBackend::Auto) : Driver(backend, false) {}
  /// As Driver(backend), for a driver whose parks, polls and socket
  /// futures all run on the thread that creates it (a current-thread
  /// runtime) when `single_thread`: Auto then means io_uring where the
  /// kernel allows it, and the ring delivers completions only when that
  /// thread asks, instead of interrupting it. Other threads may still
  /// unpark it.
  Driver(IoBackend backend, bool single_thread);
  /// Timers and sockets still waiting on it are woken and throw NoRuntime
  /// when polled.
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Blocks until a timer is due, an event comes or unpark() is called;
  /// then wakes every timer that expired.
  void park() { core_->park(); }
  /// As park(), for at most `max_wait`.
  void park_timeout(Duration max_wait) { core_->park_timeout(max_wait); }
  /// Wakes the timers that expired and the sockets that are ready, without
  /// blocking.
  void poll() { core_->poll(); }
  /// Makes a park() in progress, or the next one, return. Any thread.
  void unpark() noexcept { core_->unpark(); }

  /// The driver's clock: paused time when paused.
  Instant now() const noexcept { return detail::from_ns(core_->timers().now_ns()); }
  /// Stops the clock (for tests): now() stands still until advance() moves
  /// it or resume() lets it run, and a park() with timers armed jumps to the
  /// earliest instead of sleeping.
  void pause() { core_->timers().pause(); }
  /// Lets the clock run again from where it stood.
  void resume() { core_->timers().resume(); }
  /// Moves the paused clock `d` ahead and fires what came due; throws
  /// std::logic_error unless paused.
  void advance(Duration d) { core_->timers().advance(d); }
  /// True between pause() and resume().
  bool is_paused() const noexcept { return core_->timers().paused(); }
  /// What the sockets run on: Epoll or Uring.
  IoBackend io_backend() const noexcept { return core_->io_backend(); }
  /// A snapshot of its counts: socket events, io_uring completions, timers
  /// fired. Any thread, at any time.
  DriverMetrics metrics() const { return core_->metrics(); }

  /// Installs this driver's timers and reactor as the thread's for the
  /// guard's lifetime (the previous ones come back after).
  class [[nodiscard]] Guard {
   public:
    /// Installs `core`'s timers and reactor on this thread.
    explicit Guard(detail::DriverCore& core) noexcept
        : timers_(&core.timers()), reactor_(&core.reactor()), ring_(core.ring()) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    detail::ContextScope<&detail::TimeThreadContext::timers> timers_;
    detail::ContextScope<&detail::IoThreadContext::reactor> reactor_;
    detail::ContextScope<&detail::IoThreadContext::ring> ring_;
  };
  /// See Guard.
  Guard enter() const noexcept { return Guard(*core_); }

  /// For executors: the IdleDriver to sleep in (LocalExecutor, ThreadPool).
  Arc<IdleDriver> park_handle() const noexcept { return core_; }
  /// For executors and the runtime: the shared part.
  detail::DriverCore& core() const noexcept { return *core_; }

 private:
  Arc<detail::DriverCore> core_;
};

}  // namespace pollux
