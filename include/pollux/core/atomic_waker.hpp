// AtomicWaker: one waker slot that a consumer registers into on each poll
// while producers on other threads wake it (futures-rs's AtomicWaker). It
// is how a leaf future keeps rule 2 across threads without a mutex: the
// waker of the most recent `register_waker` is the one woken, and a wake that
// races a registration is never lost (the registering thread wakes the new
// waker itself). No allocation and no lock; wake never blocks.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "pollux/core/waker.hpp"

namespace pollux {

class AtomicWaker {
 public:
  AtomicWaker() = default;
  AtomicWaker(const AtomicWaker&) = delete;
  AtomicWaker& operator=(const AtomicWaker&) = delete;

  // Stores `waker` unless the stored one already wakes the same task. Only
  // one thread registers at a time (the one polling the owner).
  void register_waker(const Waker& waker) noexcept {
    std::uint8_t expected = kWaiting;
    if (state_.compare_exchange_strong(expected, kRegistering, std::memory_order_acquire,
                                       std::memory_order_acquire)) {
      if (!waker_.will_wake(waker)) waker_ = waker;
      // A wake that arrived while we were storing set kWaking and left the
      // waker to us: hand it over here, or it is lost.
      expected = kRegistering;
      if (!state_.compare_exchange_strong(expected, kWaiting, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
        Waker pending_wake = std::exchange(waker_, Waker{});
        state_.store(kWaiting, std::memory_order_release);
        std::move(pending_wake).wake();
      }
    } else {
      // A wake is in flight right now; it may be taking the old waker, so
      // wake the new one directly (a spurious wake at worst).
      waker.wake_by_ref();
    }
  }

  // Wakes the registered waker and keeps it registered.
  void wake_by_ref() noexcept {
    if (state_.fetch_or(kWaking, std::memory_order_acq_rel) == kWaiting) {
      waker_.wake_by_ref();
      state_.fetch_and(static_cast<std::uint8_t>(~kWaking), std::memory_order_release);
    }
  }

  // Wakes the registered waker and removes it.
  void wake() noexcept { take().wake(); }

  // Removes and returns the registered waker (the no-op waker if none), so
  // that an owner going away leaves no reference behind (rule 5).
  Waker take() noexcept {
    if (state_.fetch_or(kWaking, std::memory_order_acq_rel) == kWaiting) {
      Waker waker = std::exchange(waker_, Waker{});
      state_.fetch_and(static_cast<std::uint8_t>(~kWaking), std::memory_order_release);
      return waker;
    }
    return Waker{};
  }

 private:
  static constexpr std::uint8_t kWaiting = 0;
  static constexpr std::uint8_t kRegistering = 1;
  static constexpr std::uint8_t kWaking = 2;

  std::atomic<std::uint8_t> state_{kWaiting};
  Waker waker_;
};

}  // namespace pollux
