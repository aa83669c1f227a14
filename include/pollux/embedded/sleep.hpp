// sleep(d) in the embedded profile: a future that is Ready once the
// program's TickTimer has counted `d` (rounded up to whole ticks). It arms
// on its first poll (rule 4: it does not move after) and its destructor
// takes it out of the queue (rule 5).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <chrono>
#include <cstdint>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/detail/pin_check.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/panic.hpp"
#include "pollux/embedded/tick_timer.hpp"

namespace pollux {

/// The future of sleep(d) on a TickTimer.
class [[nodiscard("futures do nothing unless polled")]] TickSleep {
 public:
  using Output = void;

  /// Waits `ticks` ticks of `timer`, counted from the first poll.
  TickSleep(TickTimer & timer, std::uint64_t ticks) noexcept : timer_(&timer), ticks_(ticks) {}

  /// Marks TickSleep's constructor that takes a deadline.
  struct At {};
  /// Waits until `timer` counts `deadline` (a tick count).
  TickSleep(TickTimer & timer, At, std::uint64_t deadline) noexcept : timer_(&timer), ticks_(0), absolute_(true) {
    entry_.deadline = deadline;
  }

  /// The tick it ends at; valid once polled (or made with a deadline).
  std::uint64_t deadline() const noexcept { return entry_.deadline; }

  /// Makes it wait for `deadline` (a tick count) again, from any state:
  /// an interval's next tick.
  void reset(std::uint64_t deadline) noexcept {
    if (state_ == State::Armed) timer_->cancel(entry_);
    state_ = State::Start;
    absolute_ = true;
    entry_.deadline = deadline;
  }
  TickSleep(TickSleep &&) noexcept = default;  // before the first poll only (pin_ checks)
  TickSleep& operator=(TickSleep&&) = delete;
  ~TickSleep() {
    if (state_ == State::Armed) timer_->cancel(entry_);
  }

  /// Ready once the deadline's tick has come.
  Poll<void> poll(Context & cx) noexcept {
    switch (state_) {
      case State::Start:
        pin_.pin();
        if (!absolute_) entry_.deadline = timer_->now() + ticks_;
        if (!timer_->arm(entry_, cx.waker())) break;
        state_ = State::Armed;
        return pending;
      case State::Armed:
        if (!timer_->poll_armed(entry_, cx.waker())) return pending;
        break;
      case State::Done:
        detail::polled_after_ready<TickSleep>();
    }
    state_ = State::Done;
    return ready();
  }

 private:
  enum class State : unsigned char { Start, Armed, Done };

  TickTimer* timer_;
  std::uint64_t ticks_;
  detail::TickEntry entry_;
  State state_ = State::Start;
  bool absolute_ = false;  // entry_.deadline was given, not counted from the first poll
  [[no_unique_address]] detail::PinCheck<TickSleep> pin_;
};

/// A future that is Ready once the program's TickTimer (the one started)
/// has counted `d`, rounded up to whole ticks; a TickTimer must be started.
template <class Rep, class Period>
TickSleep sleep(std::chrono::duration<Rep, Period> d) noexcept {
  if (detail::program_timer == nullptr) panic("pollux::sleep: no TickTimer was started");
  return TickSleep(*detail::program_timer, detail::program_timer->ticks_for(d));
}

}  // namespace pollux
