// The Driver's sleep (epoll_pwait2 on an eventfd, with a nanosecond
// timeout), its unpark, and the timer bookkeeping around the wheel.
#include "pollux/time/driver.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

namespace pollux {

namespace detail {

namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::system_category(), what); }

// epoll_wait with a nanosecond timeout (nullopt: forever). Kernels before
// 5.11 lack epoll_pwait2; there the timeout is rounded up to whole
// milliseconds, so a timer may be up to 1 ms late but never early.
int wait_for_events(int epoll_fd, epoll_event* events, int max, std::optional<std::int64_t> timeout_ns) {
  static std::atomic<bool> have_pwait2{true};
  if (have_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{};
    if (timeout_ns) {
      ts.tv_sec = static_cast<time_t>(*timeout_ns / 1'000'000'000);
      ts.tv_nsec = static_cast<long>(*timeout_ns % 1'000'000'000);
    }
    int n = epoll_pwait2(epoll_fd, events, max, timeout_ns ? &ts : nullptr, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    have_pwait2.store(false, std::memory_order_relaxed);
  }
  int timeout_ms = -1;
  if (timeout_ns) {
    std::int64_t ms = (*timeout_ns + 999'999) / 1'000'000;
    timeout_ms = ms > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max() : static_cast<int>(ms);
  }
  return epoll_wait(epoll_fd, events, max, timeout_ms);
}

}  // namespace

DriverCore::DriverCore() : wheel_(to_ns(std::chrono::steady_clock::now())) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw_errno("pollux::Driver: epoll_create1");
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) {
    int error = errno;
    close(epoll_fd_);
    throw std::system_error(error, std::system_category(), "pollux::Driver: eventfd");
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;  // the eventfd; I/O registrations will carry their own pointer
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &event) < 0) {
    int error = errno;
    close(event_fd_);
    close(epoll_fd_);
    throw std::system_error(error, std::system_category(), "pollux::Driver: epoll_ctl(eventfd)");
  }
}

DriverCore::~DriverCore() {
  close(event_fd_);
  close(epoll_fd_);
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
  {
    std::lock_guard lock(mutex_);
    std::optional<std::int64_t> wake_at = wheel_.next_deadline();
    if (limit_ns && (!wake_at || *limit_ns < *wake_at)) wake_at = limit_ns;
    if (paused_.load(std::memory_order_relaxed)) {
      // Nothing else to do, and time stands still: jump to the next timer.
      if (wake_at && *wake_at > paused_ns_.load(std::memory_order_relaxed)) {
        paused_ns_.store(*wake_at, std::memory_order_release);
      }
      if (wake_at) timeout_ns = 0;
      parked_until_ns_ = wake_at ? kNotParked : kNever;
    } else {
      if (wake_at) {
        std::int64_t now = now_ns();
        timeout_ns = *wake_at > now ? *wake_at - now : 0;
      }
      parked_until_ns_ = wake_at.value_or(kNever);
    }
  }
  std::array<epoll_event, 64> events;
  int n = wait_for_events(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ns);
  if (n < 0 && errno != EINTR) throw_errno("pollux::Driver::park: epoll_pwait2");
  for (int i = 0; i < n; ++i) {
    if (events[i].data.ptr == nullptr) {
      std::uint64_t count;
      ssize_t got = read(event_fd_, &count, sizeof count);
      (void)got;  // EAGAIN: another park drained it first
      notified_.exchange(false, std::memory_order_acq_rel);
    }
  }
  {
    std::lock_guard lock(mutex_);
    parked_until_ns_ = kNotParked;
  }
  fire(now_ns());
}

void DriverCore::poll() {
  std::int64_t next = next_deadline_ns_.load(std::memory_order_acquire);
  if (next == kNever) return;
  std::int64_t now = now_ns();
  if (now >= next) fire(now);
}

void DriverCore::fire(std::int64_t now_ns) {
  // Wakers run with the lock released: a waker may do anything, even arm
  // or cancel a timer. After an entry is marked Fired its owner may destroy
  // it at once, so its waker is moved out first and it is not touched again.
  std::array<Waker, 32> batch;
  std::unique_lock lock(mutex_);
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

void DriverCore::refresh_next_deadline() noexcept {
  next_deadline_ns_.store(wheel_.next_deadline().value_or(kNever), std::memory_order_release);
}

void DriverCore::arm(TimerEntry& entry, const Waker& waker) {
  bool wake_parked;
  {
    std::lock_guard lock(mutex_);
    entry.waker = waker;
    entry.state.store(TimerState::Armed, std::memory_order_relaxed);
    wheel_.insert(entry);
    if (entry.deadline_ns < next_deadline_ns_.load(std::memory_order_relaxed)) {
      next_deadline_ns_.store(entry.deadline_ns, std::memory_order_release);
    }
    // A thread parked in us sleeps past this deadline: wake it to re-arm.
    wake_parked = entry.deadline_ns < parked_until_ns_;
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

void DriverCore::pause() {
  std::lock_guard lock(mutex_);
  if (paused_.load(std::memory_order_relaxed)) return;
  paused_ns_.store(to_ns(std::chrono::steady_clock::now()), std::memory_order_release);
  paused_.store(true, std::memory_order_release);
}

void DriverCore::resume() {
  std::lock_guard lock(mutex_);
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
    now = d.count() > kNever - then ? kNever : then + d.count();
    paused_ns_.store(now, std::memory_order_release);
  }
  fire(now);
}

DriverCore& require_driver(const char* what) {
  if (current_driver == nullptr) {
    throw NoRuntime(std::string(what) +
                    ": polled outside a runtime: no timer driver is installed on this thread. Run it inside "
                    "Runtime::block_on or a task spawned on a Runtime, or install a Driver of your own with "
                    "driver.enter()");
  }
  return *current_driver;
}

}  // namespace detail

Instant now() noexcept {
  if (detail::current_driver != nullptr) return detail::from_ns(detail::current_driver->now_ns());
  return std::chrono::steady_clock::now();
}

Driver::Driver() : core_(make_arc<detail::DriverCore>()) {}

Driver::~Driver() { core_->shut_down(); }

}  // namespace pollux
