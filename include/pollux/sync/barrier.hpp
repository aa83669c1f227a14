// Barrier: n tasks wait until all n have arrived, then all go on together,
// tokio's Barrier. Each group of n arrivals is one generation; exactly one
// waiter of each generation (the one whose arrival completed it) is told
// it is the leader. wait() embeds its own waiter node (no allocation per
// wait) and stores the waker of its latest poll (rule 2); the last arrival
// wakes the others after releasing the lock.
//
// Cancellation safety: a wait() destroyed before its generation completed
// takes its arrival back, so the generation still needs n live waiters;
// one destroyed after its generation completed changes nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/intrusive_list.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/detail/pin_check.hpp"

namespace pollux {

/// What wait() tells each waiter.
struct BarrierWaitResult {
  /// True for exactly one waiter per generation.
  bool is_leader;
};

/// N tasks wait until all n have arrived, then all go on together, tokio's Barrier.
class Barrier {
  struct Waiter {
    detail::ListHook<Waiter> hook;
    // Under the Barrier's lock.
    detail::OwnerGuarded<Waker> waker;
    detail::OwnerGuarded<bool> queued;  // cleared when its generation completes
    detail::OwnerGuarded<std::uint64_t> generation;
  };

 public:
  /// A barrier for n waiters (n = 0 acts as 1: every wait() leads at once).
  explicit Barrier(std::size_t n) noexcept : n_(n == 0 ? 1 : n) {}
  Barrier(const Barrier&) = delete;
  Barrier& operator=(const Barrier&) = delete;
  /// Debug builds stop here, naming the type, if a task still waits on it.
  ~Barrier() {
    if constexpr (detail::check_contract) {
      detail::MutexLock lock(lock_);
      if (!waiters_.empty())
        detail::contract_violation(
            detail::type_name<Barrier>(),
            "destroyed while a task still waits on it (its waiting future would touch freed memory): declare it before the runtime, so the runtime and its tasks go first");
    }
  }

  /// The future of wait().
  class [[nodiscard("futures do nothing unless polled")]] Wait {
   public:
    using Output = BarrierWaitResult;
    Wait(Wait && other) noexcept : barrier_(other.barrier_), pin_(std::move(other.pin_)) {}
    Wait& operator=(Wait&&) = delete;
    ~Wait() {
      if (state_ == State::Waiting) barrier_->cancel(waiter_);
    }
    /// Pending until it completes, with the waker of this poll stored (rule 2).
    Poll<BarrierWaitResult> poll(Context & cx) {
      POLLUX_CHECK_NOT_DONE(Wait, state_ != State::Done);
      Poll<BarrierWaitResult> result =
          state_ == State::Init ? barrier_->arrive(cx, waiter_) : barrier_->poll_wait(cx, waiter_);
      if (result.is_ready()) {
        state_ = State::Done;
      } else {
        state_ = State::Waiting;
        pin_.pin();
      }
      return result;
    }

   private:
    friend class Barrier;
    enum class State { Init, Waiting, Done };
    explicit Wait(Barrier & barrier) noexcept : barrier_(&barrier) {}
    Barrier* barrier_;
    Waiter waiter_;
    State state_ = State::Init;
    [[no_unique_address]] detail::PinCheck<Wait> pin_;
  };

  /// Arrives at the barrier (on the first poll) and waits for the rest of
  /// this generation.
  Wait wait() noexcept { return Wait(*this); }

 private:
  Poll<BarrierWaitResult> arrive(Context& cx, Waiter& waiter);
  Poll<BarrierWaitResult> poll_wait(Context& cx, Waiter& waiter);
  void cancel(Waiter& waiter) noexcept;

  using List = detail::IntrusiveList<Waiter, &Waiter::hook>;
  std::size_t n_;
  detail::Mutex lock_;
  std::size_t arrived_ POLLUX_GUARDED_BY(lock_) = 0;  // in the current generation
  std::uint64_t generation_ POLLUX_GUARDED_BY(lock_) = 0;
  List waiters_ POLLUX_GUARDED_BY(lock_);
};

}  // namespace pollux
