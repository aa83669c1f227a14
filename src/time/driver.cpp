// The Driver's sleep (epoll on an eventfd, for unpark, and a timerfd set
// to the exact earliest deadline), its unpark, and the timer bookkeeping
// around the wheel.
//
// Why a timerfd rather than epoll's timeout: the kernel adds the thread's
// timer slack (50 µs by default) to a poll timeout, so a sleep would be that
// much late; a timerfd expires on time. In a run of waits under a
// millisecond the slack is welcome instead: with timers due every few
// microseconds, exact wake-ups would cost a park per timer, while 50 µs of
// slack lets one wake-up fire them in batches. Those waits use
// epoll_pwait2's timeout.
#include "pollux/time/driver.hpp"

#include <sys/epoll.h>
#include <sys/types.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace pollux {

namespace detail {

namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::system_category(), what); }

int create_epoll() {
  int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw_errno("pollux::Driver: epoll_create1");
  return fd;
}

// The tokens of the driver's own fds, which no socket registration has.
constexpr std::uint64_t kEventToken = Reactor::kFirstDriverToken;
constexpr std::uint64_t kTimerToken = Reactor::kFirstDriverToken + 1;

}  // namespace

DriverCore::DriverCore()
    : epoll_fd_(create_epoll()), wheel_(to_ns(std::chrono::steady_clock::now())), reactor_(epoll_fd_) {
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) {
    int error = errno;
    close(epoll_fd_);
    throw std::system_error(error, std::system_category(), "pollux::Driver: eventfd");
  }
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);  // steady_clock's clock
  auto fail = [&](const char* what) {
    int error = errno;
    if (timer_fd_ >= 0) close(timer_fd_);
    close(event_fd_);
    close(epoll_fd_);
    throw std::system_error(error, std::system_category(), what);
  };
  if (timer_fd_ < 0) fail("pollux::Driver: timerfd_create");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kEventToken;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &event) < 0) fail("pollux::Driver: epoll_ctl(eventfd)");
  event.data.u64 = kTimerToken;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &event) < 0) fail("pollux::Driver: epoll_ctl(timerfd)");
}

DriverCore::~DriverCore() {
  close(timer_fd_);
  close(event_fd_);
  close(epoll_fd_);
}

