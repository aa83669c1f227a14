// timeout(d, f) and timeout_at(t, f): f's output in a Result, or Elapsed
// when the deadline comes first (f is then destroyed, which cancels it:
// rule 5). The inner future is polled first, so a future that is ready
// at once never arms the timer (nor reads the clock), and one that finishes
// in time cancels it at once. The timer is the Sleep inside the Timeout, so
// nothing allocates. A void future gives Result<Unit, Elapsed>.
//
// timeout(d, f) gives f at least `d` from its first poll: futures are
// lazy, and a Timeout made early (in a vector for join_all, say) does not
// start timing before it starts running. Its clock starts when the driver
// next reads the time: before the thread sleeps, or within 61 tasks while
// it is busy. So arming reads no clock, and a timeout cancelled before
// then (the usual fate of a timeout) never costs one. timeout_at(t, f)
// ends exactly at `t`.
//
// It lives in time/ rather than future/ because it needs the driver, and
// future/ knows nothing of timers.
//
// Cancellation safety: that of f; dropping a Timeout drops f.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/result.hpp"
#include "pollux/time/elapsed.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {

/// What timeout(d, f) and timeout_at(t, f) return: f's output, or Elapsed
/// when the deadline comes first (f is then destroyed).
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] Timeout {
 public:
  using Output = Result<unit_if_void_t<output_t<F>>, Elapsed>;

  /// What timeout_at(deadline, f) makes.
  Timeout(F inner, Instant deadline) noexcept(std::is_nothrow_move_constructible_v<F>)
      : inner_(std::move(inner)), sleep_(std::in_place, deadline) {}
  /// What timeout(d, f) makes: the time counts from the first poll.
  Timeout(F inner, Duration from_first_poll) noexcept(std::is_nothrow_move_constructible_v<F>)
      : inner_(std::move(inner)), sleep_(std::in_place, Sleep::FromFirstPoll{}, from_first_poll) {}

  /// The inner future's output if Ready before the deadline, else Elapsed.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(Timeout, sleep_.has_value());
    if (auto result = poll_unit(inner_, cx); result.is_ready()) {
      sleep_.reset();  // unlinks the timer now, not when the Timeout goes
      return Poll<Output>(std::in_place, std::move(result).value());
    }
    if (sleep_->poll(cx).is_pending()) return pending;
    sleep_.reset();
    return Poll<Output>(std::in_place, Elapsed{});
  }

  /// timeout_at's deadline; nullopt for timeout(d, f), whose deadline the
  /// driver settles when it next reads the clock after the first poll.
  std::optional<Instant> deadline() const noexcept {
    if (!sleep_ || !sleep_->has_deadline()) return std::nullopt;
    return sleep_->deadline();
  }

 private:
  F inner_;
  std::optional<Sleep> sleep_;  // empty once Ready
};

/// `future`'s output, or Elapsed if `deadline` comes first.
template <Future F>
Timeout<F> timeout_at(Instant deadline, F future) {
  return Timeout<F>(std::move(future), deadline);
}

/// `future`'s output, or Elapsed if `d` passes first (counted from the
/// first poll).
template <Future F>
Timeout<F> timeout(Duration d, F future) {
  return Timeout<F>(std::move(future), d);
}

}  // namespace pollux
