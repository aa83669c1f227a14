// The timer bookkeeping around the wheel: arming, cancelling, firing in
// batches outside the lock, the paused clock, and the handshake with the
// thread that sleeps on the queue (begin_wait/end_wait), so that a timer
// armed while it sleeps wakes it only when it is due before its own wake-up.
#include "pollux/time/detail/timer_queue.hpp"

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../core/metrics.hpp"
#include "pollux/core/detail/thread_context.hpp"
#include "pollux/core/no_runtime.hpp"
#include "pollux/time/instant.hpp"

namespace pollux {

namespace detail {

TimerQueue::TimerQueue(IdleDriver& park) : park_(park), wheel_(to_ns(std::chrono::steady_clock::now())) {}

TimerQueue::Wait TimerQueue::begin_wait(std::optional<std::int64_t> limit_ns) {
  Wait wait;
  detail::MutexLock lock(mutex_);
  std::int64_t now = now_ns();
  resolve(now);
  std::optional<std::int64_t> wake_at = wheel_.next_deadline();
  if (limit_ns && (!wake_at || *limit_ns < *wake_at)) wake_at = limit_ns;
  if (paused_.load(std::memory_order_relaxed)) {
    // Nothing else to do, and time stands still: jump to the next timer.
    if (wake_at && *wake_at > now) paused_ns_.store(*wake_at, std::memory_order_release);
    if (wake_at) wait.timeout_ns = 0;
    waiting_until_ns_ = wake_at ? kNotWaiting : kNever;
  } else {
    if (wake_at) wait.timeout_ns = *wake_at > now ? *wake_at - now : 0;
    if (wake_at) wait.wake_at_ns = *wake_at;
    waiting_until_ns_ = wake_at.value_or(kNever);
  }
  return wait;
}

void TimerQueue::end_wait() noexcept {
  detail::MutexLock lock(mutex_);
  waiting_until_ns_ = kNotWaiting;
}

void TimerQueue::fire_if_due() {
  bool unresolved = unresolved_.load(std::memory_order_relaxed);
  std::int64_t next = next_deadline_ns_.load(std::memory_order_acquire);
  if (next == kNever && !unresolved) return;
  std::int64_t now = now_ns();
  if (now >= next || unresolved) fire(now);
}

void TimerQueue::fire(std::int64_t now_ns) {
  // Wakers run with the lock released: a waker may do anything, even arm
  // or cancel a timer. After an entry is marked Fired its owner may destroy
  // it at once, so its waker is moved out first and it is not touched again.
  std::array<Waker, 32> batch;
  detail::UniqueLock lock(mutex_);
  resolve(now_ns);
  wheel_.advance(now_ns);
  for (;;) {
    std::size_t n = 0;
    while (n < batch.size()) {
      TimerEntry* entry = wheel_.pop_expired();
      if (entry == nullptr) break;
      batch[n++] = std::move(entry->waker.get(mutex_));
      entry->state.store(TimerState::Fired, std::memory_order_release);
    }
    if (n == 0) break;
    count(fired_, n);
    lock.unlock();
    for (std::size_t i = 0; i < n; ++i) std::move(batch[i]).wake();
    lock.lock();
  }
  refresh_next_deadline();
}

void TimerQueue::resolve(std::int64_t now_ns) noexcept {
  wheel_.resolve(now_ns);
  unresolved_.store(false, std::memory_order_relaxed);
}

void TimerQueue::refresh_next_deadline() noexcept {
  next_deadline_ns_.store(wheel_.next_deadline().value_or(kNever), std::memory_order_release);
}

bool TimerQueue::note_armed(std::int64_t earliest) noexcept {
  if (earliest < next_deadline_ns_.load(std::memory_order_relaxed)) {
    next_deadline_ns_.store(earliest, std::memory_order_release);
  }
  // A thread sleeping on us sleeps past this deadline: wake it to re-arm.
  return earliest < waiting_until_ns_;
}

void TimerQueue::arm(TimerEntry& entry, const Waker& waker) {
  bool wake_sleeper;
  {
    detail::MutexLock lock(mutex_);
    entry.waker.get(mutex_) = waker;
    entry.stored = entry.waker.get(mutex_).as_raw();
    entry.state.store(TimerState::Armed, std::memory_order_relaxed);
    wheel_.insert(entry);
    wake_sleeper = note_armed(entry.deadline_ns);
  }
  if (wake_sleeper) park_.unpark();
}

void TimerQueue::arm_after(TimerEntry& entry, const Waker& waker) {
  bool wake_sleeper = false;
  {
    detail::MutexLock lock(mutex_);
    entry.waker.get(mutex_) = waker;
    entry.stored = entry.waker.get(mutex_).as_raw();
    entry.state.store(TimerState::Armed, std::memory_order_relaxed);
    if (waiting_until_ns_ == kNotWaiting && !paused_.load(std::memory_order_relaxed)) {
      // The thread that drives us is busy: it resolves the delay when it
      // next polls or parks, so arming reads no clock.
      wheel_.insert_unresolved(entry);
      unresolved_.store(true, std::memory_order_relaxed);
    } else {
      // A thread sleeps on us and would resolve it only when it wakes (or
      // the clock is paused, and reading it is free): resolve it now.
      std::int64_t delay = entry.delay_ns, now = now_ns();
      entry.deadline_ns = saturating_add_ns(now, delay);
      wheel_.insert(entry);
      wake_sleeper = note_armed(entry.deadline_ns);
    }
  }
  if (wake_sleeper) park_.unpark();
}

TimerState TimerQueue::refresh(TimerEntry& entry, const Waker& waker) {
  Waker old;  // dropped after the lock: dropping a waker may run arbitrary code
  detail::MutexLock lock(mutex_);
  TimerState state = entry.state.load(std::memory_order_relaxed);
  if (state == TimerState::Armed && !entry.waker.get(mutex_).will_wake(waker)) {
    old = std::exchange(entry.waker.get(mutex_), waker);
    entry.stored = entry.waker.get(mutex_).as_raw();
  }
  return state;
}

void TimerQueue::cancel(TimerEntry& entry) noexcept {
  Waker old;
  detail::MutexLock lock(mutex_);
  if (entry.state.load(std::memory_order_relaxed) != TimerState::Armed) return;
  wheel_.remove(entry);
  old = std::move(entry.waker.get(mutex_));
  entry.state.store(TimerState::Idle, std::memory_order_relaxed);
}

void TimerQueue::shut_down() noexcept {
  std::vector<Waker> wakers;
  {
    detail::MutexLock lock(mutex_);
    TimerWheel::List entries = wheel_.drain();
    while (!entries.empty()) {
      TimerEntry& entry = entries.front();
      entries.pop_front();
      try {
        wakers.push_back(std::move(entry.waker.get(mutex_)));
      } catch (...) {
        // Out of memory: this task is not told now; it learns when polled.
      }
      entry.state.store(TimerState::Orphaned, std::memory_order_release);
    }
    refresh_next_deadline();
  }
  for (Waker& waker : wakers) std::move(waker).wake();
}

// Switching clocks, delays armed so far count from the clock they were
// armed under.
void TimerQueue::pause() {
  detail::MutexLock lock(mutex_);
  if (paused_.load(std::memory_order_relaxed)) return;
  std::int64_t now = to_ns(std::chrono::steady_clock::now());
  resolve(now);
  paused_ns_.store(now, std::memory_order_release);
  paused_.store(true, std::memory_order_release);
}

void TimerQueue::resume() {
  detail::MutexLock lock(mutex_);
  if (!paused_.load(std::memory_order_relaxed)) return;
  resolve(paused_ns_.load(std::memory_order_relaxed));
  paused_.store(false, std::memory_order_release);
}

void TimerQueue::advance(Duration d) {
  if (d < Duration::zero()) throw std::invalid_argument("pollux::Driver::advance: negative duration");
  std::int64_t now;
  {
    detail::MutexLock lock(mutex_);
    if (!paused_.load(std::memory_order_relaxed)) {
      throw std::logic_error("pollux::Driver::advance: the clock is not paused; call pause() first");
    }
    std::int64_t then = paused_ns_.load(std::memory_order_relaxed);
    resolve(then);  // delays armed before the jump count from before it
    now = saturating_add_ns(then, d.count());
    paused_ns_.store(now, std::memory_order_release);
  }
  fire(now);
}

TimerQueue& require_timers(const char* what) {
  TimerQueue* timers = time_context().timers;
  if (timers == nullptr) throw_no_runtime(what);
  return *timers;
}

}  // namespace detail

Instant now() noexcept {
  if (detail::TimerQueue* timers = detail::time_context().timers) return detail::from_ns(timers->now_ns());
  return std::chrono::steady_clock::now();
}

}  // namespace pollux
