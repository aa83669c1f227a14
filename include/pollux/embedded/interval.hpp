// interval(period) in the embedded profile: a stream of ticks of the
// program's TickTimer, one every `period` (rounded up to whole ticks), the
// first at once. Deadlines advance by the period from the last due tick,
// so the ticks do not drift with the time the consumer takes; a consumer
// that falls behind gets the missed ticks at once, one per poll (the
// hosted Interval's Burst).
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20
#include "pollux/embedded/detail/profile.hpp"

#include <chrono>
#include <cstdint>
#include <optional>

#include "pollux/core/future.hpp"
#include "pollux/core/panic.hpp"
#include "pollux/embedded/sleep.hpp"
#include "pollux/embedded/tick_timer.hpp"

namespace pollux {

/// A stream of the tick counts at which each period came due.
class [[nodiscard("streams do nothing unless polled")]] TickInterval {
 public:
  /// The tick count of each period's due time.
  using Item = std::uint64_t;

  /// Ticks at `first` (a tick count of `timer`), then every `period_ticks`
  /// (at least 1).
  TickInterval(TickTimer & timer, std::uint64_t first, std::uint64_t period_ticks) noexcept
      : sleep_(timer, TickSleep::At{}, first), period_(period_ticks == 0 ? 1 : period_ticks) {}

  /// The next period's due tick, once it has come.
  Poll<std::uint64_t> poll_tick(Context & cx) noexcept {
    if (sleep_.poll(cx).is_pending()) return pending;
    std::uint64_t due = sleep_.deadline();
    sleep_.reset(due + period_);
    return Poll<std::uint64_t>(std::in_place, due);
  }

  /// A TickInterval never ends.
  Poll<std::optional<std::uint64_t>> poll_next(Context & cx) noexcept {
    Poll<std::uint64_t> tick = poll_tick(cx);
    if (tick.is_pending()) return pending;
    return Poll<std::optional<std::uint64_t>>(std::in_place, tick.value());
  }

  /// The ticks between two due times.
  std::uint64_t period() const noexcept { return period_; }

 private:
  TickSleep sleep_;
  std::uint64_t period_;
};

/// Ticks at once, then every `period` (rounded up to whole ticks of the
/// started TickTimer; at least one).
template <class Rep, class Period>
TickInterval interval(std::chrono::duration<Rep, Period> period) noexcept {
  if (detail::program_timer == nullptr) panic("pollux::interval: no TickTimer was started");
  TickTimer& timer = *detail::program_timer;
  return TickInterval(timer, timer.now(), timer.ticks_for(period));
}

}  // namespace pollux
