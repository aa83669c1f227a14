// Barrier's arrivals and departures, all under its lock; the last arrival
// of a generation wakes the others after letting the lock go.
#include "pollux/sync/barrier.hpp"

#include "pollux/sync/detail/wake_list.hpp"

namespace pollux {

Poll<BarrierWaitResult> Barrier::arrive(Context& cx, Waiter& waiter) {
  detail::WakeList wakes;
  detail::MutexLock lock(lock_);
  if (++arrived_ < n_) {
    waiter.waker.get(lock_) = cx.waker();
    waiter.generation.get(lock_) = generation_;
    waiter.queued.get(lock_) = true;
    waiters_.push_back(waiter);
    return pending;
  }
  // The generation is complete: this arrival leads; release the others.
  // Arrivals while the lock is let go below belong to the next generation
  // and queue behind: they stay.
  arrived_ = 0;
  std::uint64_t completed = generation_++;
  while (!waiters_.empty() && waiters_.front().generation.get(lock_) == completed) {
    if (wakes.flush_if_full(lock_)) continue;
    Waiter& other = waiters_.front();
    waiters_.pop_front();
    other.queued.get(lock_) = false;
    wakes.push(std::move(other.waker.get(lock_)));
  }
  return ready(BarrierWaitResult{true});
}

Poll<BarrierWaitResult> Barrier::poll_wait(Context& cx, Waiter& waiter) {
  detail::MutexLock lock(lock_);
  if (!waiter.queued.get(lock_)) return ready(BarrierWaitResult{false});
  if (!waiter.waker.get(lock_).will_wake(cx.waker())) waiter.waker.get(lock_) = cx.waker();  // rule 2
  return pending;
}

void Barrier::cancel(Waiter& waiter) noexcept {
  detail::MutexLock lock(lock_);
  if (!waiter.queued.get(lock_)) return;  // its generation completed: it counted
  waiters_.erase(waiter);
  waiter.queued.get(lock_) = false;
  --arrived_;
}

}  // namespace pollux
