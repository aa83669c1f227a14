// The Driver's sleep: epoll on the reactor's instance, with an eventfd for
// unpark and a timerfd set to the exact earliest deadline; its unpark; and
// the hand-off of what woke it to the timers and the reactor.
//
// Why a timerfd rather than epoll's timeout: the kernel adds the thread's
// timer slack (50 µs by default) to a poll timeout, so a sleep would be that
// much late; a timerfd expires on time. In a run of waits under a
// millisecond the slack is welcome instead: with timers due every few
// microseconds, exact wake-ups would cost a park per timer, while 50 µs of
// slack lets one wake-up fire them in batches. Those waits use
// epoll_pwait2's timeout.
//
// On the io_uring backend the thread sleeps in io_uring_enter instead, which
// also submits what the sockets staged since the last park. The eventfd,
// the timerfd and the epoll instance (UDP, Unix sockets, AsyncFd and the
// listeners stay on readiness) are each watched by a multishot poll in the
// ring, so one wait covers all of them. A multi-thread runtime has no ring
// here: each worker has its own (WorkerRing), and the worker that sleeps
// in the driver watches the epoll instance, with the eventfd and the
// timerfd still in it, from its ring.
#include "pollux/driver/driver.hpp"

#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "../io/ring.hpp"
#include "../core/metrics.hpp"
#include "event_fd.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/io/detail/io_context.hpp"
#include "pollux/time/instant.hpp"
#include "worker_ring.hpp"

namespace pollux {

namespace detail {

namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::system_category(), what); }

// The tokens of the driver's own fds, which no socket registration has.
constexpr std::uint64_t kEventToken = Reactor::kFirstDriverToken;
constexpr std::uint64_t kTimerToken = Reactor::kFirstDriverToken + 1;

// The backend asked for: `backend`, or POLLUX_IO's where it is Auto.
IoBackend requested_backend(IoBackend backend) {
  if (backend != IoBackend::Auto) return backend;
  const char* env = std::getenv("POLLUX_IO");
  if (env == nullptr || *env == '\0') return IoBackend::Auto;
  std::string value(env);
  if (value == "epoll") return IoBackend::Epoll;
  if (value == "uring" || value == "io_uring") return IoBackend::Uring;
  throw std::invalid_argument("pollux: POLLUX_IO is \"" + value + "\"; it must be epoll or uring");
}

// The end of every park: after a wait that could reach a deadline (or with
// the clock paused, when time jumped), every due timer fires; after a wake
// by an event with no timer armed, usually nothing is due.
void fire_after_wait(TimerQueue& timers, const TimerQueue::Wait& wait) {
  if (wait.timeout_ns || timers.paused()) {
    timers.fire(timers.now_ns());
  } else {
    timers.fire_if_due();
  }
}

}  // namespace

// The driver's own fds in the ring: one multishot poll each.
struct DriverCore::RingPolls {
  struct Poll : Completion {
    DriverCore* core;
    int fd;
    void (DriverCore::*handle)();
  };
  Poll event, timer, epoll;
};

DriverCore::DriverCore(IoBackend backend, bool single_thread) : reactor_(make_arc<Reactor>()), timers_(*this) {
  int epoll_fd = reactor_->epoll_fd();
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) throw_errno("pollux::Driver: eventfd");
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);  // steady_clock's clock
  auto fail = [&](const char* what) {
    int error = errno;
    if (timer_fd_ >= 0) close(timer_fd_);
    close(event_fd_);
    throw std::system_error(error, std::system_category(), what);
  };
  if (timer_fd_ < 0) fail("pollux::Driver: timerfd_create");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kEventToken;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd_, &event) < 0) fail("pollux::Driver: epoll_ctl(eventfd)");
  event.data.u64 = kTimerToken;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd_, &event) < 0) fail("pollux::Driver: epoll_ctl(timerfd)");

  IoBackend wanted = requested_backend(backend);
  if (wanted != IoBackend::Epoll) {
    try {
      if (single_thread) {
        start_ring();
      } else {
        // Several threads: no ring here (one shared by all was slower than
        // epoll, each completion interrupting the thread that submitted
        // it); each worker makes its own (make_thread_park). One made and
        // dropped now tells whether the kernel allows them.
        Ring probe([](void*) {}, nullptr);
        worker_rings_ = true;
      }
    } catch (const std::system_error& error) {
      // seccomp profiles and io_uring_disabled refuse it: epoll does the work.
      uring_error_ = error.what();
      if (wanted == IoBackend::Uring) {
        std::fprintf(stderr, "pollux: io_uring was asked for but is unavailable (%s): running on epoll\n",
                     uring_error_.c_str());
      }
    }
  }
}

