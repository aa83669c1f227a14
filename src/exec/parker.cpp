// The futex behind Parker. States: kEmpty (no token), kNotified (an unpark
// is waiting to be consumed), kParked (the owner sleeps in futex_wait),
// kParkedInDriver (the owner sleeps in its driver's park),
// kParkedInThreadPark (the owner sleeps in its own thread park).
#include "pollux/exec/parker.hpp"

namespace pollux {

void Parker::park() {
  if (thread_park_ && !thread_park_closed_) return park_in_thread_park();
  // kNotified -> kEmpty: consume the token without sleeping.
  // kEmpty -> kParked: sleep until an unpark swaps in kNotified.
  if (state_.fetch_sub(1, std::memory_order_acquire) == kNotified) return;
  for (;;) {
    detail::futex_wait(state_, kParked);
    std::int32_t expected = kNotified;
    if (state_.compare_exchange_strong(expected, kEmpty, std::memory_order_acquire)) return;
  }
}

void Parker::park_in_driver() {
  std::int32_t expected = kEmpty;
  if (!state_.compare_exchange_strong(expected, kParkedInDriver, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    state_.exchange(kEmpty, std::memory_order_acquire);  // consume the token
    driver_->poll();
    return;
  }
  driver_->park();
  // Consumes an unpark that came while we slept. It may also have left a
  // token in the driver: one spurious wake later, never a lost one.
  state_.exchange(kEmpty, std::memory_order_acquire);
}

// kEmpty -> kParkedInDriver, as park_in_driver, without the sleep: the
// outside loop sleeps instead, on the driver's wait_fd(), which an unpark
// makes readable. kNotified -> kEmpty: the token is consumed, no wait.
bool Parker::begin_external_park() noexcept {
  std::int32_t expected = kEmpty;
  if (state_.compare_exchange_strong(expected, kParkedInDriver, std::memory_order_acq_rel, std::memory_order_acquire)) {
    return true;
  }
  state_.exchange(kEmpty, std::memory_order_acquire);
  return false;
}

// kNotified -> kEmpty: consume the token, dispatch what is ready, return.
// kEmpty -> kParkedInThreadPark: sleep there; whatever wakes it (an unpark,
// a completion), the state goes back to kEmpty, consuming an unpark that
// came meanwhile. As with the driver, an unpark that also left a token in
// the thread park costs one spurious wake later, never a lost one.
void Parker::park_in_thread_park() {
  std::int32_t expected = kEmpty;
  if (!state_.compare_exchange_strong(expected, kParkedInThreadPark, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    state_.exchange(kEmpty, std::memory_order_acquire);
    thread_park_->poll();
    return;
  }
  thread_park_->park();
  state_.exchange(kEmpty, std::memory_order_acquire);
}

void Parker::close_thread_park() noexcept {
  if (!thread_park_ || thread_park_closed_) return;
  thread_park_closed_ = true;
  thread_park_->end_thread();
}

void Parker::unpark() noexcept {
  // acq_rel: the thread park the owner attached before it parked is seen.
  switch (state_.exchange(kNotified, std::memory_order_acq_rel)) {
    case kParked:
      detail::futex_wake_one(state_);
      break;
    case kParkedInDriver:
      driver_->unpark();
      break;
    case kParkedInThreadPark:
      thread_park_->unpark();
      break;
    default:
      break;
  }
}

const Arc<Parker>& Parker::current() {
  thread_local const Arc<Parker> parker = make_arc<Parker>();
  return parker;
}

}  // namespace pollux
