// The slow paths of the fair semaphore: queueing, handing permits to
// waiters, cancelling and closing. Every one holds the list's lock only to
// move permits and wakers, and wakes after releasing it.
#include "pollux/sync/detail/batch_semaphore.hpp"

#include <stdexcept>

#include "pollux/core/panic.hpp"
#include "pollux/sync/detail/wake_list.hpp"

namespace pollux::detail {

BatchSemaphore::BatchSemaphore(std::size_t permits) : word_(permits << kShift) {
  if (permits > kMaxPermits) {
    raise<std::invalid_argument>("pollux::Semaphore: more permits than Semaphore::kMaxPermits");
  }
}

Poll<bool> BatchSemaphore::poll_acquire(Context& cx, Waiter& waiter) {
  if (!waiter.queued) {
    // First poll, after the lock-free try found too few permits: under the
    // lock, take them if they came meanwhile, else queue.
    detail::MutexLock lock(lock_);
    Word word = word_.load(std::memory_order_relaxed);
    for (;;) {
      if (word & kClosed) return ready(false);
      if (word & kWaiters) {
        // take_or_queue behind others: the permits in the word are theirs.
        waiter.remaining.store(waiter.needed, std::memory_order_relaxed);
        break;
      }
      Word free = word >> kShift;
      if (free >= waiter.needed) {
        // take_or_queue, enough now: PERMITS -= n.
        if (word_.compare_exchange_weak(word, word - (waiter.needed << kShift), std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
          return ready(true);
        }
        continue;
      }
      // take_or_queue, first to wait: PERMITS = 0, +WAITERS; the rest comes from releases.
      if (word_.compare_exchange_weak(word, (word & kClosed) | kWaiters, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
        waiter.remaining.store(waiter.needed - free, std::memory_order_relaxed);  // > 0: free < needed
        break;
      }
    }
    waiter.waker.get(lock_) = cx.waker();
    waiters_.push_back(waiter);
    waiter.queued = true;
    return pending;
  }
  // Queued before: granted or closed since, or still waiting.
  std::size_t remaining = waiter.remaining.load(std::memory_order_acquire);
  if (remaining == 0) return ready(true);
  if (remaining == Waiter::kClosedMark) return ready(false);
  detail::MutexLock lock(lock_);
  remaining = waiter.remaining.load(std::memory_order_acquire);
  if (remaining == 0) return ready(true);
  if (remaining == Waiter::kClosedMark) return ready(false);
  if (!waiter.waker.get(lock_).will_wake(cx.waker())) waiter.waker.get(lock_) = cx.waker();  // rule 2
  return pending;
}

void BatchSemaphore::release_to_waiters(std::size_t n) noexcept {
  WakeList wakes;
  detail::MutexLock lock(lock_);
  // Permits released by fetch_add while WAITERS was set sit in the word;
  // the first releaser to get here moves them all, the others find none.
  // If the list emptied meanwhile (WAITERS cleared), they are simply free.
  Word word = word_.load(std::memory_order_relaxed);
  if (!(word & kWaiters)) {
    if (n > 0) word_.fetch_add(n << kShift, std::memory_order_release);
    return;
  }
  if (word >> kShift) n += take_all_locked();
  // assign_locked stops early only when `wakes` is full. `wakes` wakes the
  // rest after `lock` is released (it is declared first).
  while ((n = assign_locked(n, wakes)) > 0) wakes.flush_if_full(lock_);
}

std::size_t BatchSemaphore::take_all_locked() noexcept {
  Word word = word_.load(std::memory_order_relaxed);
  while (!word_.compare_exchange_weak(word, word & (kClosed | kWaiters), std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
  }
  return word >> kShift;
}

std::size_t BatchSemaphore::assign_locked(std::size_t n, WakeList& wakes) noexcept {
  while (n > 0 && !waiters_.empty()) {
    if (!wakes.can_push()) return n;
    Waiter& head = waiters_.front();
    std::size_t remaining = head.remaining.load(std::memory_order_relaxed);
    if (n < remaining) {
      head.remaining.store(remaining - n, std::memory_order_relaxed);
      return 0;
    }
    n -= remaining;
    waiters_.pop_front();
    wakes.push(std::move(head.waker.get(lock_)));
    head.remaining.store(0, std::memory_order_release);  // granted: the owner may read the node now
  }
  if (waiters_.empty()) {
    // release: PERMITS += rest, -WAITERS (the list emptied).
    Word word = word_.load(std::memory_order_relaxed);
    while (!word_.compare_exchange_weak(word, (word & kClosed) + (((word >> kShift) + n) << kShift),
                                        std::memory_order_release, std::memory_order_relaxed)) {
    }
  }
  return 0;
}

void BatchSemaphore::cancel(Waiter& waiter) noexcept {
  std::size_t granted;
  {
    WakeList wakes;
    detail::MutexLock lock(lock_);
    std::size_t remaining = waiter.remaining.load(std::memory_order_acquire);
    if (remaining == Waiter::kClosedMark) return;
    if (remaining != 0) {
      // Still queued: unlink, and pass on what it was granted so far.
      waiters_.erase(waiter);
      // What it gathered, and whatever passes through the word, goes to the
      // waiters behind it; with none left, back to PERMITS, and -WAITERS.
      granted = waiter.needed - remaining + take_all_locked();
      while ((granted = assign_locked(granted, wakes)) > 0) wakes.flush_if_full(lock_);
      return;
    }
    granted = waiter.needed;
  }
  release(granted);  // granted in full but never seen: every permit goes back
}

void BatchSemaphore::close() noexcept {
  WakeList wakes;
  detail::MutexLock lock(lock_);
  word_.fetch_or(kClosed, std::memory_order_release);
  while (!waiters_.empty()) {
    if (wakes.flush_if_full(lock_)) continue;
    Waiter& waiter = waiters_.front();
    waiters_.pop_front();
    std::size_t granted = waiter.needed - waiter.remaining.load(std::memory_order_relaxed);
    wakes.push(std::move(waiter.waker.get(lock_)));
    waiter.remaining.store(Waiter::kClosedMark, std::memory_order_release);
    word_.fetch_add(granted << kShift, std::memory_order_relaxed);  // a closed waiter's partial grant is free again
  }
  word_.fetch_and(~kWaiters, std::memory_order_release);
}

}  // namespace pollux::detail