void DriverCore::start_ring() {
  auto unpark = [](void* core) { static_cast<DriverCore*>(core)->unpark(); };
  auto* ring = new Ring(unpark, this);
  intrusive_ptr_add_ref(ring);
  ring_ = ring;
  ring_polls_ = std::make_unique<RingPolls>();
  auto complete = [](Completion* self, int result, unsigned flags) {
    auto& poll = *static_cast<RingPolls::Poll*>(self);
    DriverCore& core = *poll.core;
    if (result >= 0 || result == -EINTR) (core.*poll.handle)();
    // A multishot poll the kernel ended (not a cancellation) is armed again.
    if (!(flags & IORING_CQE_F_MORE) && result != -ECANCELED && !core.ring_->is_shut_down()) {
      core.ring_->stage(self, [&](io_uring_sqe* sqe) { io_uring_prep_poll_multishot(sqe, poll.fd, POLLIN); });
    }
  };
  auto arm = [&](RingPolls::Poll& poll, int fd, void (DriverCore::*handle)()) {
    poll.complete = complete;
    poll.core = this;
    poll.fd = fd;
    poll.handle = handle;
    ring_->stage(&poll, [&](io_uring_sqe* sqe) { io_uring_prep_poll_multishot(sqe, fd, POLLIN); });
  };
  arm(ring_polls_->event, event_fd_, &DriverCore::on_event_fd);
  arm(ring_polls_->timer, timer_fd_, &DriverCore::on_timer_fd);
  arm(ring_polls_->epoll, reactor_->epoll_fd(), &DriverCore::on_epoll_fd);
  // The eventfd and the timerfd are the ring's now, not epoll's.
  epoll_ctl(reactor_->epoll_fd(), EPOLL_CTL_DEL, timer_fd_, nullptr);
  epoll_ctl(reactor_->epoll_fd(), EPOLL_CTL_DEL, event_fd_, nullptr);
}

DriverCore::~DriverCore() {
  if (ring_ != nullptr) {
    ring_->shut_down();  // reaps the polls above before they go
    intrusive_ptr_release(ring_);
  }
  // The reactor may outlive us (a socket still registered holds it), so
  // our fds leave its epoll instance before they close.
  epoll_ctl(reactor_->epoll_fd(), EPOLL_CTL_DEL, timer_fd_, nullptr);
  epoll_ctl(reactor_->epoll_fd(), EPOLL_CTL_DEL, event_fd_, nullptr);
  close(timer_fd_);
  close(event_fd_);
}

void DriverCore::install() noexcept {
  time_context().timers = &timers_;
  io_context().reactor = reactor_.get();
  io_context().ring = ring_;
}

void DriverCore::uninstall() noexcept {
  time_context().timers = nullptr;
  io_context().reactor = nullptr;
  io_context().ring = nullptr;
}

