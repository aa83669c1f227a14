// ScopeCell: the state word of one child of a Scope. It decides, between
// the worker that polls the child and whoever cancels it (a failing
// sibling, Scope::cancel, the scope's destructor, an executor dropping the
// child's task), who owns the child's future, so that it is destroyed
// exactly once and never while another thread polls it. The scope's
// destructor relies on it to wait out a poll in flight and nothing more.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cassert>
#include <cstdint>

#include "pollux/core/detail/concurrency.hpp"

namespace pollux::detail {

/// The ownership word of a scoped child's future.
///
/// The phase (bits 0-1) says who owns the future; two flags ride along:
///
///     kIdle      no one: the child waits for a wake; a canceller may claim it
///     kPolling   the child's worker, inside one poll
///     kClaimed   a canceller, which is destroying the future on its own thread
///     kGone      the future is destroyed; set once, never left
///     bit 2  kCancel  with kPolling: destroy the future when this poll ends
///     bit 3  kWaiter  with kClaimed: the child's task is being dropped, and its
///                     owner sleeps until kGone (futex)
///
///     kIdle     --begin_poll------> kPolling             the worker polls
///     kPolling  --end_poll--------> kIdle                Pending, no cancel asked
///     kPolling  --cancel----------> kPolling|kCancel     the worker destroys it after its poll
///     kIdle     --cancel----------> kClaimed             the canceller destroys it
///     kPolling(|kCancel) --finish_poll--> kGone          by the worker: Ready, threw, or kCancel
///     kClaimed(|kWaiter) --to_gone--> kGone              by the canceller; wakes the waiter
///     kClaimed  --wait_gone-------> kClaimed|kWaiter     then sleeps until kGone
///
/// Claims and cancel requests are made under the scope's lock, so that a
/// canceller walking the scope's list of children never meets a child that
/// its worker is unlinking; begin_poll and end_poll take no lock.
class ScopeCell {
 public:
  static constexpr std::int32_t kIdle = 0;
  static constexpr std::int32_t kPolling = 1;
  static constexpr std::int32_t kClaimed = 2;
  static constexpr std::int32_t kGone = 3;
  static constexpr std::int32_t kPhase = 3;
  static constexpr std::int32_t kCancel = 4;
  static constexpr std::int32_t kWaiter = 8;

  /// What cancel() did.
  enum class Cancel : std::uint8_t {
    Claimed,    ///< the caller owns the future now: it destroys it, then calls to_gone
    Requested,  ///< a poll is in flight: its worker destroys the future when it ends
    Nothing,    ///< someone else owns it already, or it is gone
  };

  /// begin_poll: the worker's turn, unless the future is claimed or gone.
  /// Returns the phase it found: kIdle means the caller now holds kPolling.
  ///     kIdle -> kPolling
  std::int32_t begin_poll() noexcept {
    std::int32_t seen = kIdle;
    if (word_.compare_exchange_strong(seen, kPolling, std::memory_order_acquire, std::memory_order_acquire)) {
      return kIdle;
    }
    return seen & kPhase;
  }

  /// end_poll: the poll returned Pending. False when a cancel came during
  /// the poll: the caller keeps kPolling, destroys the future, and calls to_gone.
  /// Precondition: the caller holds kPolling.
  ///     kPolling -> kIdle
  bool end_poll() noexcept {
    std::int32_t seen = kPolling;
    if (word_.compare_exchange_strong(seen, kIdle, std::memory_order_release, std::memory_order_relaxed)) return true;
    assert(seen == (kPolling | kCancel) && "ScopeCell::end_poll: the caller does not hold kPolling");
    return false;
  }

  /// cancel: under the scope's lock. Claims an idle future, or asks the
  /// worker polling it to destroy it when its poll ends.
  ///     kIdle -> kClaimed;  kPolling -> kPolling|kCancel
  Cancel cancel() noexcept {
    std::int32_t seen = word_.load(std::memory_order_relaxed);
    for (;;) {
      std::int32_t next;
      switch (seen & kPhase) {
        case kIdle:
          next = kClaimed;
          break;
        case kPolling:
          if (seen & kCancel) return Cancel::Nothing;
          next = seen | kCancel;
          break;
        default:
          return Cancel::Nothing;
      }
      // acquire: a claimer reads what the last poll wrote into the future.
      if (word_.compare_exchange_weak(seen, next, std::memory_order_acquire, std::memory_order_relaxed)) {
        return next == kClaimed ? Cancel::Claimed : Cancel::Requested;
      }
    }
  }

  /// finish_poll: the worker destroyed the future (Ready, threw, or kCancel).
  /// A store: only cancel() writes the word while the worker holds
  /// kPolling, and cancel() runs under the scope's lock, which the caller holds.
  /// Precondition: the caller holds kPolling and the scope's lock.
  ///     kPolling(|kCancel) -> kGone
  void finish_poll() noexcept {
    assert((word_.load(std::memory_order_relaxed) & kPhase) == kPolling && "ScopeCell::finish_poll: not polling");
    word_.store(kGone, std::memory_order_release);
  }

  /// to_gone: the claimer destroyed the future.
  /// Precondition: the caller holds kClaimed.
  ///     kClaimed(|kWaiter) -> kGone
  void to_gone() noexcept {
    std::int32_t seen = word_.exchange(kGone, std::memory_order_acq_rel);
    assert((seen & kPhase) == kClaimed && "ScopeCell::to_gone: not claimed");
    if (seen & kWaiter) detail::futex_wake_one(word_);
  }

  /// wait_gone: returns once the future is gone, sleeping while a claimer
  /// destroys it (the child's task is being dropped at that moment).
  /// Precondition: no poll is in flight (the caller is the task's owner).
  void wait_gone() noexcept {
    std::int32_t seen = word_.load(std::memory_order_acquire);
    while ((seen & kPhase) != kGone) {
      assert((seen & kPhase) == kClaimed && "ScopeCell::wait_gone: a poll is in flight");
      if ((seen & kWaiter) == 0
          && !word_.compare_exchange_weak(seen, seen | kWaiter, std::memory_order_acquire, std::memory_order_acquire)) {
        continue;
      }
      detail::futex_wait(word_, seen | kWaiter);
      seen = word_.load(std::memory_order_acquire);
    }
  }

  /// The phase now (acquire), for a destructor deciding what to do.
  std::int32_t phase() const noexcept { return word_.load(std::memory_order_acquire) & kPhase; }

 private:
  Atomic<std::int32_t> word_{kIdle};
};

}  // namespace pollux::detail
