// Barrier's arrivals and departures, all under its lock; the last arrival
// of a generation wakes the others after letting the lock go.
#include "pollux/sync/barrier.hpp"

#include "pollux/sync/detail/wake_list.hpp"

namespace pollux {

Poll<BarrierWaitResult> Barrier::arrive(Context& cx, Waiter& waiter) {
  detail::WakeList wakes;
  detail::MutexLock lock(lock_);
  if (++arrived_ < n_) {
    waiter.waker = cx.waker();
    waiter.generation = generation_;
    waiter.queued = true;
    waiters_.push_back(waiter);
    return pending;
  }
  // The generation is complete: this arrival leads; release the others.
  // Arrivals while the lock is let go below belong to the next generation
  // and queue behind: they stay.
  arrived_ = 0;
  std::uint64_t completed = generation_++;
  while (!waiters_.empty() && waiters_.front().generation == completed) {
    if (wakes.flush_if_full(lock_)) continue;
    Waiter& other = waiters_.front();
    waiters_.pop_front();
    other.queued = false;
    wakes.push(std::move(other.waker));
  }
  return ready(BarrierWaitResult{true});
}

Poll<BarrierWaitResult> Barrier::poll_wait(Context& cx, Waiter& waiter) {
  detail::MutexLock lock(lock_);
  if (!waiter.queued) return ready(BarrierWaitResult{false});
  if (!waiter.waker.will_wake(cx.waker())) waiter.waker = cx.waker();  // rule 2
  return pending;
}

void Barrier::cancel(Waiter& waiter) noexcept {
  detail::MutexLock lock(lock_);
  if (!waiter.queued) return;  // its generation completed: it counted
  waiters_.erase(waiter);
  waiter.queued = false;
  --arrived_;
}

}  // namespace pollux
