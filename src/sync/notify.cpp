// Notify's paths that take the list's lock: queueing a waiter, handing a
// notification to the oldest one, notify_waiters and cancellation.
#include "pollux/sync/notify.hpp"

#include "pollux/sync/detail/wake_list.hpp"

namespace pollux {

bool Notify::poll_first(Context& cx, Waiter& waiter, std::uintptr_t calls) {
  Word word = state_.load(std::memory_order_acquire);
  if ((word >> kCallsShift) != calls) return true;  // notify_waiters() ran since notified()
  // take permit: NOTIFIED -> EMPTY.
  while ((word & kStateMask) == kNotified) {
    if (state_.compare_exchange_weak(word, word & ~kStateMask, std::memory_order_acquire, std::memory_order_acquire)) {
      return true;
    }
  }
  detail::MutexLock lock(lock_);
  word = state_.load(std::memory_order_acquire);
  if ((word >> kCallsShift) != calls) return true;
  for (;;) {
    switch (word & kStateMask) {
      case kNotified:  // take permit
        if (state_.compare_exchange_weak(word, word & ~kStateMask, std::memory_order_acquire,
                                         std::memory_order_acquire)) {
          return true;
        }
        continue;
      case kEmpty:  // queue: EMPTY -> WAITING
        if (!state_.compare_exchange_weak(word, word | kWaiting, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
          continue;
        }
        break;
      default:
        break;
    }
    break;
  }
  waiter.waker.get(lock_) = cx.waker();
  waiter.stored = waiter.waker.get(lock_).as_raw();
  waiter.calls.get(lock_) = word >> kCallsShift;
  waiters_.push_back(waiter);
  return false;
}

bool Notify::poll_again_locked(Context& cx, Waiter& waiter) {
  detail::MutexLock lock(lock_);
  if (waiter.notification.load(std::memory_order_acquire) != Notification::None) return true;
  Waker& waker = waiter.waker.get(lock_);
  if (!waker.will_wake(cx.waker())) waker = cx.waker();  // rule 2
  waiter.stored = waker.as_raw();
  return false;
}

// Under the lock, with the state WAITING or not: pops the oldest waiter and
// returns its waker, or stores the permit when nobody waits.
Waker Notify::notify_one_locked() noexcept {
  Word word = state_.load(std::memory_order_relaxed);
  if ((word & kStateMask) != kWaiting) {
    // The waiters left while we took the lock: EMPTY/NOTIFIED -> NOTIFIED.
    while (!state_.compare_exchange_weak(word, (word & ~kStateMask) | kNotified, std::memory_order_release,
                                         std::memory_order_relaxed)) {
    }
    return Waker{};
  }
  Waiter& waiter = waiters_.front();
  waiters_.pop_front();
  Waker waker = std::move(waiter.waker.get(lock_));
  waiter.notification.store(Notification::One, std::memory_order_release);
  // WAITING -> EMPTY once the list is empty; only this lock's holders change a WAITING state.
  if (waiters_.empty()) state_.store(word & ~kStateMask, std::memory_order_release);
  return waker;
}

void Notify::notify_one_slow() noexcept {
  Waker waker;
  {
    detail::MutexLock lock(lock_);
    waker = notify_one_locked();
  }
  std::move(waker).wake();
}

void Notify::notify_waiters() noexcept {
  detail::WakeList wakes;
  detail::MutexLock lock(lock_);
  // CALLS + 1 (and WAITING -> EMPTY below, once the list is empty).
  Word word = state_.fetch_add(Word{1} << kCallsShift, std::memory_order_acq_rel) + (Word{1} << kCallsShift);
  std::uintptr_t calls = word >> kCallsShift;
  // Waiters that queue while the lock is let go below carry the new count
  // and stay: only those that existed at the call are woken.
  while (!waiters_.empty() && waiters_.front().calls.get(lock_) != calls) {
    if (wakes.flush_if_full(lock_)) continue;
    Waiter& waiter = waiters_.front();
    waiters_.pop_front();
    wakes.push(std::move(waiter.waker.get(lock_)));
    waiter.notification.store(Notification::All, std::memory_order_release);
  }
  if (waiters_.empty()) {
    word = state_.load(std::memory_order_relaxed);
    if ((word & kStateMask) == kWaiting) state_.store(word & ~kStateMask, std::memory_order_release);
  }
}

void Notify::cancel(Waiter& waiter) noexcept {
  Waker waker;
  {
    detail::MutexLock lock(lock_);
    switch (waiter.notification.load(std::memory_order_acquire)) {
      case Notification::None: {
        waiters_.erase(waiter);
        Word word = state_.load(std::memory_order_relaxed);
        if (waiters_.empty() && (word & kStateMask) == kWaiting) {
          state_.store(word & ~kStateMask, std::memory_order_release);
        }
        break;
      }
      case Notification::One:
        waker = notify_one_locked();  // chosen but never saw it: pass it on
        break;
      case Notification::All:
        break;
    }
  }
  std::move(waker).wake();
}

}  // namespace pollux