int DriverCore::wait_for_events(::epoll_event* events, int max, std::optional<std::int64_t> timeout_ns,
                                std::int64_t wake_at_ns) {
  constexpr std::int64_t kShortWait = 1'000'000;  // below this, timer slack batches wake-ups
  static std::atomic<bool> have_pwait2{true};     // kernels before 5.11 lack epoll_pwait2
  if (!timeout_ns) return epoll_wait(epoll_fd_, events, max, -1);
  if (*timeout_ns == 0) return epoll_wait(epoll_fd_, events, max, 0);
  // Slack only in a run of short waits (dense timers). A single short wait
  // (the last step to a deadline after a cascade) stays exact.
  bool dense = std::exchange(last_wait_short_, *timeout_ns < kShortWait) && *timeout_ns < kShortWait;
  if (dense && have_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{0, static_cast<long>(*timeout_ns)};
    int n = epoll_pwait2(epoll_fd_, events, max, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    have_pwait2.store(false, std::memory_order_relaxed);
  }
  set_timer(wake_at_ns);
  return epoll_wait(epoll_fd_, events, max, -1);
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
  std::int64_t now = now_ns();
  park_until(wait > kNever - now ? kNever : now + wait);
}

void DriverCore::park_until(std::optional<std::int64_t> limit_ns) {
  std::optional<std::int64_t> timeout_ns;  // nullopt: sleep until an event
  std::int64_t wake_at_ns = kNever;
  {
    std::lock_guard lock(mutex_);
    std::int64_t now = now_ns();
    resolve(now);
    std::optional<std::int64_t> wake_at = wheel_.next_deadline();
    if (limit_ns && (!wake_at || *limit_ns < *wake_at)) wake_at = limit_ns;
    if (paused_.load(std::memory_order_relaxed)) {
      // Nothing else to do, and time stands still: jump to the next timer.
      if (wake_at && *wake_at > now) paused_ns_.store(*wake_at, std::memory_order_release);
      if (wake_at) timeout_ns = 0;
      parked_until_ns_ = wake_at ? kNotParked : kNever;
    } else {
      if (wake_at) timeout_ns = *wake_at > now ? *wake_at - now : 0;
      if (wake_at) wake_at_ns = *wake_at;
      parked_until_ns_ = wake_at.value_or(kNever);
    }
  }
  std::array<epoll_event, 256> events;
  int n = wait_for_events(events.data(), static_cast<int>(events.size()), timeout_ns, wake_at_ns);
  if (n < 0 && errno != EINTR) throw_errno("pollux::Driver::park: epoll_wait");
  {
    std::lock_guard lock(mutex_);
    parked_until_ns_ = kNotParked;
  }
  dispatch(events.data(), n, true);
  if (timeout_ns || paused_.load(std::memory_order_relaxed)) {
    fire(now_ns());
  } else {
    fire_if_due();  // woken by an event with no timer armed: usually nothing to fire
  }
}

void DriverCore::dispatch(const epoll_event* events, int n, bool own) {
  for (int i = 0; i < n; ++i) {
    std::uint64_t token = events[i].data.u64;
    if (Reactor::is_registration(token)) {
      reactor_.dispatch(token, events[i].events);
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
  if (reactor_.registered() != 0) {
    std::array<epoll_event, 256> events;
    int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 0);
    if (n > 0) dispatch(events.data(), n, false);
  }
  fire_if_due();
}

void DriverCore::fire_if_due() {
  bool unresolved = unresolved_.load(std::memory_order_relaxed);
  std::int64_t next = next_deadline_ns_.load(std::memory_order_acquire);
  if (next == kNever && !unresolved) return;
  std::int64_t now = now_ns();
  if (now >= next || unresolved) fire(now);
}

void DriverCore::fire(std::int64_t now_ns) {
  // Wakers run with the lock released: a waker may do anything, even arm
  // or cancel a timer. After an entry is marked Fired its owner may destroy
  // it at once, so its waker is moved out first and it is not touched again.
  std::array<Waker, 32> batch;
  std::unique_lock lock(mutex_);
  resolve(now_ns);
  wheel_.advance(now_ns);
  for (;;) {
    std::size_t n = 0;
    while (n < batch.size()) {
      TimerEntry* entry = wheel_.pop_expired();
      if (entry == nullptr) break;
      batch[n++] = std::move(entry->waker);
      entry->state.store(TimerState::Fired, std::memory_order_release);
    }
    if (n == 0) break;
    lock.unlock();
    for (std::size_t i = 0; i < n; ++i) std::move(batch[i]).wake();
    lock.lock();
  }
  refresh_next_deadline();
}

void DriverCore::resolve(std::int64_t now_ns) noexcept {
  wheel_.resolve(now_ns);
  unresolved_.store(false, std::memory_order_relaxed);
}

void DriverCore::refresh_next_deadline() noexcept {
  next_deadline_ns_.store(wheel_.next_deadline().value_or(kNever), std::memory_order_release);
}

bool DriverCore::note_armed(std::int64_t earliest) noexcept {
  if (earliest < next_deadline_ns_.load(std::memory_order_relaxed)) {
    next_deadline_ns_.store(earliest, std::memory_order_release);
  }
  // A thread parked in us sleeps past this deadline: wake it to re-arm.
  return earliest < parked_until_ns_;
}

void DriverCore::arm(TimerEntry& entry, const Waker& waker) {
  bool wake_parked;
  {
    std::lock_guard lock(mutex_);
    entry.waker = waker;
    entry.state.store(TimerState::Armed, std::memory_order_relaxed);
    wheel_.insert(entry);
    wake_parked = note_armed(entry.deadline_ns);
  }
  if (wake_parked) unpark();
}

void DriverCore::arm_after(TimerEntry& entry, const Waker& waker) {
  bool wake_parked = false;
  {
    std::lock_guard lock(mutex_);
    entry.waker = waker;
    entry.state.store(TimerState::Armed, std::memory_order_relaxed);
    if (parked_until_ns_ == kNotParked && !paused_.load(std::memory_order_relaxed)) {
      // The thread that drives us is busy: it resolves the delay when it
      // next polls or parks, so arming reads no clock.
      wheel_.insert_unresolved(entry);
      unresolved_.store(true, std::memory_order_relaxed);
    } else {
      // A thread sleeps in us and would resolve it only when it wakes (or
      // the clock is paused, and reading it is free): resolve it now.
      std::int64_t delay = entry.delay_ns, now = now_ns();
      entry.deadline_ns = delay > kNever - now ? kNever : now + delay;
      wheel_.insert(entry);
      wake_parked = note_armed(entry.deadline_ns);
    }
  }
  if (wake_parked) unpark();
}

TimerState DriverCore::refresh(TimerEntry& entry, const Waker& waker) {
  Waker old;  // dropped after the lock: dropping a waker may run arbitrary code
  std::lock_guard lock(mutex_);
  TimerState state = entry.state.load(std::memory_order_relaxed);
  if (state == TimerState::Armed && !entry.waker.will_wake(waker)) old = std::exchange(entry.waker, waker);
  return state;
}

void DriverCore::cancel(TimerEntry& entry) noexcept {
  Waker old;
  std::lock_guard lock(mutex_);
  if (entry.state.load(std::memory_order_relaxed) != TimerState::Armed) return;
  wheel_.remove(entry);
  old = std::move(entry.waker);
  entry.state.store(TimerState::Idle, std::memory_order_relaxed);
}

void DriverCore::shut_down() noexcept {
  reactor_.shut_down();
  std::vector<Waker> wakers;
  {
    std::lock_guard lock(mutex_);
    wheel_.drain([&](TimerEntry& entry) {
      try {
        wakers.push_back(std::move(entry.waker));
      } catch (...) {
        // Out of memory: this task is not told now; it learns when polled.
      }
      entry.state.store(TimerState::Orphaned, std::memory_order_release);
    });
    refresh_next_deadline();
  }
  for (Waker& waker : wakers) std::move(waker).wake();
}

// Switching clocks, delays armed so far count from the clock they were
// armed under.
void DriverCore::pause() {
  std::lock_guard lock(mutex_);
  if (paused_.load(std::memory_order_relaxed)) return;
  std::int64_t now = to_ns(std::chrono::steady_clock::now());
  resolve(now);
  paused_ns_.store(now, std::memory_order_release);
  paused_.store(true, std::memory_order_release);
}

void DriverCore::resume() {
  std::lock_guard lock(mutex_);
  if (!paused_.load(std::memory_order_relaxed)) return;
  resolve(paused_ns_.load(std::memory_order_relaxed));
  paused_.store(false, std::memory_order_release);
}

void DriverCore::advance(Duration d) {
  if (d < Duration::zero()) throw std::invalid_argument("pollux::Driver::advance: negative duration");
  std::int64_t now;
  {
    std::lock_guard lock(mutex_);
    if (!paused_.load(std::memory_order_relaxed)) {
      throw std::logic_error("pollux::Driver::advance: the clock is not paused; call pause() first");
    }
    std::int64_t then = paused_ns_.load(std::memory_order_relaxed);
    resolve(then);  // delays armed before the jump count from before it
    now = d.count() > kNever - then ? kNever : then + d.count();
    paused_ns_.store(now, std::memory_order_release);
  }
  fire(now);
}

DriverCore& require_driver(const char* what) {
  if (thread_context.driver == nullptr) {
    throw NoRuntime(std::string(what) +
                    ": polled outside a runtime: no driver (for timers and sockets) is installed on this thread. Run it inside "
                    "Runtime::block_on or a task spawned on a Runtime, or install a Driver of your own with "
                    "driver.enter()");
  }
  return *thread_context.driver;
}

}  // namespace detail

Instant now() noexcept {
  if (detail::DriverCore* driver = detail::thread_context.driver) return detail::from_ns(driver->now_ns());
  return std::chrono::steady_clock::now();
}

Driver::Driver() : core_(make_arc<detail::DriverCore>()) {}

Driver::~Driver() { core_->shut_down(); }

}  // namespace pollux
