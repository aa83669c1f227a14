// Deadline: a time limit on one operation at a time, started when the
// operation starts and stopped when it completes: the read deadline of a
// frame (from its first byte until it is whole) and the write deadline of
// a flush (from the moment it first had to wait until it is done). It is
// the piece that Framed's set_read_deadline and set_write_deadline use,
// and that a hand-written connection future can hold itself.
//
// The timer is a Sleep inside it: nothing allocates. Starting an operation
// that is already running keeps its start, so a frame that arrives one
// byte at a time is timed from its first byte, not its last. Once started,
// it must not move (rule 4: its Sleep is linked by address).
#pragma once

#include "pollux/core/detail/cxx20.hpp"        // first: a clear error before C++20
#include "pollux/core/detail/hosted_only.hpp"  // not in the embedded profile

#include <optional>

#include "pollux/core/context.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/time/instant.hpp"
#include "pollux/time/sleep.hpp"

namespace pollux {

/// A limit on how long one operation may take, from start() to stop().
class Deadline {
 public:
  /// Operations of at most `limit` each.
  explicit Deadline(Duration limit) noexcept : limit_(limit) {}

  /// The limit.
  Duration limit() const noexcept { return limit_; }
  /// Whether an operation was started and not stopped.
  bool is_running() const noexcept { return timer_.has_value(); }

  /// An operation began now; a no-op while one is running, so it keeps
  /// its first start. Reads the driver's clock (NoRuntime outside one).
  void start() {
    if (!timer_) timer_.emplace(now() + limit_);
  }
  /// The operation completed in time: the timer is cancelled.
  void stop() noexcept { timer_.reset(); }

  /// Ready once the running operation has taken its limit; Pending while
  /// it has not (the waker of `cx` is woken when it does), and Pending,
  /// with no waker kept, while none runs.
  Poll<void> poll_expired(Context& cx) {
    if (!timer_) return pending;
    if (timer_->is_elapsed()) return ready();
    return timer_->poll(cx);
  }

 private:
  Duration limit_;
  std::optional<Sleep> timer_;  // while an operation runs
};

}  // namespace pollux
