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
#include "pollux/driver/driver.hpp"

#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>
#include <utility>

namespace pollux {

namespace detail {

namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::system_category(), what); }

// The tokens of the driver's own fds, which no socket registration has.
constexpr std::uint64_t kEventToken = Reactor::kFirstDriverToken;
constexpr std::uint64_t kTimerToken = Reactor::kFirstDriverToken + 1;

}  // namespace

DriverCore::DriverCore() : reactor_(make_arc<Reactor>()), timers_(*this) {
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
}

DriverCore::~DriverCore() {
  // The reactor may outlive us (a socket still registered holds it), so
  // our fds leave its epoll instance before they close.
  epoll_ctl(reactor_->epoll_fd(), EPOLL_CTL_DEL, timer_fd_, nullptr);
  epoll_ctl(reactor_->epoll_fd(), EPOLL_CTL_DEL, event_fd_, nullptr);
  close(timer_fd_);
  close(event_fd_);
}

void DriverCore::install() noexcept {
  thread_context.timers = &timers_;
  thread_context.reactor = reactor_.get();
}

void DriverCore::uninstall() noexcept {
  thread_context.timers = nullptr;
  thread_context.reactor = nullptr;
}

int DriverCore::wait_for_events(::epoll_event* events, int max, std::optional<std::int64_t> timeout_ns,
                                std::int64_t wake_at_ns) {
  constexpr std::int64_t kShortWait = 1'000'000;  // below this, timer slack batches wake-ups
  static std::atomic<bool> have_pwait2{true};     // kernels before 5.11 lack epoll_pwait2
  int epoll_fd = reactor_->epoll_fd();
  if (!timeout_ns) return epoll_wait(epoll_fd, events, max, -1);
  if (*timeout_ns == 0) return epoll_wait(epoll_fd, events, max, 0);
  // Slack only in a run of short waits (dense timers). A single short wait
  // (the last step to a deadline after a cascade) stays exact.
  bool dense = std::exchange(last_wait_short_, *timeout_ns < kShortWait) && *timeout_ns < kShortWait;
  if (dense && have_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{0, static_cast<long>(*timeout_ns)};
    int n = epoll_pwait2(epoll_fd, events, max, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    have_pwait2.store(false, std::memory_order_relaxed);
  }
  set_timer(wake_at_ns);
  return epoll_wait(epoll_fd, events, max, -1);
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

void DriverCore::unpark() noexcept {
  // One eventfd write per park, however many unparks arrive.
  if (notified_.exchange(true, std::memory_order_acq_rel)) return;
  std::uint64_t one = 1;
  ssize_t written = write(event_fd_, &one, sizeof one);
  (void)written;  // only fails if the counter would overflow, which leaves it readable anyway
}

void DriverCore::park_timeout(Duration max_wait) {
  std::int64_t wait = max_wait.count() < 0 ? 0 : max_wait.count();
  std::int64_t now = timers_.now_ns();
  park_until(wait > TimerQueue::kNever - now ? TimerQueue::kNever : now + wait);
}

void DriverCore::park_until(std::optional<std::int64_t> limit_ns) {
  TimerQueue::Wait wait = timers_.begin_wait(limit_ns);
  std::array<epoll_event, 256> events;
  int n = wait_for_events(events.data(), static_cast<int>(events.size()), wait.timeout_ns, wait.wake_at_ns);
  if (n < 0 && errno != EINTR) throw_errno("pollux::Driver::park: epoll_wait");
  timers_.end_wait();
  dispatch(events.data(), n, true);
  if (wait.timeout_ns || timers_.paused()) {
    timers_.fire(timers_.now_ns());
  } else {
    timers_.fire_if_due();  // woken by an event with no timer armed: usually nothing to fire
  }
}

void DriverCore::dispatch(const epoll_event* events, int n, bool own) {
  for (int i = 0; i < n; ++i) {
    std::uint64_t token = events[i].data.u64;
    if (Reactor::is_registration(token)) {
      reactor_->dispatch(token, events[i].events);
    } else if (!own) {
      // poll() leaves the eventfd and timerfd to the thread that parks: they
      // are level-triggered, so its next wait sees them.
    } else if (token == kEventToken) {
      std::uint64_t count;
      ssize_t got = read(event_fd_, &count, sizeof count);
      (void)got;  // EAGAIN: another park drained it first
      notified_.exchange(false, std::memory_order_acq_rel);
    } else if (token == kTimerToken) {
      std::uint64_t count;
      ssize_t got = read(timer_fd_, &count, sizeof count);
      (void)got;
      timer_set_ns_ = 0;  // expired: nothing is set any more
    }
  }
}

void DriverCore::poll() {
  // Socket events, without blocking, while a busy executor keeps this
  // driver from parking (every 61 tasks: see LocalExecutor, ThreadPool).
  if (reactor_->registered() != 0) {
    std::array<epoll_event, 256> events;
    int n = epoll_wait(reactor_->epoll_fd(), events.data(), static_cast<int>(events.size()), 0);
    if (n > 0) dispatch(events.data(), n, false);
  }
  timers_.fire_if_due();
}

void DriverCore::shut_down() noexcept {
  reactor_->shut_down();
  timers_.shut_down();
}

}  // namespace detail

Driver::Driver() : core_(make_arc<detail::DriverCore>()) {}

Driver::~Driver() { core_->shut_down(); }

}  // namespace pollux
