// sleep(d) and sleep_until(t): futures that complete once the driver's
// clock reaches a deadline. The timer entry lives inside the Sleep, so
// arming it allocates nothing; the first poll links it into the driver's
// wheel (rule 4: a Sleep is not moved after that), a later poll with a new
// waker replaces the stored one without re-linking (rule 2), and destroying
// a Sleep unlinks it, so a cancelled timer never wakes anything (rule 5).
// A deadline already passed is Ready on the first poll. Polling a Sleep on
// a thread without a driver throws NoRuntime (rule 8).
//
// Cancellation safety: dropping a Sleep loses nothing but the wait.
#pragma once

#include <cassert>
#include <stdexcept>
#include <utility>

#include "pollux/core/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/time/driver.hpp"
#include "pollux/time/instant.hpp"

namespace pollux {

class Sleep {
 public:
  using Output = void;

  explicit Sleep(Instant deadline) noexcept { entry_.deadline_ns = detail::to_ns(deadline); }
  Sleep(Sleep&& other) noexcept : state_(other.state_), driver_(other.driver_) {
    assert(other.state_ != State::Armed && "pollux::Sleep moved after its first poll (contract rule 4)");
    entry_.deadline_ns = other.entry_.deadline_ns;
  }
  Sleep& operator=(Sleep&&) = delete;
  ~Sleep() { disarm(); }

  Poll<void> poll(Context& cx) {
    switch (state_) {
      case State::Unarmed: {
        detail::DriverCore& driver = driver_ != nullptr ? *driver_ : detail::require_driver("pollux::Sleep");
        if (entry_.deadline_ns <= driver.now_ns()) {
          state_ = State::Done;
          return ready();
        }
        driver_ = &driver;
        driver.arm(entry_, cx.waker());
        state_ = State::Armed;
        return pending;
      }
      case State::Armed: {
        detail::TimerState timer = entry_.state.load(std::memory_order_acquire);
        if (timer == detail::TimerState::Armed) timer = driver_->refresh(entry_, cx.waker());
        if (timer == detail::TimerState::Armed) return pending;
        if (timer == detail::TimerState::Orphaned) throw_orphaned();
        state_ = State::Done;
        return ready();
      }
      case State::Done:
        break;
    }
    detail::polled_after_ready<Sleep>();
  }

  Instant deadline() const noexcept { return detail::from_ns(entry_.deadline_ns); }
  bool is_elapsed() const noexcept { return state_ == State::Done; }

  // Waits for a new deadline from now on, as if new, even after it was
  // Ready; keeps its place in memory (Interval re-arms its Sleep this way).
  void reset(Instant deadline) noexcept {
    disarm();
    entry_.deadline_ns = detail::to_ns(deadline);
    state_ = State::Unarmed;
  }

 private:
  enum class State { Unarmed, Armed, Done };

  void disarm() noexcept {
    if (state_ == State::Armed && entry_.state.load(std::memory_order_acquire) == detail::TimerState::Armed) {
      driver_->cancel(entry_);
    }
    entry_.state.store(detail::TimerState::Idle, std::memory_order_relaxed);
  }

  [[noreturn]] static void throw_orphaned() {
    throw NoRuntime("pollux::Sleep: the driver it waited on was destroyed before the deadline");
  }

  State state_ = State::Unarmed;
  detail::DriverCore* driver_ = nullptr;  // set by the first poll
  detail::TimerEntry entry_;
};

// Completes `d` from now (now() of this thread's driver, so a paused clock
// counts). Duration::max() never completes.
inline Sleep sleep(Duration d) noexcept { return Sleep(detail::saturating_add(now(), d)); }

inline Sleep sleep_until(Instant deadline) noexcept { return Sleep(deadline); }

}  // namespace pollux
