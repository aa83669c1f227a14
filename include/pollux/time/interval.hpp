// Interval: a stream of ticks, one every `period`, the first at `start`
// (at once for interval(period)). Each item is the Instant the tick was due.
// It re-arms one Sleep inside itself, so ticking allocates nothing (rule 4:
// not moved after the first poll).
//
// When the consumer falls behind by a whole period or more, ticks were
// missed, and MissedTickBehavior says what comes next (tokio's three):
//  - Burst (default): the missed ticks come at once, one per poll, until
//    the schedule has caught up; the schedule itself never shifts.
//  - Delay: the next tick is one period after the late one; the schedule
//    shifts to the lateness.
//  - Skip: the missed ticks are dropped; the next tick is the next one on
//    the original schedule that is still ahead.
// Lateness under one period is not a missed tick: the schedule holds.
//
// Cancellation safety: dropping a poll_next loses no tick.
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>
#include <stdexcept>

#include "pollux/core/future.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {

/// What an Interval does after a consumer fell behind by a period or more
/// (see the header: Burst, Delay, Skip).
enum class MissedTickBehavior { Burst, Delay, Skip };

/// A stream of ticks, one every `period`, the first at `start` (at once for interval(period)).
class [[nodiscard("streams do nothing unless polled")]] Interval {
 public:
  using Item = Instant;

  /// Throws std::invalid_argument for a period that is not positive.
  Interval(Instant start, Duration period) : sleep_(start), period_(check(period)) {}

  /// The next tick's due time, once it has come.
  Poll<Instant> poll_tick(Context & cx) {
    if (sleep_.poll(cx).is_pending()) return pending;
    Instant due = sleep_.deadline();
    sleep_.reset(next_after(due, now()));
    return ready(due);
  }

  /// An Interval never ends.
  Poll<std::optional<Instant>> poll_next(Context & cx) {
    Poll<Instant> tick = poll_tick(cx);
    if (tick.is_pending()) return pending;
    return Poll<std::optional<Instant>>(std::in_place, std::move(tick).value());
  }

  /// Makes the next tick come one period from now.
  void reset() { sleep_.reset(detail::saturating_add(now(), period_)); }

  /// Chooses what comes after missed ticks (Burst by default).
  void set_missed_tick_behavior(MissedTickBehavior behavior) noexcept { behavior_ = behavior; }
  /// What comes after missed ticks.
  MissedTickBehavior missed_tick_behavior() const noexcept { return behavior_; }
  /// The time between ticks.
  Duration period() const noexcept { return period_; }

 private:
  static Duration check(Duration period) {
    if (period <= Duration::zero()) throw std::invalid_argument("pollux::Interval: the period must be positive");
    return period;
  }

  Instant next_after(Instant due, Instant now) const noexcept {
    Instant on_schedule = detail::saturating_add(due, period_);
    if (now < on_schedule) return on_schedule;  // late by less than a period: not a missed tick
    switch (behavior_) {
      case MissedTickBehavior::Burst:
        return on_schedule;
      case MissedTickBehavior::Delay:
        return detail::saturating_add(now, period_);
      case MissedTickBehavior::Skip:
        // The first tick of the original schedule strictly after now.
        return detail::saturating_add(due, period_ * ((now - due) / period_ + 1));
    }
    return on_schedule;
  }

  Sleep sleep_;
  Duration period_;
  MissedTickBehavior behavior_ = MissedTickBehavior::Burst;
};

/// Ticks at once, then every `period`.
inline Interval interval(Duration period) { return Interval(now(), period); }

/// Ticks at `start`, then every `period`.
inline Interval interval_at(Instant start, Duration period) { return Interval(start, period); }

}  // namespace pollux
