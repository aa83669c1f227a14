// yield_now(): Pending once, after waking its own task, then Ready. The task
// goes to the back of its executor's queue, so others get a turn. This is
// the raw wake-requeue-poll path; it allocates nothing.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core/detail/contract.hpp"
#include "pollux/core/future.hpp"

namespace pollux {

/// What yield_now() returns: pending once, after waking its own task, then Ready.
class [[nodiscard("futures do nothing unless polled")]] YieldNow {
 public:
  using Output = void;

  /// Pending once, after waking itself, so the executor runs others first; then Ready.
  Poll<void> poll(Context & cx) {
    switch (state_) {
      case State::Start:
        state_ = State::Yielded;
        cx.waker().wake_by_ref();  // rule 2: we are the one who makes progress possible
        return pending;
      case State::Yielded:
        state_ = State::Done;
        return ready();
      case State::Done:
        break;
    }
    detail::polled_after_ready<YieldNow>();
  }

 private:
  enum class State { Start, Yielded, Done };
  State state_ = State::Start;
};

/// Pending once (after waking itself), then Ready: lets the executor run
/// other tasks first.
inline YieldNow yield_now() noexcept { return {}; }

}  // namespace pollux
