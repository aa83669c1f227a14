// timeout(d, f) in the embedded profile: f's output, or Elapsed when the
// program's TickTimer counts `d` first (f is then destroyed, rule 5). The
// same shape as the hosted timeout, over a TickSleep. (A base shared with
// the hosted Timeout cost that one 2 instructions per armed timeout, so
// the two stay apart.)
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <chrono>
#include <optional>
#include <utility>

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"
#include "pollux/core/result.hpp"
#include "pollux/embedded/sleep.hpp"
#include "pollux/time/elapsed.hpp"

namespace pollux {

/// What timeout(d, f) returns in the embedded profile.
template <Future F>
class [[nodiscard("futures do nothing unless polled")]] TickTimeout {
 public:
  /// f's output (Unit for a void f), or Elapsed.
  using Output = Result<unit_if_void_t<output_t<F>>, Elapsed>;

  /// What timeout(d, f) makes: the time counts from the first poll.
  TickTimeout(F inner, TickSleep sleep) noexcept(std::is_nothrow_move_constructible_v<F>)
      : inner_(std::move(inner)), sleep_(std::move(sleep)) {}

  /// The inner future's output if Ready before the deadline, else Elapsed.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(TickTimeout, sleep_.has_value());
    if (auto result = poll_unit(inner_, cx); result.is_ready()) {
      sleep_.reset();  // out of the timer's queue now, not when the TickTimeout goes
      return Poll<Output>(std::in_place, std::move(result).value());
    }
    if (sleep_->poll(cx).is_pending()) return pending;
    sleep_.reset();
    return Poll<Output>(std::in_place, Elapsed{});
  }

 private:
  F inner_;
  std::optional<TickSleep> sleep_;  // empty once Ready
};

/// `future`'s output, or Elapsed if `d` passes first (counted from the
/// first poll, in whole ticks of the started TickTimer).
template <class Rep, class Period, Future F>
TickTimeout<F> timeout(std::chrono::duration<Rep, Period> d, F future) {
  return TickTimeout<F>(std::move(future), sleep(d));
}

}  // namespace pollux
