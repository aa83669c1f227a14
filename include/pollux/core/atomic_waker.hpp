// AtomicWaker: the waker slot of a future that is woken from other threads.
// The owner (whoever polls the future) registers the waker of each poll;
// producers call wake_by_ref() from any thread after publishing an event.
// The waker of the most recent registration is the one woken (rule 2), and
// no wake is lost: every producer's wake is delivered after its event.
//
// Only the owner writes the slot and producers only read it, so registering
// the waker already stored (the common case: the same task polls again)
// costs a comparison and no atomic operation. An uncontended wake costs two
// atomic operations. No allocation, no lock; wake_by_ref never blocks.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstdint>
#include <utility>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/waker.hpp"

namespace pollux {

/// The waker slot of a future that is woken from other threads.
class AtomicWaker {
 public:
  AtomicWaker() = default;
  AtomicWaker(const AtomicWaker&) = delete;
  AtomicWaker& operator=(const AtomicWaker&) = delete;

  /// Owner only. Stores `waker` unless the stored one wakes the same task.
  void register_waker(const Waker& waker) noexcept {
    if (waker_.read().will_wake(waker)) return;  // we are the only writer: no race
    std::uint8_t expected = kIdle;
    if (!state_.compare_exchange_strong(expected, kRegistering, std::memory_order_acquire, std::memory_order_relaxed)) {
      // A producer holds the slot and is waking the old waker. It cannot be
      // replaced now; wake the new one instead, and its poll registers again.
      waker.wake_by_ref();
      return;
    }
    waker_.write() = waker;
    release(kRegistering);
  }

  /// Any thread, after publishing the event the owner should see. The
  /// registered waker stays registered.
  void wake_by_ref() noexcept {
    std::uint8_t seen = state_.fetch_or(kWaking, std::memory_order_acq_rel);
    if ((seen & kHeld) == 0) {
      waker_.read().wake_by_ref();
      release(kWaking);
      return;
    }
    // Someone holds the slot and may have woken already, before our event:
    // ask it to wake once more before it lets go.
    seen = state_.fetch_or(kAgain, std::memory_order_acq_rel);
    if (seen & kHeld) return;
    // It let go between our two steps: our request sits on a free slot.
    std::uint8_t expected = kAgain;
    if (state_.compare_exchange_strong(expected, kWaking, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      waker_.read().wake_by_ref();
      release(kWaking);
    }
    // Else another producer took the slot with our request on it; it wakes.
  }

  /// Owner only: removes the registered waker, so an owner going away leaves
  /// no reference behind (rule 5). Waits out a wake in flight, which holds
  /// the slot for one wake_by_ref call.
  Waker take() noexcept {
    std::uint8_t expected = kIdle;
    while (
        !state_.compare_exchange_weak(expected, kRegistering, std::memory_order_acquire, std::memory_order_relaxed)) {
      expected = kIdle;
      detail::spin_hint();
    }
    Waker waker = std::exchange(waker_.write(), Waker{});
    state_.store(kIdle, std::memory_order_release);
    return waker;
  }

 private:
  // Lets go of a slot held with `held`, first delivering every wake that was
  // asked for while we held it (kWaking or kAgain set by producers).
  void release(std::uint8_t held) noexcept {
    std::uint8_t state = held;
    for (;;) {
      if (state_.compare_exchange_weak(state, kIdle, std::memory_order_acq_rel, std::memory_order_acquire)) return;
      if (state == held) continue;  // spurious failure
      if (state_.compare_exchange_weak(state, held, std::memory_order_acq_rel, std::memory_order_acquire)) {
        waker_.read().wake_by_ref();
        state = held;
      }
    }
  }

  static constexpr std::uint8_t kIdle = 0;
  static constexpr std::uint8_t kRegistering = 1;  // the owner holds the slot to write it
  static constexpr std::uint8_t kWaking = 2;       // a producer holds the slot to wake it
  static constexpr std::uint8_t kHeld = kRegistering | kWaking;
  static constexpr std::uint8_t kAgain = 4;  // a wake asked for while the slot was held

  detail::Atomic<std::uint8_t> state_{kIdle};
  detail::TrackedCell<Waker> waker_;  // written by the owner, read by producers: the state orders them
};

}  // namespace pollux
