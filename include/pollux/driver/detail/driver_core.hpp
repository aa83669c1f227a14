// DriverCore: the shared part of a Driver, what executors sleep in (it is
// their IdleDriver) and what the runtime installs on its threads. It owns the
// timers (TimerQueue, time/), the reactor (io/), on the io_uring backend
// the ring (io/) or each worker's (WorkerRing), and the thread's sleep:
// epoll_wait on the reactor's epoll instance, or io_uring_enter on the
// ring, which watches the epoll instance for the sockets that stay on
// readiness; with an eventfd for unpark and a timerfd set to the earliest
// deadline. Neither time/ nor io/
// knows of it: each is reached through its own per-thread handle, which
// enter() or install() sets (as tokio's runtime/driver.rs composes its
// drivers).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/wake.hpp"
#include "pollux/driver/detail/ring_completions.hpp"
#include "pollux/driver/driver_metrics.hpp"
#include "pollux/driver/io_backend.hpp"
#include "pollux/exec/idle_driver.hpp"
#include "pollux/io/detail/reactor.hpp"
#include "pollux/time/detail/timer_queue.hpp"
#include "pollux/time/instant.hpp"

struct epoll_event;

namespace pollux::detail {

class Ring;
class WorkerRing;

class DriverCore final : public IdleDriver {
 public:
  // `backend`: Auto reads POLLUX_IO, then tries io_uring. `single_thread`:
  // one thread parks, polls and does I/O (a current-thread runtime), and
  // the ring is the driver's; otherwise each pool worker makes one
  // (make_thread_park). Throws std::system_error if epoll,
  // the eventfd or the timerfd cannot be created, std::invalid_argument
  // for a POLLUX_IO that is neither epoll nor uring.
  explicit DriverCore(IoBackend backend = IoBackend::Auto, bool single_thread = false);
  ~DriverCore() override;

  void park() override { park_until(std::nullopt); }
  void poll() override;
  void unpark() noexcept override;
  // On the io_uring backend, a multi-thread runtime's worker gets a ring of
  // its own (WorkerRing), installed as its thread's; null on epoll, or
  // when the kernel refuses this worker a ring (it says so once).
  Arc<IdleDriver> make_thread_park() override;
  void park_timeout(Duration max_wait);
  // The epoll instance on the epoll backend (its eventfd and timerfd are
  // in it); -1 on io_uring, whose ring is waited on by its own thread only.
  int wait_fd() const noexcept override;
  bool begin_external_wait() override;
  void end_external_wait(bool look_at_fd) override;

  TimerQueue& timers() noexcept { return timers_; }
  Reactor& reactor() noexcept { return *reactor_; }
  // The ring, on the io_uring backend; null on epoll.
  Ring* ring() noexcept { return ring_; }
  // Epoll or Uring: what the sockets run on.
  IoBackend io_backend() const noexcept {
    return ring_ != nullptr || worker_rings_ ? IoBackend::Uring : IoBackend::Epoll;
  }
  // Why io_uring is not in use (the kernel's refusal), or empty.
  const std::string& uring_error() const noexcept { return uring_error_; }

  // Sets this driver's timers and reactor as the calling thread's for the
  // rest of its life (a runtime's worker threads); uninstall() clears them.
  void install() noexcept;
  static void uninstall() noexcept;

  // Its counts so far; any thread.
  DriverMetrics metrics() const;

  // The driver is going: orphans every armed timer and shuts every
  // socket's registration, and wakes their wakers.
  void shut_down() noexcept;

 private:
  // Sleeps until the next timer, `limit_ns` (if any), an event or unpark.
  void park_until(std::optional<std::int64_t> limit_ns);
  // Who reads the driver's eventfd and timerfd when epoll reports them:
  // the thread that parks (Read), never a poll (Leave: they are
  // level-triggered, so the next park sees them).
  enum class OwnFds { Read, Leave };
  // Applies the events epoll returned: dispatches socket events, and reads
  // the eventfd and timerfd as `own_fds` says.
  void dispatch(const ::epoll_event* events, int n, OwnFds own_fds);
  // Sets the timerfd to expire at deadline_ns (absolute, CLOCK_MONOTONIC).
  void set_timer(std::int64_t deadline_ns);
  // epoll_wait for at most timeout_ns (nullopt: no limit), until wake_at_ns.
  int wait_for_events(::epoll_event* events, int max, std::optional<std::int64_t> timeout_ns, std::int64_t wake_at_ns);
  // The timeout to wait with (nullopt: none) for a wait of `timeout_ns`
  // until `wake_at_ns`: short waits in a run use it; others set the timerfd.
  std::optional<std::int64_t> arm_for_wait(std::optional<std::int64_t> timeout_ns, std::int64_t wake_at_ns);
  // The io_uring backend: its set-up, its sleep, and the handlers of the
  // driver's own fds, which it watches with multishot polls.
  void start_ring();
  void park_in_ring(std::optional<std::int64_t> limit_ns);
  // A worker with a ring of its own sleeps in it while it holds the driver.
  void park_in_worker_ring(WorkerRing& own, std::optional<std::int64_t> limit_ns);
  // Every event epoll has, without blocking.
  void drain_epoll(OwnFds own_fds);
  void on_epoll_fd() { drain_epoll(OwnFds::Leave); }
  void on_event_fd();
  void on_timer_fd();
  struct RingPolls;

  Arc<Reactor> reactor_;  // sockets hold it too: it outlives us while one is registered
  Ring* ring_ = nullptr;  // one reference; streams hold others
  std::unique_ptr<RingPolls> ring_polls_;
  bool worker_rings_ = false;  // a multi-thread driver on io_uring: each worker has a ring
  std::string uring_error_;
  bool unpark_pending_ = false;  // the parking thread's: poll() took an unpark the next park owes
  TimerQueue timers_;            // unparks us when a timer is armed before our wake-up
  int event_fd_ = -1;
  int timer_fd_ = -1;
  std::int64_t timer_set_ns_ = 0;                  // the parking thread's: when the timerfd expires (0: not set)
  bool last_wait_short_ = false;                   // the parking thread's: the last timed wait was under 1 ms
  std::optional<TimerQueue::Wait> external_wait_;  // the parking thread's: a wait on wait_fd() in progress
  Atomic<bool> notified_{false};                   // an unpark is on its way through the eventfd
  Counter socket_events_;                          // written by the thread that holds the driver
  RingCompletions worker_ring_completions_;
};

}  // namespace pollux::detail