int DriverCore::wait_for_events(::epoll_event* events, int max, std::optional<std::int64_t> timeout_ns,
                                std::int64_t wake_at_ns) {
  static pollux::detail::Atomic<bool> have_pwait2{true};  // kernels before 5.11 lack epoll_pwait2
  int epoll_fd = reactor_->epoll_fd();
  std::optional<std::int64_t> timeout = arm_for_wait(timeout_ns, wake_at_ns);
  if (!timeout) return epoll_wait(epoll_fd, events, max, -1);
  if (*timeout == 0) return epoll_wait(epoll_fd, events, max, 0);
  if (have_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{0, static_cast<long>(*timeout)};
    int n = epoll_pwait2(epoll_fd, events, max, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    have_pwait2.store(false, std::memory_order_relaxed);
  }
  set_timer(wake_at_ns);
  return epoll_wait(epoll_fd, events, max, -1);
}

std::optional<std::int64_t> DriverCore::arm_for_wait(std::optional<std::int64_t> timeout_ns, std::int64_t wake_at_ns) {
  constexpr std::int64_t kShortWait = 1'000'000;  // below this, timer slack batches wake-ups
  if (!timeout_ns || *timeout_ns == 0) return timeout_ns;
  // Slack only in a run of short waits (dense timers). A single short wait
  // (the last step to a deadline after a cascade) stays exact.
  bool dense = std::exchange(last_wait_short_, *timeout_ns < kShortWait) && *timeout_ns < kShortWait;
  if (dense) return timeout_ns;
  set_timer(wake_at_ns);
  return std::nullopt;
}

void DriverCore::set_timer(std::int64_t deadline_ns) {
  if (deadline_ns == timer_set_ns_) return;  // one system call per new deadline, not per park
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
  if (timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr) < 0) {
    throw_errno("pollux::Driver::park: timerfd_settime");
  }
  timer_set_ns_ = deadline_ns;
}

void DriverCore::unpark() noexcept { signal_event_fd(event_fd_, notified_); }

void DriverCore::park_timeout(Duration max_wait) {
  std::int64_t wait = max_wait.count() < 0 ? 0 : max_wait.count();
  std::int64_t now = timers_.now_ns();
  park_until(saturating_add_ns(now, wait));
}

void DriverCore::park_until(std::optional<std::int64_t> limit_ns) {
  if (ring_ != nullptr) return park_in_ring(limit_ns);
  if (WorkerRing* own = WorkerRing::current(); own != nullptr && own->driver() == this) {
    return park_in_worker_ring(*own, limit_ns);
  }
  TimerQueue::Wait wait = timers_.begin_wait(limit_ns);
  std::array<epoll_event, 256> events;
  int n = wait_for_events(events.data(), static_cast<int>(events.size()), wait.timeout_ns, wait.wake_at_ns);
  if (n < 0 && errno != EINTR) throw_errno("pollux::Driver::park: epoll_wait");
  timers_.end_wait();
  dispatch(events.data(), n, OwnFds::Read);
  fire_after_wait(timers_, wait);
}

void DriverCore::dispatch(const epoll_event* events, int n, OwnFds own_fds) {
  std::uint64_t sockets = 0;
  for (int i = 0; i < n; ++i) {
    std::uint64_t token = events[i].data.u64;
    if (Reactor::is_registration(token)) {
      reactor_->dispatch(token, events[i].events);
      ++sockets;
    } else if (own_fds == OwnFds::Leave) {
      // The next park reads them.
    } else if (token == kEventToken) {
      drain_event_fd(event_fd_, notified_);
    } else if (token == kTimerToken) {
      on_timer_fd();
    }
  }
  count(socket_events_, sockets);
}

void DriverCore::park_in_ring(std::optional<std::int64_t> limit_ns) {
  TimerQueue::Wait wait = timers_.begin_wait(limit_ns);
  std::optional<std::int64_t> timeout = arm_for_wait(wait.timeout_ns, wait.wake_at_ns);
  // An unpark that poll() reaped: this park returns at once.
  if (std::exchange(unpark_pending_, false)) timeout = 0;
  ring_->wait(timeout);
  unpark_pending_ = false;
  timers_.end_wait();
  fire_after_wait(timers_, wait);
}

void DriverCore::on_event_fd() {
  drain_event_fd(event_fd_, notified_);
  unpark_pending_ = true;  // for a poll(): the next park owes the unpark a return
}

void DriverCore::on_timer_fd() {
  std::uint64_t count;
  ssize_t got = read(timer_fd_, &count, sizeof count);
  (void)got;
  timer_set_ns_ = 0;  // expired: nothing is set any more
}

void DriverCore::park_in_worker_ring(WorkerRing& own, std::optional<std::int64_t> limit_ns) {
  TimerQueue::Wait wait = timers_.begin_wait(limit_ns);
  std::optional<std::int64_t> timeout = arm_for_wait(wait.timeout_ns, wait.wake_at_ns);
  own.watch(reactor_->epoll_fd());
  own.wait(timeout);
  timers_.end_wait();
  // The eventfd and the timerfd are in the epoll instance: draining it as
  // the parking thread reads them, so their readiness ends here.
  if (own.take_fired()) drain_epoll(OwnFds::Read);
  fire_after_wait(timers_, wait);
}

