// sleep(d) and sleep_until(t): futures that complete once the driver's
// clock reaches a deadline. The timer entry lives inside the Sleep, so
// arming it allocates nothing; the first poll links it into the wheel of
// the thread's TimerQueue (rule 4: a Sleep is not moved after that), a later poll with a new
// waker replaces the stored one without re-linking (rule 2), and destroying
// a Sleep unlinks it, so a cancelled timer never wakes anything (rule 5).
// A deadline already passed is Ready on the first poll. Polling a Sleep on
// a thread without a driver throws NoRuntime (rule 8).
//
// Cancellation safety: dropping a Sleep loses nothing but the wait.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <cassert>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/core/no_runtime.hpp"
#include "pollux/time/detail/timer_queue.hpp"
#include "pollux/time/instant.hpp"

namespace pollux {

/// What sleep(d) and sleep_until(t) return: Ready once the driver's clock
/// reaches the deadline. Allocates nothing: its timer entry lives inside it.
class [[nodiscard("futures do nothing unless polled")]] Sleep {
 public:
  using Output = void;

  /// What sleep_until(deadline) makes.
  explicit Sleep(Instant deadline) noexcept : state_(State::Unarmed) { entry_.deadline_ns = detail::to_ns(deadline); }

  // A sleep of `delay` counted from its first poll rather than from now:
  // what timeout(d, f) uses, so a future made early is not timed before it
  // starts, and the clock is read only when the timer is really armed.
  struct FromFirstPoll {};
  /// A sleep of `delay` from its first poll (what timeout(d, f) uses).
  Sleep(FromFirstPoll, Duration delay) noexcept : state_(State::Delayed), relative_(true) {
    entry_.delay_ns = delay.count();
  }

  Sleep(Sleep && other) noexcept
      : pin_(std::move(other.pin_)), state_(other.state_), relative_(other.relative_), timers_(other.timers_) {
    if (state_ == State::Delayed)
      entry_.delay_ns = other.entry_.delay_ns;
    else
      entry_.deadline_ns = other.entry_.deadline_ns;
  }
  Sleep& operator=(Sleep&&) = delete;
  ~Sleep() { disarm(); }

  /// Starts the timer on the first poll; Ready once the duration has passed since then.
  Poll<void> poll(Context & cx) {
    switch (state_) {
      case State::Unarmed: {
        detail::TimerQueue& timers = this->timers();
        if (entry_.deadline_ns <= timers.now_ns()) {
          state_ = State::Done;
          return ready();
        }
        return arm(timers, cx);
      }
      case State::Delayed:
        if (entry_.delay_ns <= 0) {
          state_ = State::Done;
          return ready();
        }
        timers_ = &timers();
        timers_->arm_after(entry_, cx.waker());  // no clock read: see TimerQueue::arm_after
        state_ = State::Armed;
        pin_.pin();
        return pending;
      case State::Armed: {
        detail::TimerState timer = entry_.state.load(std::memory_order_acquire);
        // Most polls of an armed sleep come with the waker it holds (a
        // timeout polled on every wake of its task): no lock then.
        if (timer == detail::TimerState::Armed && !entry_.holds(cx.waker()))
          timer = timers_->refresh(entry_, cx.waker());
        if (timer == detail::TimerState::Armed) return pending;
        if (timer == detail::TimerState::Orphaned) throw_orphaned();
        state_ = State::Done;
        pin_.unpin();  // the wheel let go of the entry
        return ready();
      }
      case State::Done:
        break;
    }
    detail::polled_after_ready<Sleep>();
  }

  /// The deadline of a sleep made with one (FromFirstPoll sleeps have none:
  /// the driver settles it out of sight).
  Instant deadline() const noexcept {
    assert(!relative_ && "pollux::Sleep::deadline: a FromFirstPoll sleep has no deadline to read");
    return detail::from_ns(entry_.deadline_ns);
  }
  /// False for a FromFirstPoll sleep, whose deadline the driver keeps.
  bool has_deadline() const noexcept { return !relative_; }
  /// True once it was Ready.
  bool is_elapsed() const noexcept { return state_ == State::Done; }

  /// Waits for a new deadline from now on, as if new, even after it was
  /// Ready; keeps its place in memory (Interval re-arms its Sleep this way).
  void reset(Instant deadline) noexcept {
    disarm();
    entry_.deadline_ns = detail::to_ns(deadline);
    state_ = State::Unarmed;
    relative_ = false;
  }

 private:
  enum class State {
    Unarmed,  // deadline known, timer not linked
    Delayed,  // entry_.delay_ns is set; the driver turns it into a deadline after arming
    Armed,    // linked in the timer queue's wheel
    Done,
  };

  detail::TimerQueue& timers() { return timers_ != nullptr ? *timers_ : detail::require_timers("pollux::Sleep"); }

  Poll<void> arm(detail::TimerQueue & timers, Context & cx) {
    timers_ = &timers;
    timers.arm(entry_, cx.waker());
    state_ = State::Armed;
    pin_.pin();
    return pending;
  }

  void disarm() noexcept {
    if (state_ == State::Armed && entry_.state.load(std::memory_order_acquire) == detail::TimerState::Armed) {
      timers_->cancel(entry_);
    }
    entry_.state.store(detail::TimerState::Idle, std::memory_order_relaxed);
    pin_.unpin();
  }

  [[noreturn]] static void throw_orphaned() {
    throw NoRuntime("pollux::Sleep: the driver it waited on was destroyed before the deadline");
  }

  // Rule 4: armed, the entry is linked in the wheel by its address.
  [[no_unique_address]] detail::PinCheck<Sleep> pin_;
  State state_;
  bool relative_ = false;                 // made FromFirstPoll: the entry started with a delay, not a deadline
  detail::TimerQueue* timers_ = nullptr;  // the driver's timers, set by the first poll
  detail::TimerEntry entry_;
};

/// Completes `d` from now (now() of this thread's driver, so a paused clock
/// counts). Duration::max() never completes.
inline Sleep sleep(Duration d) noexcept { return Sleep(detail::saturating_add(now(), d)); }

/// Completes at `deadline` on this thread's driver's clock.
inline Sleep sleep_until(Instant deadline) noexcept { return Sleep(deadline); }

}  // namespace pollux