Arc<IdleDriver> DriverCore::make_thread_park() {
  if (!worker_rings_) return {};
  try {
    return make_arc<WorkerRing>(this, &worker_ring_completions_);
  } catch (const std::system_error& error) {
    // The memlock limit, say, allows the probe's ring but not one more:
    // this worker's sockets stay on epoll, and it sleeps on a futex.
    static pollux::detail::Atomic<bool> said{false};
    if (!said.exchange(true)) {
      std::fprintf(stderr, "pollux: a worker could not make its io_uring ring (%s): its sockets run on epoll\n",
                   error.what());
    }
    return {};
  }
}

void DriverCore::drain_epoll(OwnFds own_fds) {
  std::array<epoll_event, 256> events;
  for (;;) {
    int n = epoll_wait(reactor_->epoll_fd(), events.data(), static_cast<int>(events.size()), 0);
    if (n <= 0) return;
    dispatch(events.data(), n, own_fds);
    if (n < static_cast<int>(events.size())) return;
  }
}

int DriverCore::wait_fd() const noexcept { return ring_ == nullptr && !worker_rings_ ? reactor_->epoll_fd() : -1; }

// An outside loop's wait on the epoll instance is a park whose sleep is
// somebody else's: the timers record it (an earlier timer armed meanwhile
// unparks, which makes the eventfd readable), and the timerfd is set to the
// next deadline exactly (no slack: the outside loop may sleep long).
bool DriverCore::begin_external_wait() {
  TimerQueue::Wait wait = timers_.begin_wait(std::nullopt);
  if (wait.timeout_ns && *wait.timeout_ns == 0) {
    timers_.end_wait();
    fire_after_wait(timers_, wait);
    return false;
  }
  if (wait.timeout_ns) set_timer(wait.wake_at_ns);
  external_wait_ = wait;
  return true;
}

// The eventfd and the timerfd are read here, as a park reads them: they
// are level-triggered, and left readable they would keep the outside
// loop's wait returning at once.
void DriverCore::end_external_wait(bool look_at_fd) {
  std::optional<TimerQueue::Wait> wait = std::exchange(external_wait_, std::nullopt);
  if (wait) timers_.end_wait();
  if (look_at_fd) drain_epoll(OwnFds::Read);
  if (wait) {
    fire_after_wait(timers_, *wait);
  } else {
    timers_.fire_if_due();
  }
}

void DriverCore::poll() {
  if (ring_ != nullptr) {
    ring_->poll();
    timers_.fire_if_due();
    return;
  }
  // Socket events, without blocking, while a busy executor keeps this
  // driver from parking (every 61 tasks: see LocalExecutor, ThreadPool).
  if (reactor_->registered() != 0) {
    std::array<epoll_event, 256> events;
    int n = epoll_wait(reactor_->epoll_fd(), events.data(), static_cast<int>(events.size()), 0);
    if (n > 0) dispatch(events.data(), n, OwnFds::Leave);
  }
  timers_.fire_if_due();
}

std::uint64_t RingCompletions::total() const {
  MutexLock lock(mutex_);
  std::uint64_t sum = left_;
  for (const Ring* ring : rings_) sum += ring->completions();
  return sum;
}

DriverMetrics DriverCore::metrics() const {
  DriverMetrics out;
  out.counted = kMetrics;
  out.socket_events = socket_events_.get();
  out.uring_completions = worker_ring_completions_.total() + (ring_ != nullptr ? ring_->completions() : 0);
  out.timers_fired = timers_.fired();
  return out;
}

void DriverCore::shut_down() noexcept {
  reactor_->shut_down();
  timers_.shut_down();
  if (ring_ != nullptr) ring_->shut_down();
}

}  // namespace detail

Driver::Driver(IoBackend backend, bool single_thread) : core_(make_arc<detail::DriverCore>(backend, single_thread)) {}

Driver::~Driver() { core_->shut_down(); }

}  // namespace pollux
